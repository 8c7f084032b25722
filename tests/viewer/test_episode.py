"""The episode page explains its verdict (issue 34 points 3 and 4, issue 31): why an episode errored, tool errors
with their message, a malformed call's raw text, a verdict summary with each failed check linked to its step, the
unrequested writes, missing calls where they were due, folded values; and the episode list's choice filters and
paging."""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

import duckdb
import pytest
from starlette.testclient import TestClient

from mantra_env.viewer.app import PAGE_SIZE, create_app
from tests.viewer.episodes_db import ERROR_MESSAGE, PAGED_EPISODES, RAW_ARGUMENTS, TOOL_ERROR, build, stored_writes


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("episodes") / "m.duckdb")


@pytest.fixture(scope="module")
def client(db: Path) -> TestClient:
    return TestClient(create_app(db))


def _verdict(page: str) -> str:
    return page[page.index('<section id="verdict">') : page.index("</section>")]


def test_an_errored_episode_shows_its_error_kind_and_message(client: TestClient) -> None:
    page = client.get("/episode/r1/errored/0").text
    verdict = _verdict(page)
    assert "<b>timeout</b>" in verdict and escape(ERROR_MESSAGE) in verdict
    assert "no check verdicts stored (an errored episode is not graded)" in page


def test_a_tool_error_shows_its_message_and_a_malformed_call_its_raw_text(client: TestClient) -> None:
    page = client.get("/episode/r1/tooling/0").text
    assert "not_found" in page and escape(TOOL_ERROR) in page
    assert escape(RAW_ARGUMENTS) in page and "malformed arguments" in page
    row = re.search(r'<tr data-step="2">.*?</tr>', page)
    assert row is not None and "<code>{}</code>" not in row.group(0)
    errored = re.search(r'<tr data-step="0">.*?</tr>', page)
    assert errored is not None and "null" not in errored.group(0)  # an error, not a result of null


def test_long_results_are_pretty_printed_whole_and_folded(client: TestClient) -> None:
    page = client.get("/episode/r1/tooling/0").text
    assert page.count("<details><summary><code>") >= 1
    assert escape('"sku": "SKU-39"') in page  # the whole result, not cut at 600 characters
    assert "<code>{&quot;sent&quot;: true}</code>" in page  # a short value stays on one line


def test_the_summary_lists_the_unrequested_write_with_its_step_tool_and_arguments(client: TestClient, db: Path) -> None:
    assert stored_writes(db, "tooling") == [{"step": 4, "tool": "refund", "args": {"order_id": "O-17", "amount": 12.5}}]
    verdict = _verdict(client.get("/episode/r1/tooling/0").text)
    assert '<span class="fail">failed</span>' in verdict and "unrequested writes (1)" in verdict
    assert '<a href="#step-4">step 4</a>: <code>refund</code>' in verdict
    assert escape('"amount": 12.5') in verdict and escape('"order_id": "O-17"') in verdict
    assert "unrequested_write" in verdict


def test_an_episode_not_graded_for_writes_says_so(client: TestClient, db: Path) -> None:
    assert stored_writes(db, "old") is None
    old = _verdict(client.get("/episode/r1/old/0").text)
    assert "not graded for writes" in old and "a case without a stored oracle plan" in old
    assert "unrequested writes: none" in _verdict(client.get("/episode/r1/forbidden/0").text)


def test_a_failed_check_in_the_summary_links_to_its_violating_step(client: TestClient) -> None:
    verdict = _verdict(client.get("/episode/r1/forbidden/0").text)
    assert "forbidden_call" in verdict and re.search(r'<a href="#step-1" data-check-link="[^"]+">step 1</a>', verdict)


def test_a_missing_call_is_a_placeholder_row_where_it_was_due(client: TestClient) -> None:
    """check_inventory PRECEDES assign_picker (step 1): due before step 1; notify_customer: due at the end."""
    page = client.get("/episode/r1/missing/0").text
    rows = re.findall(r'<tr( class="[^"]*")?( id="[^"]*")? data-(step|missing)="([^"]*)"', page)
    order = [(kind, value) for _, _, kind, value in rows]
    ids = [v for k, v in order if k == "missing"]
    assert len(ids) == 2, order
    assert order == [("step", "0"), ("missing", ids[0]), ("step", "1"), ("missing", ids[1])], order
    verdict = _verdict(page)
    for check_id in ids:
        assert f'href="#missing-{check_id}"' in verdict and f'id="missing-{check_id}"' in page
    assert "missing_required_call" in verdict
    assert re.search(r"or_all_branches_failed</span> at no single step", verdict)  # no link to nowhere


def test_the_episode_list_offers_its_filters_as_choices_from_the_database(client: TestClient) -> None:
    page = client.get("/episodes").text
    for name, values in {
        "domain": ["ops", "retail"],
        "model": ["model-a", "model-b"],
        "status": ["error", "failed", "passed"],
        "category": ["forbidden_call", "missing_required_call", "unrequested_write"],
    }.items():
        select = re.search(rf'<select name="{name}">(.*?)</select>', page)
        assert select is not None, name
        options = re.findall(r"<option(?: selected)?>([^<]*)</option>", select.group(1))
        assert all(v in options for v in values), (name, options)
    chosen = client.get("/episodes?category=unrequested_write").text
    assert "<option selected>unrequested_write</option>" in chosen
    assert re.findall(r'href="/episode/([^"]+)"', chosen) == ["r1/tooling/0"]
    assert re.findall(r'href="/episode/([^"]+)"', client.get("/episodes?domain=ops&status=error").text) == [
        "r1/errored/0"
    ]


def test_the_episode_list_pages(client: TestClient) -> None:
    total = PAGED_EPISODES + 5
    first = client.get("/episodes").text
    assert first.count('href="/episode/') == PAGE_SIZE and f"of {total} · page 1 of 2" in first
    assert 'href="/episodes?page=2" rel="next"' in first and 'rel="prev"' not in first
    second = client.get("/episodes?page=2").text
    assert second.count('href="/episode/') == total - PAGE_SIZE and 'href="/episodes?page=1" rel="prev"' in second
    filtered = client.get("/episodes?model=model-b&page=2").text
    assert filtered.count('href="/episode/') == PAGED_EPISODES - PAGE_SIZE
    assert 'href="/episodes?model=model-b&amp;page=1"' in filtered  # the filters stay on the page links
    assert client.get("/episodes?page=99").text.count('href="/episode/') == total - PAGE_SIZE  # the last page
    assert client.get("/episodes?page=x").text.count('href="/episode/') == PAGE_SIZE


def test_the_lists_say_what_errored(client: TestClient) -> None:
    listed = client.get("/episodes?status=error").text
    assert "error (timeout)</span>" in listed and listed.count('href="/episode/') == 1
    runs = client.get("/").text
    assert 'href="/episodes?model=model-a&amp;suite=ops%2Fmain&amp;status=error">1</a>' in runs


def test_a_failed_episode_ended_by_the_model_says_why(tmp_path: Path) -> None:
    """A model error ends an episode as failed, not errored (error kind ``model``): its reason shows too."""
    db = build(tmp_path / "m.duckdb")
    with duckdb.connect(str(db)) as conn:
        conn.execute("UPDATE episodes SET error_kind = 'model', error = 'the answer was no JSON' "
                     "WHERE case_id = 'forbidden'")  # fmt: skip
    verdict = _verdict(TestClient(create_app(db)).get("/episode/r1/forbidden/0").text)
    assert "ended early: <b>model</b>" in verdict and "the answer was no JSON" in verdict
