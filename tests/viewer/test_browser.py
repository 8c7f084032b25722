"""The viewer in a real browser (Chromium): from the runs page to a failing episode of the write-first agent,
whose violated check points at the offending step, with the oracle's expected trace beside it."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from mantra_env.mantra_cli.run import main as run_main
from mantra_env.viewer.app import create_app
from tests.browser import assert_secured, browser, csp_messages, page, screenshot, serve  # noqa: F401 - fixtures
from tests.viewer.test_hostile import NAMES, PAYLOAD, _db, _set, _set_evidence

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
    violations = csp_messages(page)
    with serve(create_app(db, TOKEN)) as base:
        page.goto(f"{base}/?token={TOKEN}")
        assert "scripted:write-first" in page.content()
        screenshot(page, "viewer-runs")
        page.locator("td a").first.click()
        page.get_by_label("status").select_option("failed")
        page.get_by_role("button", name="filter").click()
        screenshot(page, "viewer-episodes")
        page.locator("td a[href*='/episode/']").first.click()
        violated = page.locator("[data-violating-step]").first
        step = violated.get_attribute("data-violating-step")
        assert step is not None
        row = page.locator(f'tr[data-step="{step}"]')
        assert row.get_attribute("class") == "violation"
        assert page.locator("summary", has_text="Expected (oracle) trace").count() == 1
        assert page.locator("#expected tr").count() > 1  # the oracle's calls
        screenshot(page, "viewer-episode")
    assert violations == []  # the pages work under their Content-Security-Policy


def test_n2_stored_markup_does_not_run_and_the_pages_work_under_the_csp(tmp_path: Path, page: Any) -> None:  # noqa: F811
    """Markup stored in a database file (evidence, a tool name, arguments, the final answer, run names) shows as
    text: no script runs, the app's own stylesheet loads, and the browser reports no CSP violation."""
    db = _db(tmp_path, {name: "ops/main" for name in NAMES})
    _set_evidence(db, {"matched": {"anchor": [PAYLOAD, 1]}, "violating_step": 1, "explanation": PAYLOAD})
    _set(db, "UPDATE steps SET tool = ? WHERE run_id = 'r1' AND case_id = 'c2'", PAYLOAD)
    _set(db, "UPDATE episodes SET final_answer = ? WHERE run_id = 'r1'", "<script>window.__pwned=1</script>")
    from playwright.sync_api import expect

    violations = csp_messages(page)
    with serve(create_app(db, TOKEN)) as base:
        assert_secured(page.goto(f"{base}/?token={TOKEN}"))
        assert page.evaluate("getComputedStyle(document.querySelector('table')).borderCollapse") == "collapse"
        assert_secured(page.goto(f"{base}/episode/r1/c2/0?token={TOKEN}"))
        assert page.title() == "Episode c2 #0" and page.evaluate("window.__pwned") is None
        assert page.get_by_text(PAYLOAD).count() >= 2  # shown as text: the tool name and the matched step
        assert page.locator("img").count() == 0
        for name in NAMES:  # every run name's episode link opens its episode (N5)
            page.goto(f"{base}/episodes?token={TOKEN}&run={quote(name, safe='')}")
            page.locator("td a[href*='/episode']").first.click()
            expect(page).to_have_title("Episode c1 #0")
            assert page.get_by_role("link", name=f"episodes of {name}").count() == 1
            assert page.evaluate("window.__pwned") is None
        screenshot(page, "viewer-hostile-run-name")
        assert_secured(page.goto(f"{base}/episode/x/y/{'9' * 5000}?token={TOKEN}"))
    assert violations == []


def test_the_csp_blocks_an_inline_script_and_the_test_sees_it(page: Any) -> None:  # noqa: F811
    """The check above is not vacuous: a page of the shared core that did hold inline script and style would have
    them blocked, and the console would say so."""

    async def leaky(request: Request) -> HTMLResponse:
        return HTMLResponse('<script>window.__pwned=1</script><p style="color:red" onclick="x()">x</p>')

    from mantra_env.webapp import local_app

    violations = csp_messages(page)
    with serve(local_app([Route("/", leaky)], "")) as base:
        page.goto(base)
        assert page.evaluate("window.__pwned") is None
    assert any("script-src" in v or "default-src" in v for v in violations), violations
