"""The viewer on a database file it did not write (issue 30, N2, N5, N10): stored markup is text, evidence of any
shape renders, a suite name is never a path, every run name opens its episode, and every response carries the
security headers."""

from __future__ import annotations

import json
import re
from html import escape, unescape
from pathlib import Path

import duckdb
import pytest
from starlette.testclient import TestClient

from mantra_env.domains import load_domain
from mantra_env.store import RolloutStore
from mantra_env.viewer.__main__ import main
from mantra_env.viewer.app import create_app
from mantra_env.webapp import SECURITY_HEADERS
from tests.graders.test_analysis import FORBIDDEN, GOOD
from tests.graders.test_leaderboard import add_run

PAYLOAD = '<img src=x onerror="window.__pwned=1">'
NAMES = ["plain", "a#b", "a/b", "a?b=c", "pct%2e%2e", "sp ace", "xss<script>window.__pwned=1</script>", "..", "."]


def _db(tmp_path: Path, runs: dict[str, str] | None = None) -> Path:
    """A store with run ``r1`` (case c1 passes, c2 violates a check at step 1) and one run per ``runs`` name."""
    db = tmp_path / "m.duckdb"
    with RolloutStore(db) as store:
        add_run(store, "r1", "model-a", {"c1": [GOOD], "c2": [FORBIDDEN]})
        for name, suite in (runs or {}).items():
            add_run(store, name, "model-b", {"c1": [GOOD]}, suite=suite)
    return db


def _set(db: Path, sql: str, *params: object) -> None:
    with duckdb.connect(str(db)) as conn:
        conn.execute(sql, list(params))


def _set_evidence(db: Path, evidence: object) -> None:
    _set(db, "UPDATE check_verdicts SET evidence = ? WHERE run_id = 'r1' AND case_id = 'c2'", json.dumps(evidence))


def test_n2_markup_stored_in_evidence_is_shown_as_text(tmp_path: Path) -> None:
    db = _db(tmp_path)
    _set_evidence(db, {"matched": {"anchor": [PAYLOAD, 1]}, "violating_step": 1, "explanation": PAYLOAD})
    _set(db, "UPDATE steps SET tool = ?, arguments = ? WHERE run_id = 'r1' AND case_id = 'c2'", PAYLOAD,
         json.dumps({"x": PAYLOAD}))  # fmt: skip
    _set(db, "UPDATE episodes SET final_answer = ? WHERE run_id = 'r1'", PAYLOAD)
    response = TestClient(create_app(db)).get("/episode/r1/c2/0")
    assert response.status_code == 200
    assert "<img" not in response.text and "&lt;img src=x onerror=" in response.text
    assert '<a href="#step-1">1</a>' in response.text  # the step number in the same list is still a link


@pytest.mark.parametrize(
    "evidence",
    [
        ["a", "list"],
        {"violating_step": "1e3"},
        {"violating_step": 1.5, "matched": ["not", "a", "dict"]},
        {"matched": {"anchor": "7", "target": [{"x": 1}], "other": None}},
        {"violating_step": True, "explanation": {"nested": 1}},
        {},
        "just a string",
        None,
    ],
)
def test_n2_evidence_of_an_unexpected_shape_renders_as_text(tmp_path: Path, evidence: object) -> None:
    db = _db(tmp_path)
    _set_evidence(db, evidence)
    response = TestClient(create_app(db)).get("/episode/r1/c2/0")
    assert response.status_code == 200 and "<h2>Checks</h2>" in response.text


def test_n2_unparseable_messages_render_as_text(tmp_path: Path) -> None:
    db = _db(tmp_path)
    _set(db, "UPDATE episodes SET messages = ? WHERE run_id = 'r1' AND case_id = 'c2'", json.dumps("<b>hi</b>"))
    response = TestClient(create_app(db)).get("/episode/r1/c2/0")
    assert response.status_code == 200 and "&lt;b&gt;hi&lt;/b&gt;" in response.text


def test_n2_a_stored_suite_name_is_never_read_as_a_path(tmp_path: Path) -> None:
    shipped = next(iter(load_domain("operations").suite_dirs.values()))
    db = _db(tmp_path, {"abs": "/etc/passwd", "dir": str(shipped), "up": "../../etc"})
    client = TestClient(create_app(db))
    for run in ("abs", "dir", "up"):
        page = client.get(f"/episode/{run}/c1/0").text
        assert "suite not found" in page and "<th>arguments</th></tr><tr>" not in page.split("Checks")[0]


def test_a_shipped_suite_name_still_shows_the_expected_trace(tmp_path: Path) -> None:
    name, folder = next(iter(load_domain("operations").suite_dirs.items()))
    case_id = json.loads((folder / "suite.jsonl").read_text(encoding="utf-8").splitlines()[0])["id"]
    db = tmp_path / "m.duckdb"
    with RolloutStore(db) as store:
        add_run(store, "ops", "model-a", {case_id: [GOOD]}, suite=f"operations/{name}")
    page = TestClient(create_app(db)).get(f"/episode/ops/{case_id}/0").text
    assert "suite not found" not in page and "cannot be loaded" not in page


