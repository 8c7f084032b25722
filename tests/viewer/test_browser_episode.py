"""The episode page and list in Chromium at 1280x800 (issue 34 points 3, 4; issue 31): the error page, a failed
check's link landing on its step or on its missing call's placeholder, the unrequested write in the summary, a
short episode within two screens, and the list's choice filters and paging, all under the security headers."""

from __future__ import annotations

from typing import Any

import pytest

from mantra_env.viewer.app import PAGE_SIZE, create_app
from tests.browser import assert_secured, browser, csp_messages, page, screenshot, serve  # noqa: F401 - fixtures
from tests.viewer.episodes_db import ERROR_MESSAGE, PAGED_EPISODES, TOOL_ERROR, build

pytestmark = [pytest.mark.browser, pytest.mark.slow]
TOKEN = "viewer-token"
TWO_SCREENS_PX = 1700


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Any:
    db = build(tmp_path_factory.mktemp("browser") / "m.duckdb")
    with serve(create_app(db, TOKEN)) as url:
        yield url


def _height(page: Any) -> int:  # noqa: F811
    return int(page.evaluate("document.documentElement.scrollHeight"))


def test_the_error_page_says_why_the_episode_errored(base: str, page: Any) -> None:  # noqa: F811
    violations = csp_messages(page)
    assert_secured(page.goto(f"{base}/episode/r1/errored/0?token={TOKEN}"))
    error = page.locator("#episode-error")
    assert error.is_visible() and "timeout" in error.inner_text()
    assert page.locator("#verdict pre").inner_text() == ERROR_MESSAGE
    screenshot(page, "viewer-error-episode")
    assert violations == []


def test_a_failed_checks_link_lands_on_its_step(base: str, page: Any) -> None:  # noqa: F811
    from playwright.sync_api import expect

    violations = csp_messages(page)
    page.goto(f"{base}/episode/r1/forbidden/0?token={TOKEN}")
    assert _height(page) < TWO_SCREENS_PX  # a four-step episode fits two screens
    screenshot(page, "viewer-failed-check")
    page.locator("#verdict [data-check-link]").first.click()
    assert page.url.endswith("#step-1")
    assert page.evaluate("document.querySelector(':target').id") == "step-1"
    expect(page.locator('tr[data-step="1"]')).to_be_in_viewport()
    assert page.locator('tr[data-step="1"]').get_attribute("class") == "violation"
    assert violations == []


def test_a_missing_calls_link_lands_on_its_placeholder(base: str, page: Any) -> None:  # noqa: F811
    from playwright.sync_api import expect

    page.goto(f"{base}/episode/r1/missing/0?token={TOKEN}")
    links = page.locator("#verdict a", has_text="missing call")
    assert links.count() == 2
    links.first.click()
    target = page.locator(":target")
    assert target.get_attribute("data-missing") is not None and "missing call" in target.inner_text()
    expect(target).to_be_in_viewport()
    screenshot(page, "viewer-missing-call")


def test_the_summary_shows_the_unrequested_write_and_values_unfold(base: str, page: Any) -> None:  # noqa: F811
    violations = csp_messages(page)
    page.goto(f"{base}/episode/r1/tooling/0?token={TOKEN}")
    summary = page.locator("#verdict")
    assert "unrequested writes (1)" in summary.inner_text() and "refund" in summary.inner_text()
    assert page.locator("#verdict li[data-unrequested-step='4'] a").get_attribute("href") == "#step-4"
    assert TOOL_ERROR in page.locator('tr[data-step="0"]').inner_text()
    folded_height = _height(page)
    assert folded_height < TWO_SCREENS_PX
    screenshot(page, "viewer-unrequested-write")
    result = page.locator('tr[data-step="1"] details')
    assert not result.locator("pre").is_visible()
    result.locator("summary").click()
    assert result.locator("pre").is_visible() and "SKU-39" in result.locator("pre").inner_text()
    assert _height(page) > folded_height
    width = page.evaluate("document.querySelector('tr[data-step=\"1\"] td:nth-child(4)').offsetWidth")
    assert width > 300, width  # the result column is wide enough to read
    screenshot(page, "viewer-result-unfolded")
    assert violations == []


def test_the_list_filters_by_choices_and_pages(base: str, page: Any) -> None:  # noqa: F811
    from playwright.sync_api import expect

    violations = csp_messages(page)
    page.goto(f"{base}/episodes?token={TOKEN}")
    rows = page.locator("td a[href*='/episode/']")
    expect(rows).to_have_count(PAGE_SIZE)
    page.get_by_role("link", name="next").first.click()
    expect(rows).to_have_count(PAGED_EPISODES + 5 - PAGE_SIZE)
    page.get_by_label("domain").select_option("ops")
    page.get_by_label("category").select_option("unrequested_write")
    page.get_by_role("button", name="filter").click()
    expect(rows).to_have_count(1)
    assert rows.first.inner_text() == "tooling"
    assert "token=" in page.url  # the token stays on the filtered page
    screenshot(page, "viewer-episodes-filtered")
    page.get_by_label("category").select_option("")
    page.get_by_label("status").select_option("failed")
    page.get_by_role("button", name="filter").click()
    expect(rows).to_have_count(4)
    assert sorted(rows.all_inner_texts()) == ["forbidden", "missing", "old", "tooling"]
    page.goto(f"{base}/episodes?token={TOKEN}")
    screenshot(page, "viewer-episodes-page-1")
    assert violations == []
