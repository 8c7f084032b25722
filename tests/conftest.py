"""Shared fixtures."""

import os
from pathlib import Path

import pytest

from tests.helpers_rollouts import run_scripted

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # tests run offline: never fetch litellm's price list


@pytest.fixture(scope="session")
def scripted_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scripted agents on the operations starter suite (3 attempts each), run once per test session and
    shared read-only by the report and notebook tests."""
    path = tmp_path_factory.mktemp("scripted") / "mantra.duckdb"
    run_scripted(path)
    return path
