"""A finished ops-mini run in which one case ends awaiting a human: s000-3 keeps its generated check
``delivery_before_po``, which the backward audit flags (the manual does not order delivery options before the
purchase order) and which, in the recorded run, a judge removed; here no judge did (as in
tests/generators/test_validation.py)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from mantra_env.case import CaseCheck
from mantra_env.generators.artifacts import SampleValidation
from mantra_env.generators.config import load_config
from mantra_env.generators.pipeline import run_pipeline
from mantra_env.generators.rundir import RunDir
from tests.browser import browser, page  # noqa: F401 - the browser fixtures of test_browser.py

FIXTURE = Path(__file__).parents[1] / "fixtures" / "ops-mini"


def in_thread(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``function`` in a worker thread: the pipeline runs its own event loop, which cannot start inside
    Playwright's (the browser tests share the session)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(function, *args, **kwargs).result()


GENERATED = yaml.safe_load((FIXTURE / "responses.yaml").read_text())["responses"]["check_generation/s000-3#0"]


@pytest.fixture(scope="session")
def _finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("review") / "run"
    in_thread(run_pipeline, load_config(FIXTURE / "config.yaml"), run_dir)
    RunDir(run_dir).write_json("run.json", {"config_path": str(FIXTURE / "config.yaml")})
    path = run_dir / "validation" / "s000.json"
    validation = SampleValidation.model_validate_json(path.read_text(encoding="utf-8"))
    checks = [CaseCheck(id=c["id"], check=c["check"]) for c in GENERATED["checks"]]
    assert "delivery_before_po" in [c.id for c in checks]
    awaiting = {"status": "awaiting_human", "backward": "conflict", "reason": "backward conflict", "checks": checks}
    outcomes = [o.model_copy(update=awaiting) if o.scenario_id == "s000-3" else o for o in validation.outcomes]
    broken = validation.model_copy(update={"outcomes": outcomes})
    path.write_text(broken.model_dump_json(indent=2), encoding="utf-8")
    return run_dir


@pytest.fixture
def run_dir(_finished: Path, tmp_path: Path) -> Path:
    """A fresh copy of the run for each test."""
    copy = tmp_path / "run"
    shutil.copytree(_finished, copy)
    return copy
