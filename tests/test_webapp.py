"""The web apps' shared core (mantra_env/webapp.py) and the text depth check of mantra_env/limits.py."""

from __future__ import annotations

import argparse
import json

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from mantra_env.limits import MAX_DEPTH, json_text_too_deep
from mantra_env.webapp import (
    SECURITY_HEADERS,
    Html,
    exposure_warning,
    is_loopback,
    local_app,
    port_number,
    raw_segments,
    segment,
    text,
)

NAMES = ["plain", "a#b", "a/b", "a?b=c", "pct%2e%2e", "sp ace", "xss<script>", "ü€", "a+b&c=d;e"]


@pytest.mark.parametrize(
    ("value", "deep"),
    [
        ("[" * (MAX_DEPTH + 1), True),
        ("[" * MAX_DEPTH + "]" * MAX_DEPTH, False),
        (json.dumps({"a": "[" * 1000}), False),  # brackets in a string do not nest
        (json.dumps(['\\"' + "[" * 1000]), False),  # nor after an escaped quote
        ("[" * 10 + "]" * 10 + "{" * 60 + "}" * 60, False),  # siblings add no depth
        ('{"a": ' * 100_000, True),
    ],
)
def test_json_text_too_deep(value: str, deep: bool) -> None:
    assert json_text_too_deep(value) is deep


def test_text_escapes_all_but_html() -> None:
    assert text("<b>") == "&lt;b&gt;" and text(None) == "" and text(3) == "3" and text(Html("<b>")) == "<b>"


@pytest.mark.parametrize("name", NAMES)
def test_n5_a_segment_comes_back_as_it_went(name: str) -> None:
    seen: list[list[str]] = []

    async def echo(request: Request) -> PlainTextResponse:
        seen.append(raw_segments(request))
        return PlainTextResponse("ok")

    client = TestClient(Starlette(routes=[Route("/x/{rest:path}", echo)]))
    assert client.get(f"/x/{segment(name)}/{segment('second')}?q=1").status_code == 200
    assert seen == [["x", name, "second"]]


def test_local_app_serves_its_stylesheet_with_the_headers() -> None:
    response = TestClient(local_app([], "body{color:red}")).get("/static/style.css")
    assert response.text == "body{color:red}" and response.headers["content-type"].startswith("text/css")
    assert all(response.headers[k] == v for k, v in SECURITY_HEADERS.items())


@pytest.mark.parametrize("value", ["0", "65536", "99999", "-1", "abc", "1.5", ""])
def test_port_number_refuses(value: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="from 1 to 65535"):
        port_number(value)


def test_port_number_accepts() -> None:
    assert port_number("1") == 1 and port_number("65535") == 65535


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "LOCALHOST", "::1", "[::1]"])
def test_loopback_hosts_are_not_warned(host: str) -> None:
    assert is_loopback(host) and exposure_warning(host, "x") is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.1", "example.com", ""])
def test_other_hosts_are_warned(host: str) -> None:
    warning = exposure_warning(host, "mantra view")
    assert warning is not None and warning.startswith("mantra view: warning:") and "plain HTTP" in warning
