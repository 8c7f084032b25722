"""The review app's background solver: the POST returns at once, the case page shows the running query and a
Cancel button and reloads itself; Cancel kills the child; a result for an older revision is discarded; other
pages answer meanwhile."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from mantra_env.generators.review.app import create_app
from mantra_env.generators.review.run import ReviewRun
from mantra_env.generators.review.solving import SolveTarget, solve_in_child
from tests.generators.review.solvers import GATE, alive, crash, gated, hang, wait_for

TOKEN = "t0k3n"
CASE = "/case/s000/s000-3"
ORIGIN = {"Origin": "http://127.0.0.1:8080"}


def _client(run_dir: Path, solver: SolveTarget) -> TestClient:
    return TestClient(create_app(ReviewRun(run_dir), TOKEN, "alice", solver), base_url="http://127.0.0.1:8080")


def _post(client: TestClient, verb: str, revision: int = 0, **fields: str) -> int:
    data = {"token": TOKEN, "revision": str(revision), **fields}
    return client.post(f"{CASE}/{verb}", data=data, headers=ORIGIN, follow_redirects=False).status_code


def _case(client: TestClient) -> str:
    return str(client.get(f"{CASE}?token={TOKEN}").text)


def test_the_solve_runs_in_the_background_and_cancel_kills_it(run_dir: Path) -> None:
    client = _client(run_dir, hang)
    started = time.monotonic()
    assert _post(client, "solve") == 303
    assert time.monotonic() - started < 30  # returned without waiting for a solve that never ends
    page = wait_for(client, CASE, TOKEN, "running: hanging on purpose in pid")
    pid = int(re.findall(r"in pid (\d+)", page)[0])
    assert re.search(r"solving… \(started \d\d:\d\d:\d\d, \d+ s;", page)
    assert '<meta http-equiv="refresh" content="2">' in page and ">Cancel</button>" in page
    assert "Re-run the solver" not in page
    assert client.get(f"/?token={TOKEN}").status_code == 200  # the index answers meanwhile
    assert alive(pid)
    assert _post(client, "cancel") == 303
    page = _case(client)
    assert 'data-solve="cancelled"' in page and "was cancelled after" in page
    assert "http-equiv" not in page and "Re-run the solver" in page
    assert not alive(pid)  # killed and reaped


def test_one_solve_per_case_at_a_time(run_dir: Path) -> None:
    client = _client(run_dir, hang)
    assert _post(client, "solve") == 303
    pid = re.findall(r"in pid (\d+)", wait_for(client, CASE, TOKEN, "hanging on purpose in pid"))[0]
    assert _post(client, "solve") == 303  # the running solve goes on; no second one starts
    assert re.findall(r"in pid (\d+)", _case(client)) == [pid]
    _post(client, "cancel")
    assert not alive(int(pid))


def test_a_result_for_an_older_revision_is_discarded(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = tmp_path / "gate"
    monkeypatch.setenv(GATE, str(gate))
    client = _client(run_dir, gated)
    assert _post(client, "solve") == 303
    wait_for(client, CASE, TOKEN, "waiting for the gate")
    assert _post(client, "goal", goal="(= closed true)") == 303  # the review moves to revision 1
    assert "this result will be discarded" in _case(client)
    gate.touch()
    page = wait_for(client, CASE, TOKEN, 'data-solve="discarded"')
    assert "computed for revision 0, and the case is now at revision 1" in page
    assert "data-verdict" not in page  # the old result is not shown as the current case's


def test_the_real_solver_in_a_child_reports_its_verdict(run_dir: Path) -> None:
    client = _client(run_dir, solve_in_child)
    assert _post(client, "solve") == 303
    assert 'data-verdict="not-clean"' in wait_for(client, CASE, TOKEN, "data-verdict")
    assert _post(client, "goal", goal="(= closed true)") == 303  # a result already shown is not "discarded" later
    assert "discarded" not in _case(client)


def test_a_child_that_dies_without_a_result_says_so(run_dir: Path) -> None:
    client = _client(run_dir, crash)
    assert _post(client, "solve") == 303
    page = wait_for(client, CASE, TOKEN, "ended without a result")
    assert "exit code 3" in page and "Re-run the solver" in page and "http-equiv" not in page
