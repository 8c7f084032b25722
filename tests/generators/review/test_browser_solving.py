"""The review app's background solver in a real browser (Chromium, under the security headers): the case page
reloads itself until the result is there while the index loads in another tab; Cancel kills the child; a result
for an older revision is discarded. Screenshots: review-solving, review-solved, review-cancelled,
review-discarded."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from mantra_env.generators.review.app import create_app
from mantra_env.generators.review.run import ReviewRun
from tests.browser import csp_messages, screenshot, serve
from tests.generators.review.solvers import GATE, alive, gated, hang

pytestmark = [pytest.mark.browser, pytest.mark.slow]
TOKEN = "browser-token"
CASE = "/case/s000/s000-3"
WAIT = 120_000  # ms: a spawned child starts in seconds, more on a loaded machine


def test_the_solve_runs_in_the_background_while_the_index_loads(
    browser: Any, run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = tmp_path / "gate"
    monkeypatch.setenv(GATE, str(gate))
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    case, index = context.new_page(), context.new_page()
    violations = csp_messages(case)
    with serve(create_app(ReviewRun(run_dir), TOKEN, "alice", gated)) as base:
        case.goto(f"{base}{CASE}?token={TOKEN}")
        case.get_by_role("button", name="Re-run the solver").click()
        case.wait_for_selector("text=running: waiting for the gate", timeout=WAIT)
        assert case.get_by_role("button", name="Cancel").count() == 1
        screenshot(case, "review-solving")
        index.goto(f"{base}/?token={TOKEN}")  # the solve still runs (the gate is closed)
        assert index.get_by_role("link", name="s000-3").count() == 1
        assert not gate.exists()
        gate.touch()
        case.wait_for_selector('[data-verdict="not-clean"]', timeout=WAIT)  # no click: the page reloaded itself
        screenshot(case, "review-solved")
    assert violations == []
    context.close()


def test_cancel_kills_a_solve_that_would_hang(page: Any, run_dir: Path) -> None:
    violations = csp_messages(page)
    with serve(create_app(ReviewRun(run_dir), TOKEN, "alice", hang)) as base:
        page.goto(f"{base}{CASE}?token={TOKEN}")
        page.get_by_role("button", name="Re-run the solver").click()
        page.wait_for_selector("text=hanging on purpose in pid", timeout=WAIT)
        pid = int(re.findall(r"in pid (\d+)", page.content())[0])
        assert alive(pid)
        page.get_by_role("button", name="Cancel").click()
        page.wait_for_selector('[data-solve="cancelled"]', timeout=WAIT)
        assert "was cancelled after" in page.locator('[data-solve="cancelled"]').inner_text()
        assert not alive(pid)
        screenshot(page, "review-cancelled")
    assert violations == []


def test_a_result_for_an_older_revision_is_discarded(
    browser: Any, run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = tmp_path / "gate"
    monkeypatch.setenv(GATE, str(gate))
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    solving, editing = context.new_page(), context.new_page()
    with serve(create_app(ReviewRun(run_dir), TOKEN, "alice", gated)) as base:
        solving.goto(f"{base}{CASE}?token={TOKEN}")
        solving.get_by_role("button", name="Re-run the solver").click()
        solving.wait_for_selector("text=running: waiting for the gate", timeout=WAIT)
        editing.goto(f"{base}{CASE}?token={TOKEN}")
        editing.get_by_label("goal").fill("(= closed true)")
        editing.get_by_role("button", name="Set goal").click()
        editing.wait_for_selector("text=revision 1")
        solving.wait_for_selector("text=this result will be discarded", timeout=WAIT)
        gate.touch()
        solving.wait_for_selector('[data-solve="discarded"]', timeout=WAIT)
        assert "computed for revision 0" in solving.locator('[data-solve="discarded"]').inner_text()
        assert solving.locator("[data-verdict]").count() == 0
        screenshot(solving, "review-discarded")
    context.close()
