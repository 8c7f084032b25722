"""Shared fixtures."""

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers_rollouts import run_scripted

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # tests run offline: never fetch litellm's price list

# No test may depend on the machine's speed: hypothesis's per-example deadline (200 ms) and its too-slow health
# check fail property tests on a loaded machine, so both are off for every test (set here, before the test
# modules' own @settings, which inherit it).
settings.register_profile("mantra-tests", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("mantra-tests")


@pytest.fixture(scope="session")
def scripted_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scripted agents on the operations starter suite (3 attempts each), run once per test session and
    shared read-only by the report and notebook tests."""
    path = tmp_path_factory.mktemp("scripted") / "mantra.duckdb"
    run_scripted(path)
    return path


# Under pytest-xdist (`make test` runs on every core) the tests of one file run on one worker, so a file's module
# and session fixtures are built once (tests/ray's one Ray above all); the per-case sweeps over the shipped suites
# are the exception, spread test by test over the workers (each worker makes one env per suite).
SPREAD_FILES = frozenset({"tests/env/test_suites.py", "tests/corpus/test_corpus.py"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("xdist"):
        return
    root = config.rootpath
    for item in items:
        module = item.path.relative_to(root).as_posix()
        if module not in SPREAD_FILES:
            item.add_marker(pytest.mark.xdist_group(module))
    items[:] = slow_files_first(items)


def slow_files_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """The files with the most slow-marked tests first, the others after, each file's tests in their order.

    The workers take groups in this order (`make test` passes --no-loadscope-reorder; xdist's own reorder puts the
    files with fewest tests last, which are the one-test files of a minute or two, so one worker ran them while
    the other waited). Longest first keeps both workers busy to the end."""
    slow_in: dict[Path, int] = {}
    for item in items:
        slow_in[item.path] = slow_in.get(item.path, 0) + (item.get_closest_marker("slow") is not None)
    return sorted(items, key=lambda item: -slow_in[item.path])  # stable: files and tests keep their order
