"""The viewer in a real browser (Chromium): from the runs page to a failing episode of the write-first agent,
whose violated check points at the offending step, with the oracle's expected trace beside it."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from mantra_cli.run import main as run_main
from tests.browser import browser, page, screenshot, serve  # noqa: F401 - fixtures
from viewer.app import create_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]
TOKEN = "viewer-token"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("viewer") / "m.duckdb"
    argv = ["--model", "scripted:write-first", "--suite", "operations", "--attempts", "1", "--db", str(path)]
    with ThreadPoolExecutor(1) as pool:  # the run's own event loop cannot start inside Playwright's
        assert pool.submit(run_main, argv).result() == 0
    return path


def test_a_failing_episode_shows_its_violation_at_the_step(db: Path, page: Any) -> None:  # noqa: F811
    with serve(create_app(db, TOKEN)) as base:
        page.goto(f"{base}/?token={TOKEN}")
        assert "scripted:write-first" in page.content()
        screenshot(page, "viewer-runs")
        page.locator("td a").first.click()
        page.get_by_label("status").fill("failed")
        page.get_by_role("button", name="filter").click()
        screenshot(page, "viewer-episodes")
        page.locator("td a[href*='/episode/']").first.click()
        violated = page.locator("[data-violating-step]").first
        step = violated.get_attribute("data-violating-step")
        assert step is not None
        row = page.locator(f'tr[data-step="{step}"]')
        assert row.get_attribute("class") == "violation"
        assert page.locator("h2", has_text="Expected (oracle) trace").count() == 1
        assert page.locator("section").nth(1).locator("tr").count() > 1  # the oracle's calls
        screenshot(page, "viewer-episode")
