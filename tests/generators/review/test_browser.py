"""The review app in a real browser (Chromium): resolve the awaiting case, re-validate, accept, re-export and
find it in the suite; an invalid edit changes no file; a stale tab is refused. Screenshots of each page go to
results/screenshots/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mantra_env.case import load_suite
from mantra_env.generators.config import load_config
from mantra_env.generators.pipeline import run_pipeline
from mantra_env.generators.review.app import create_app
from mantra_env.generators.review.run import ReviewRun
from mantra_env.generators.review.state import review_path
from tests.browser import assert_secured, csp_messages, screenshot, serve
from tests.generators.review.conftest import FIXTURE, in_thread

pytestmark = [pytest.mark.browser, pytest.mark.slow]
TOKEN = "browser-token"


def test_review_resolve_accept_export(page: Any, run_dir: Path) -> None:
    violations = csp_messages(page)
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
    assert violations == []  # the whole flow works under the Content-Security-Policy

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


def test_n2_stored_markup_does_not_run_and_the_pages_work_under_the_csp(page: Any, run_dir: Path) -> None:
    """A scenario prompt holding markup (model output) shows as text under the app's security headers; the app's
    own stylesheet and forms work with no CSP violation."""
    path = run_dir / "scenarios" / "s000.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    payload = '<img src=x onerror="window.__pwned=1"><script>document.title="pwned"</script>'
    data["scenarios"][2]["draft"]["prompt"] = payload
    path.write_text(json.dumps(data), encoding="utf-8")
    violations = csp_messages(page)
    from playwright.sync_api import expect

    with serve(create_app(ReviewRun(run_dir), TOKEN, "alice")) as base:
        assert_secured(page.goto(f"{base}/?token={TOKEN}"))
        with page.expect_response(lambda r: "/case/" in r.url) as case_response:
            page.get_by_role("link", name="s000-3").click()
        assert_secured(case_response.value)
        expect(page).to_have_title("Case s000-3")
        assert page.evaluate("window.__pwned") is None
        assert page.get_by_text(payload).count() == 1 and page.locator("img").count() == 0
        assert page.evaluate("getComputedStyle(document.querySelector('.cols')).display") == "grid"  # the stylesheet
        with page.expect_response(lambda r: r.request.method == "POST") as posted:
            page.get_by_role("button", name="Re-run the solver").click()
        assert posted.value.status == 303
        assert_secured(posted.value)
        page.wait_for_selector('[data-verdict="not-clean"]')
        assert_secured(page.goto(f"{base}/case/nope/s000-3?token={TOKEN}"))
        expect(page).to_have_title("Not found")
    assert violations == []
