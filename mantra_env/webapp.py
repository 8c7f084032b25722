"""What the two local web apps (the run viewer and the review app) share: the page skeleton, security headers on
every response, an error page instead of a traceback, URL path segments that survive any text, and the checks of
their ``--host`` and ``--port`` options.

Both apps show text from files they did not write (a rollout database, a run directory): every page escapes it,
and the Content-Security-Policy below is the second line of defence: no inline script, handler or style runs,
only the app's own stylesheet loads, and no other site may frame the page or receive its address (which carries
the session token) as a referrer.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
from collections.abc import Sequence
from html import escape
from typing import Any
from urllib.parse import quote, unquote

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

STYLESHEET = "/static/style.css"
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
}
LOOPBACK_NAMES = ("localhost",)
_log = logging.getLogger(__name__)


class Html(str):
    """Text that is already HTML (built by the app from escaped parts); any other value is escaped when shown."""

    __slots__ = ()


def text(value: Any) -> str:
    """``value`` as HTML: an :class:`Html` as it is, anything else (``None`` as nothing) escaped as text."""
    if isinstance(value, Html):
        return value
    return escape("" if value is None else str(value))


def page(title: str, body: str, status: int = 200, refresh: int | None = None) -> HTMLResponse:
    """A page of the app: ``title`` (text) as its title and heading, then ``body`` (HTML), styled by the app's
    stylesheet; ``refresh``: reload it after so many seconds (a meta element: no script, which the CSP forbids)."""
    reload = f'<meta http-equiv="refresh" content="{int(refresh)}">' if refresh is not None else ""
    html = (
        f'<!doctype html><meta charset=utf-8>{reload}<title>{escape(title)}</title><link rel="stylesheet" '
        f'href="{STYLESHEET}"><h1>{escape(title)}</h1>{body}'
    )
    return HTMLResponse(html, status_code=status)


def segment(value: object) -> str:
    """``value`` as one URL path segment: every character but letters, digits and ``-._~`` percent-encoded, so
    that ``#``, ``?``, ``/`` and ``%`` in a name stay part of it."""
    return quote(str(value), safe="")


def raw_segments(request: Request) -> list[str]:
    """The request's path segments, each decoded on its own (Starlette's ``path`` decodes ``%2F`` into a ``/``
    that no longer tells segments apart); a leading empty segment is dropped."""
    raw = request.scope.get("raw_path")
    path = raw.decode("latin-1").partition("?")[0] if isinstance(raw, bytes) else quote(request.url.path)
    return [unquote(part, errors="replace") for part in path.split("/")[1:]]


def _error_page(status: int, detail: str) -> HTMLResponse:
    titles = {404: "Not found", 405: "Method not allowed"}
    return page(titles.get(status, f"Error {status}"), f"<p>{escape(detail)}</p>", status)


async def _http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    detail = "no such page: start from the address the command printed" if error.status_code == 404 else error.detail
    return _error_page(error.status_code, detail)


class SecurityHeaders:
    """ASGI middleware: the :data:`SECURITY_HEADERS` on every response (pages, errors and redirects alike), and
    for an exception no handler caught, an error page (logged with its traceback, which the page never shows)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_secured(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = [(k, v) for k, v in message.get("headers", []) if k.decode("latin-1").lower()
                           not in SECURITY_HEADERS]  # fmt: skip
                headers += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in SECURITY_HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_secured)
        except Exception:
            _log.exception("%s %s failed", scope.get("method", ""), scope.get("path", ""))
            if started:  # part of the response is sent: the server can only drop the connection
                raise
            response = _error_page(
                500, "the app failed to show this page (the terminal running it has the details): reload, or report it"
            )
            await response(scope, receive, send_secured)


def local_app(routes: Sequence[BaseRoute], css: str) -> Starlette:
    """A Starlette app of ``routes`` plus the stylesheet ``css`` (at :data:`STYLESHEET`), with the security
    headers and error pages of this module."""

    async def stylesheet(request: Request) -> Response:
        return Response(css, media_type="text/css")

    return Starlette(
        routes=[*routes, Route(STYLESHEET, stylesheet)],
        middleware=[Middleware(SecurityHeaders)],
        exception_handlers={HTTPException: _http_error},
    )


def port_number(value: str) -> int:
    """An ``argparse`` type: a TCP port, 1 to 65535."""
    try:
        port = int(value)
    except ValueError:
        port = -1
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port: give a whole number from 1 to 65535")
    return port


def is_loopback(host: str) -> bool:
    """Whether ``host`` names only this machine (``localhost``, ``127.0.0.1`` and the rest of 127/8, ``::1``)."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def exposure_warning(host: str, program: str) -> str | None:
    """The warning to print before serving on ``host`` if that reaches beyond this machine, else ``None``."""
    if is_loopback(host):
        return None
    return (
        f"{program}: warning: serving on {host} lets other machines reach this app; its session token travels "
        "in plain HTTP (no TLS), readable by anyone on the network between you and it. Serve on 127.0.0.1 (the "
        "default) unless you trust that network"
    )
