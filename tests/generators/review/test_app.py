"""The review app over HTTP: the token and same-origin rules, an edit that resolves the awaiting case, errors
that change nothing, a stale tab refused, and model output shown as text."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from mantra_env.generators.review.app import create_app
from mantra_env.generators.review.run import ReviewRun
from mantra_env.generators.review.state import load_review, review_path
from tests.generators.review.solvers import wait_for

TOKEN = "t0k3n"
CASE = "/case/s000/s000-3"


@pytest.fixture
def client(run_dir: Path) -> TestClient:
    return TestClient(create_app(ReviewRun(run_dir), TOKEN, "alice"), base_url="http://127.0.0.1:8080")


def _post(client: TestClient, verb: str, revision: int = 0, **fields: str) -> Any:
    data = {"token": TOKEN, "revision": str(revision), **fields}
    return client.post(f"{CASE}/{verb}", data=data, headers={"Origin": "http://127.0.0.1:8080"}, follow_redirects=False)


def test_every_page_needs_the_token(client: TestClient) -> None:
    assert client.get("/").status_code == 403
    assert client.get(f"{CASE}?token=wrong").status_code == 403
    listing = client.get(f"/?token={TOKEN}")
    assert listing.status_code == 200
    assert re.search(r'<tr data-status="awaiting_human"><td>s000</td><td><a href="[^"]+">s000-3</a>', listing.text)
    response = client.post(f"{CASE}/decide", data={"revision": "0", "status": "accepted"})
    assert response.status_code == 403


def test_changes_only_from_the_apps_own_origin(client: TestClient, run_dir: Path) -> None:
    data = {"token": TOKEN, "revision": "0", "status": "accepted", "reason": ""}
    for headers in ({"Origin": "http://evil.example"}, {"Host": "evil.example:8080"}):
        assert client.post(f"{CASE}/decide", data=data, headers=headers).status_code == 403
    assert not review_path(run_dir, "s000").exists()


def test_resolve_revalidate_and_accept(client: TestClient, run_dir: Path) -> None:
    page = client.get(f"{CASE}?token={TOKEN}").text
    assert "delivery_before_po" in page and "awaiting_human" in page
    assert _post(client, "solve").status_code == 303
    assert 'data-verdict="not-clean"' in wait_for(client, CASE, TOKEN, "data-verdict")
    done = _post(client, "edit", kind="remove_check", id="delivery_before_po", reason="4.2 sets no order")
    assert done.status_code == 303
    _post(client, "solve", revision=1)
    page = wait_for(client, CASE, TOKEN, "data-verdict")
    assert 'data-verdict="clean"' in page and "check:delivery_before_po" in page
    _post(client, "decide", revision=1, status="accepted", reason="")
    review = load_review(run_dir, "s000")
    assert review is not None and review.decisions["s000-3"].who == "alice" and review.revision == 2
    assert "accepted by alice" in client.get(f"/?token={TOKEN}").text


@pytest.mark.parametrize(
    ("action", "fields", "message"),
    [
        ("edit", {"kind": "add_check", "check": "CALL no_such_tool()"}, "no_such_tool"),
        (
            "edit",
            {
                "kind": "condition",
                "change": "replace_condition",
                "tool": "check_inventory",
                "section": "pre",
                "index": "x",
                "expr": "true",
            },
            "give the index",
        ),
        ("edit", {"kind": "json", "edits": '[{"op": "remove_var", "name": "ghost"}]'}, "ghost"),
        ("edit", {"kind": "json", "edits": "{not json"}, "not JSON"),
        ("goal", {"goal": "(= ghost true)"}, "does not type-check"),
        ("initial", {"name": "picked", "value": "maybe"}, "not JSON"),
        ("decide", {"status": "rejected", "reason": ""}, "say why"),
    ],
)
def test_an_invalid_change_is_shown_and_writes_nothing(
    client: TestClient, run_dir: Path, action: str, fields: dict[str, str], message: str
) -> None:
    response = _post(client, action, 0, **fields)
    assert response.status_code == 422
    assert message in response.text
    assert not review_path(run_dir, "s000").exists()


def test_a_stale_tab_is_refused(client: TestClient, run_dir: Path) -> None:
    _post(client, "goal", goal="(= closed true)")  # the first tab saves revision 1
    before = review_path(run_dir, "s000").read_bytes()
    response = _post(client, "decide", revision=0, status="accepted", reason="")  # the second tab read revision 0
    assert response.status_code == 409 and "was changed since this page was loaded" in response.text
    assert review_path(run_dir, "s000").read_bytes() == before


def test_model_output_is_shown_as_text(client: TestClient, run_dir: Path) -> None:
    path = run_dir / "scenarios" / "s000.json"
    data = json.loads(path.read_text())
    data["scenarios"][2]["draft"]["prompt"] = "<script>alert(1)</script> please"
    path.write_text(json.dumps(data))
    page = client.get(f"{CASE}?token={TOKEN}").text
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; please" in page
