"""Browser tests: Debian's Chromium driven by Playwright, and a local server for an ASGI app.

Playwright's own browser download is not reachable offline, so the tests launch the system Chromium
(``apt-get install chromium``; ``make`` installs it when run as root). Without it a browser test is skipped with
that message, except where ``MANTRA_BROWSER_REQUIRED=1`` (``make test``, CI), where it fails.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Without the background-networking flags Chromium keeps trying to reach Google's hosts on a closed network.
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
SCREENSHOTS = Path(__file__).parents[1] / "results" / "screenshots"
VIEWPORT = {"width": 1280, "height": 800}


def _require_browser() -> None:
    missing = not Path(CHROMIUM).exists()
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing = True
    if missing:
        message = "needs Debian's Chromium and playwright: sudo apt-get install chromium; pip install -e '.[dev]'"
        if os.environ.get("MANTRA_BROWSER_REQUIRED") == "1":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")  # not longer: while Playwright runs, no other code may start an event loop
def browser() -> Iterator[Any]:
    _require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=VIEWPORT)
    yield context.new_page()
    context.close()


def screenshot(page: Any, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """Serve an ASGI app on a free loopback port in a thread; yields its base URL once it accepts connections."""
    import uvicorn

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:  # readiness is the server's own flag, not a guessed sleep
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def csp_messages(page: Any) -> list[str]:
    """A list that fills with the page's console messages about the Content-Security-Policy (a blocked script,
    handler or style): the app's own pages must produce none."""
    found: list[str] = []

    def seen(message: Any) -> None:
        if "Content Security Policy" in message.text:
            found.append(message.text)

    page.on("console", seen)
    return found


def assert_secured(response: Any) -> None:
    """The security headers of :mod:`mantra_env.webapp` are on ``response`` (a Playwright response)."""
    from mantra_env.webapp import SECURITY_HEADERS

    headers = response.all_headers()
    for name, value in SECURITY_HEADERS.items():
        assert headers.get(name) == value, (response.url, name, headers.get(name))