@pytest.mark.parametrize("name", NAMES)
def test_n5_every_run_name_opens_its_episode(tmp_path: Path, name: str) -> None:
    client = TestClient(create_app(_db(tmp_path, {name: "ops/main"}), token="s3cret"))
    listing = client.get("/episodes", params={"run": name, "token": "s3cret"}).text
    (href,) = re.findall(r'href="(/episode[/?][^"]*)"', listing)
    page = client.get(unescape(href))
    assert page.status_code == 200, page.text
    assert "<title>Episode c1 #0</title>" in page.text and f"episodes of {escape(name)}</a>" in page.text
    back = re.search(r'href="(/episodes\?[^"]*)">episodes of', page.text)  # the link back lists this run only
    assert back is not None and len(re.findall(r'href="/episode[/?]', client.get(unescape(back.group(1))).text)) == 1


def test_n10_an_attempt_of_5000_digits_is_a_404_page(tmp_path: Path) -> None:
    client = TestClient(create_app(_db(tmp_path)))
    for path in ("/episode/x/y/" + "9" * 5000, "/episode/x/y/-1", "/episode/x/y/z/0", "/episode/r1/c2"):
        response = client.get(path)
        assert response.status_code == 404 and "no episode" in response.text, path


def test_n2_every_response_carries_the_security_headers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    client = TestClient(create_app(_db(tmp_path), token="s3cret"))
    pages = [("/?token=s3cret", 200), ("/", 403), ("/episode/r1/c2/0?token=s3cret", 200),
             ("/episode/no/c2/0?token=s3cret", 404), ("/nowhere", 404), ("/static/style.css", 200)]  # fmt: skip
    for path, status in pages:
        response = client.get(path)
        assert response.status_code == status, path
        for header, value in SECURITY_HEADERS.items():
            assert response.headers[header] == value, (path, header)
    assert client.post("/?token=s3cret").status_code == 405
    assert "Not found" in client.get("/nowhere").text  # a page, not Starlette's plain text
    assert "style-src 'self'" in SECURITY_HEADERS["content-security-policy"]
    assert "<style" not in client.get("/?token=s3cret").text and " style=" not in client.get("/?token=s3cret").text


def test_n2_an_unexpected_error_is_a_page_without_the_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import mantra_env.viewer.app

    def broken(*args: object) -> object:
        raise RuntimeError("secret detail")

    monkeypatch.setattr(mantra_env.viewer.app, "_expected_trace", broken)
    response = TestClient(create_app(_db(tmp_path))).get("/episode/r1/c2/0")
    assert response.status_code == 500 and response.headers["x-frame-options"] == "DENY"
    assert "secret detail" not in response.text and "Traceback" not in response.text
    assert "failed to show this page" in response.text
    assert "secret detail" in caplog.text  # logged for whoever runs the app


@pytest.mark.parametrize("port", ["99999", "-1", "abc", "0"])
def test_n10_a_port_out_of_range_is_one_line(
    tmp_path: Path, port: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: None)  # never serve, whatever happens
    with pytest.raises(SystemExit) as exit_:
        main(["--db", str(_db(tmp_path)), "--port", port])
    assert exit_.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "argument --port" in error and "from 1 to 65535" in error


@pytest.mark.parametrize(("host", "warned"), [("0.0.0.0", True), ("192.168.1.5", True), ("::", True),
                                              ("127.0.0.1", False), ("localhost", False), ("::1", False)])  # fmt: skip
def test_n10_serving_beyond_loopback_warns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], host: str, warned: bool
) -> None:
    import uvicorn

    served: list[str] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, host, port, log_level: served.append(host))
    assert main(["--db", str(_db(tmp_path)), "--host", host]) == 0
    assert served == [host]
    err = capsys.readouterr().err
    assert ("plain HTTP" in err and "readable by anyone on the network" in err) is warned


@pytest.mark.parametrize(
    "writes",
    [
        "just a string",
        {"step": 1},
        [1, "x", None, {"step": "1e3", "tool": PAYLOAD, "args": {"x": PAYLOAD}}, {"step": True}],
        [{"step": 1, "tool": ["not", "text"], "args": "not an object"}],
    ],
)
def test_unrequested_writes_of_an_unexpected_shape_render_as_text(tmp_path: Path, writes: object) -> None:
    """Issue 31's column read from a file made elsewhere: every entry is shown, as text, and nothing runs."""
    db = _db(tmp_path)
    _set(db, "UPDATE episodes SET unrequested_writes = ? WHERE run_id = 'r1' AND case_id = 'c2'", json.dumps(writes))
    response = TestClient(create_app(db)).get("/episode/r1/c2/0")
    assert response.status_code == 200 and "unrequested writes (" in response.text
    assert "<img" not in response.text
