"""HTTP tests of the viewer's pages and filters against a filled store file."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from mantra_env.store import RolloutStore
from mantra_env.viewer.__main__ import main
from mantra_env.viewer.app import create_app
from tests.graders.test_analysis import FORBIDDEN, GOOD
from tests.graders.test_leaderboard import add_run


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    db = tmp_path / "m.duckdb"
    with RolloutStore(db) as store:
        add_run(store, "r1", "model-a", {"c1": [GOOD], "c2": [FORBIDDEN]})
        add_run(store, "r2", "model-b", {"c1": [FORBIDDEN]}, suite="ops/other")
    return TestClient(create_app(db))


def test_runs_page_shows_the_leaderboards_scores(client: TestClient) -> None:
    page = client.get("/").text
    assert "model-a" in page and "model-b" in page
    assert "<td>50.0 [" in page  # Pass@1 with its interval, in the one format (mantra_env.graders.intervals)


def test_episode_filters(client: TestClient) -> None:
    assert client.get("/episodes").text.count("/episode/") == 3
    assert client.get("/episodes?model=model-b").text.count("/episode/") == 1
    assert client.get("/episodes?suite=ops/main&case=c1").text.count("/episode/") == 1
    assert client.get("/episodes?status=passed").text.count("/episode/r1/c1/0") == 1
    assert client.get("/episodes?domain=ops").text.count("/episode/") == 3
    assert client.get("/episodes?domain=op").text.count("/episode/") == 0  # a domain is a whole name
    forbidden = client.get("/episodes?category=forbidden_call").text
    assert forbidden.count("/episode/") == 2 and "/episode/r1/c1/0" not in forbidden


def test_a_violated_check_points_at_its_step(client: TestClient) -> None:
    page = client.get("/episode/r1/c2/0").text
    assert 'class="violation" data-step="1"' in page and 'data-violating-step="1"' in page
    assert '<span id="step-1">1</span>' in page
    assert "suite not found: ops/main" in page  # the expected trace, when the suite is unknown


def test_a_token_guards_every_page(tmp_path: Path) -> None:
    db = tmp_path / "m.duckdb"
    with RolloutStore(db) as store:
        add_run(store, "r1", "model-a", {"c1": [GOOD]})
    guarded = TestClient(create_app(db, token="s3cret"))
    for path in ("/", "/episodes", "/episode/r1/c1/0"):
        assert guarded.get(path).status_code == 403
        assert guarded.get(f"{path}?token=s3cret").status_code == 200
    assert 'href="/episodes?token=s3cret&amp;run=r1"' in guarded.get("/?token=s3cret").text


def test_episode_page_shows_steps_and_checks(client: TestClient) -> None:
    page = client.get("/episode/r1/c1/0")
    assert page.status_code == 200 and "Tool calls" in page.text and "Checks" in page.text


def test_unknown_episode_is_a_clear_404(client: TestClient) -> None:
    page = client.get("/episode/nope/c1/0")
    assert page.status_code == 404 and "no episode" in page.text


def test_missing_db_is_a_clear_cli_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(tmp_path / "missing.duckdb")]) == 2
    assert "mantra view:" in capsys.readouterr().err
