"""Helpers of the review app's solver tests: solver targets a spawned child can import (one that hangs, one that
waits for a gate file named by the environment the child inherits), and a wait for the case page's result."""

from __future__ import annotations

import os
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from mantra_env.generators.review.solving import SolveTask, solve_in_child

GATE = "MANTRA_TEST_SOLVE_GATE"


def alive(pid: int) -> bool:
    """Whether ``pid`` names a process (a child not reaped yet counts: a cancelled solve must be reaped too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def hang(task: SolveTask, pipe: Connection) -> None:
    pipe.send(("phase", f"hanging on purpose in pid {os.getpid()}"))
    time.sleep(600)


def gated(task: SolveTask, pipe: Connection) -> None:
    pipe.send(("phase", "waiting for the gate"))
    gate, deadline = Path(os.environ[GATE]), time.monotonic() + 120
    while not gate.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    solve_in_child(task, pipe)


def wait_for(client: Any, case: str, token: str, marker: str, timeout: float = 120) -> str:
    """The case page ``case`` once it holds ``marker`` (a spawned child takes a second or two to start; the
    timeout is for a loaded machine)."""
    deadline = time.monotonic() + timeout
    while marker not in (page := str(client.get(f"{case}?token={token}").text)):
        assert time.monotonic() < deadline, f"{marker!r} never appeared; the page says: {page[-800:]}"
        time.sleep(0.1)
    return page


def crash(task: SolveTask, pipe: Connection) -> None:
    os._exit(3)  # as if killed from outside: no report, no clean exit
