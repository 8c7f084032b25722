"""The review app in a real browser (Chromium): resolve the awaiting case, re-validate, accept, re-export and
find it in the suite; an invalid edit changes no file; a stale tab is refused. Screenshots of each page go to
results/screenshots/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generators.config import load_config
from generators.pipeline import run_pipeline
from generators.review.app import create_app
from generators.review.run import ReviewRun
from generators.review.state import review_path
from mantra_env.case import load_suite
from tests.browser import screenshot, serve
from tests.generators.review.conftest import FIXTURE, in_thread

pytestmark = [pytest.mark.browser, pytest.mark.slow]
TOKEN = "browser-token"


def test_review_resolve_accept_export(page: Any, run_dir: Path) -> None:
    with serve(create_app(ReviewRun(run_dir), TOKEN, "alice")) as base:
        page.goto(f"{base}/?token={TOKEN}")
        screenshot(page, "review-index")
        page.get_by_role("link", name="s000-3").click()
        page.get_by_role("button", name="Re-run the solver").click()
        page.wait_for_selector('[data-verdict="not-clean"]')
        screenshot(page, "review-case-conflict")

        # an invalid edit shows its error and writes nothing
        page.get_by_label("new check").fill("CALL no_such_tool()")
        page.get_by_role("button", name="Add check").click()
        page.wait_for_selector("[role=alert]")
        assert "no_such_tool" in page.locator("[role=alert]").inner_text()
        assert not review_path(run_dir, "s000").exists()

        remove = page.locator("form", has=page.get_by_role("button", name="Remove check"))
        remove.locator("select").select_option("delivery_before_po")
        remove.get_by_role("button", name="Remove check").click()
        page.get_by_role("button", name="Re-run the solver").click()
        page.wait_for_selector('[data-verdict="clean"]')
        screenshot(page, "review-case-resolved")
        page.get_by_role("button", name="Accept").click()
        assert "accepted by alice" in page.locator("[data-case-status]").inner_text()

    result = in_thread(run_pipeline, load_config(FIXTURE / "config.yaml"), run_dir, from_stage="export")
    assert result.suite_dir is not None
    case = next(c for c in load_suite(result.suite_dir).cases if c.id.endswith("s000-3"))
    assert case.validation.reviewer == "alice"


def test_a_stale_tab_cannot_overwrite(browser: Any, run_dir: Path) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    first, second = context.new_page(), context.new_page()
    with serve(create_app(ReviewRun(run_dir), TOKEN, "alice")) as base:
        for tab in (first, second):
            tab.goto(f"{base}/case/s000/s000-3?token={TOKEN}")
        first.get_by_label("goal").fill("(= closed true)")
        first.get_by_role("button", name="Set goal").click()
        first.wait_for_selector("text=revision 1")
        saved = review_path(run_dir, "s000").read_bytes()
        second.get_by_label("rejection reason").fill("not in the manual")
        second.get_by_role("button", name="Reject").click()
        second.wait_for_selector("[role=alert]")
        assert "was changed since this page was loaded" in second.locator("[role=alert]").inner_text()
        screenshot(second, "review-stale-tab")
    assert review_path(run_dir, "s000").read_bytes() == saved
    context.close()
