"""The review app on a careless user's mistakes (issue 30, N3, N10): unknown ids, a review file that does not
parse and JSON nested too deep are pages with the right status, never a 500; an unexpected exception is an
error page without its traceback; the token of a POST comes from its form; the solver does not stop other pages;
every response carries the security headers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from mantra_env.generators.review.__main__ import main
from mantra_env.generators.review.app import create_app
from mantra_env.generators.review.run import ReviewRun
from mantra_env.generators.review.state import review_path
from mantra_env.webapp import SECURITY_HEADERS
from tests.browser import serve
from tests.generators.review.solvers import hang, wait_for

TOKEN = "t0k3n"
CASE = "/case/s000/s000-3"
ORIGIN = {"Origin": "http://127.0.0.1:8080"}


@pytest.fixture
def client(run_dir: Path) -> TestClient:
    return TestClient(create_app(ReviewRun(run_dir), TOKEN, "alice"), base_url="http://127.0.0.1:8080")


def _post(client: TestClient, path: str, **fields: str) -> Any:
    data = {"token": TOKEN, "revision": "0", **fields}
    return client.post(path, data=data, headers=ORIGIN, follow_redirects=False)


@pytest.mark.parametrize("path", ["/case/nope/s000-3", "/case/%2E%2E/s000-3", "/case/..../s000-3", "/case/s000/nope"])
def test_n3_an_unknown_sample_or_case_is_a_404_page(client: TestClient, run_dir: Path, path: str) -> None:
    response = client.get(f"{path}?token={TOKEN}")
    assert response.status_code == 404 and "<h1>Not found</h1>" in response.text
    for verb, fields in (("decide", {"status": "accepted", "reason": ""}), ("solve", {})):
        posted = _post(client, f"{path}/{verb}", **fields)
        assert posted.status_code == 404 and "<h1>Not found</h1>" in posted.text
    assert not (run_dir / "review").exists()


def test_n3_a_review_file_that_does_not_parse_is_a_409_naming_it(client: TestClient, run_dir: Path) -> None:
    path = review_path(run_dir, "s000")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"sample_id": "s000", "revis', encoding="utf-8")
    index = client.get(f"/?token={TOKEN}")
    assert index.status_code == 409 and str(path) in index.text and "move it away" in index.text
    page = client.get(f"{CASE}?token={TOKEN}")
    assert page.status_code == 409 and str(path) in page.text and "move it away" in page.text
    posted = _post(client, f"{CASE}/decide", status="accepted", reason="")
    assert posted.status_code == 409 and str(path) in posted.text
    assert path.read_text(encoding="utf-8") == '{"sample_id": "s000", "revis'  # nothing lost or overwritten


@pytest.mark.parametrize(
    ("action", "fields"),
    [
        ("edit", {"kind": "json", "edits": "[" * 100_000}),
        ("edit", {"kind": "json", "edits": '[{"op": "add_check", "check": ' + "{" * 5000 + "}" * 5000 + "}]"}),
        ("initial", {"name": "picked", "value": "[" * 100_000}),
    ],
)
def test_n3_json_nested_too_deep_is_a_422(
    client: TestClient, run_dir: Path, action: str, fields: dict[str, str]
) -> None:
    response = _post(client, f"{CASE}/{action}", **fields)
    assert response.status_code == 422 and "nests more than 64 levels deep" in response.text
    assert not review_path(run_dir, "s000").exists()


def test_n3_an_unexpected_exception_is_an_error_page_without_its_traceback(
    run_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    run = ReviewRun(run_dir)

    def broken() -> list[str]:
        raise RuntimeError("secret detail")

    run.sample_ids = broken  # type: ignore[method-assign]
    response = TestClient(create_app(run, TOKEN, "alice")).get(f"/?token={TOKEN}")
    assert response.status_code == 500 and response.headers["content-security-policy"]
    assert "secret detail" not in response.text and "Traceback" not in response.text
    assert "secret detail" in caplog.text


def test_n10_a_post_takes_the_token_from_its_form_only(client: TestClient, run_dir: Path) -> None:
    data = {"revision": "0", "status": "accepted", "reason": ""}
    response = client.post(f"{CASE}/decide?token={TOKEN}", data=data, headers=ORIGIN, follow_redirects=False)
    assert response.status_code == 403
    assert not review_path(run_dir, "s000").exists()
    assert _post(client, f"{CASE}/decide", status="accepted", reason="").status_code == 303


def test_n2_every_response_carries_the_security_headers(client: TestClient) -> None:
    responses = [
        client.get(f"/?token={TOKEN}"),
        client.get(f"{CASE}?token={TOKEN}"),
        client.get("/"),
        client.get("/nowhere"),
        client.get("/static/style.css"),
        _post(client, f"{CASE}/decide", status="accepted", reason=""),  # a redirect
        _post(client, f"{CASE}/decide", status="accepted", reason=""),  # a stale page: 409
    ]
    assert [r.status_code for r in responses] == [200, 200, 403, 404, 200, 303, 409]
    for response in responses:
        for header, value in SECURITY_HEADERS.items():
            assert response.headers[header] == value
    page = responses[1].text
    assert "<style" not in page and " style=" not in page and "<script" not in page and " on" + "click" not in page


def test_n10_the_solver_does_not_block_other_pages(run_dir: Path) -> None:
    """Over a real server: the POST returns at once while its child hangs, the index answers meanwhile, and
    Cancel ends the child."""
    with serve(create_app(ReviewRun(run_dir), TOKEN, "alice", hang)) as base:
        data, origin = {"token": TOKEN, "revision": "0"}, {"Origin": base}
        pressed = httpx.post(f"{base}{CASE}/solve", data=data, headers=origin, timeout=60)
        assert pressed.status_code == 303
        with httpx.Client(base_url=base, timeout=20) as client:
            wait_for(client, CASE, TOKEN, "hanging on purpose")
            assert client.get(f"/?token={TOKEN}").status_code == 200  # the child still hangs
            assert httpx.post(f"{base}{CASE}/cancel", data=data, headers=origin, timeout=60).status_code == 303
            assert "was cancelled after" in client.get(f"{CASE}?token={TOKEN}").text


@pytest.mark.parametrize("port", ["99999", "-1", "abc"])
def test_n10_a_port_out_of_range_is_one_line(
    run_dir: Path, port: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: None)  # never serve, whatever happens
    with pytest.raises(SystemExit) as exit_:
        main([str(run_dir), "--port", port])
    assert exit_.value.code == 2
    assert "argument --port" in capsys.readouterr().err.strip().splitlines()[-1]


def test_n10_serving_beyond_loopback_warns(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: None)
    assert main([str(run_dir), "--host", "0.0.0.0", "--reviewer", "alice"]) == 0
    assert "readable by anyone on the network" in capsys.readouterr().err
    assert main([str(run_dir), "--reviewer", "alice"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_n2_a_browsers_form_post_under_no_referrer_is_same_origin_by_sec_fetch_site(
    client: TestClient, run_dir: Path
) -> None:
    """Chromium sends ``Origin: null`` for a form POST from a page with ``Referrer-Policy: no-referrer``; the
    forbidden-to-scripts ``Sec-Fetch-Site`` header then decides."""
    data = {"token": TOKEN, "revision": "0", "status": "accepted", "reason": ""}
    for headers in ({"Origin": "null"}, {"Origin": "null", "Sec-Fetch-Site": "cross-site"},
                    {"Origin": "http://127.0.0.1:8080", "Sec-Fetch-Site": "same-site"}):  # fmt: skip
        assert client.post(f"{CASE}/decide", data=data, headers=headers).status_code == 403
    assert not review_path(run_dir, "s000").exists()
    same = {"Origin": "null", "Sec-Fetch-Site": "same-origin"}
    assert client.post(f"{CASE}/decide", data=data, headers=same, follow_redirects=False).status_code == 303
