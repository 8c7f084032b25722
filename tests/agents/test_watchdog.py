"""D8: the bundled model server dies with the process that started it, however that process ends.

The server machinery (``mantra_env.agents.local_server.serve`` and ``mantra_env.agents.watchdog``) runs here with a tiny
fake server (a stdlib HTTP server answering ``/v1/models``), so no model is needed. A parent process starts it under
``mantra_env.cli.run_command`` (as every CLI does), says through a pipe that the server answers, and is then
signalled; the test waits for the server's pid to disappear with a bounded poll.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mantra_env.agents.local_server import free_port

ROOT = Path(__file__).parents[2]

FAKE_SERVER = textwrap.dedent(
    """
    import http.server, os, pathlib, sys

    port, pid_file = int(sys.argv[1]), pathlib.Path(sys.argv[2])
    pid_file.write_text(str(os.getpid()))

    class Models(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"data": []}')

    http.server.HTTPServer(("127.0.0.1", port), Models).serve_forever()
    """
)

PARENT = textwrap.dedent(
    """
    import signal, sys
    from pathlib import Path
    from mantra_env.agents.local_server import serve
    from mantra_env.cli import run_command

    # As in a terminal, whatever the test runner ignores; run_command then installs its own handlers.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    port, work = int(sys.argv[1]), Path(sys.argv[2])

    def body():
        command = [sys.executable, str(work / "fake_server.py"), str(port), str(work / "server.pid")]
        with serve(command, port=port, log_path=work / "logs" / "server.log") as server:
            print(server.process.pid, (work / "server.pid").read_text(), flush=True)  # ready: the server answers
            sys.stdin.read()  # the test never writes: the parent waits here until it is signalled
        return 0

    raise SystemExit(run_command(body, "interrupted"))
    """
)


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie, exited but not yet reaped, is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # no /proc (not Linux): kill(pid, 0) said it exists; or it just went (the next poll sees it)
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _gone(pid: int, bound_s: float = 60.0) -> bool:
    """Poll until ``pid`` is gone; False if it is still there after ``bound_s`` (a bound, not a wait that should
    suffice: a passing run returns as soon as the process is gone)."""
    deadline = time.monotonic() + bound_s
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _start_parent(work: Path) -> tuple[subprocess.Popen[str], int, int]:
    (work / "fake_server.py").write_text(FAKE_SERVER)
    (work / "parent.py").write_text(PARENT)
    parent = subprocess.Popen(
        [sys.executable, str(work / "parent.py"), str(free_port()), str(work)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT,
    )  # fmt: skip
    assert parent.stdout is not None and parent.stderr is not None
    ready = parent.stdout.readline()
    if not ready:  # the parent failed before the server answered: show why
        parent.wait()
        pytest.fail(f"the parent exited with {parent.returncode} before the server answered:\n{parent.stderr.read()}")
    watchdog_pid, server_pid = map(int, ready.split())
    assert _alive(watchdog_pid) and _alive(server_pid)
    return parent, watchdog_pid, server_pid


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_d8_the_server_dies_with_its_parent(tmp_path: Path, signum: signal.Signals) -> None:
    parent, watchdog_pid, server_pid = _start_parent(tmp_path)
    parent.send_signal(signum)
    _, stderr = parent.communicate(timeout=120)
    # SIGKILL leaves the parent no say; the others take run_command's way out, which runs the cleanup.
    assert parent.returncode == (-signal.SIGKILL if signum == signal.SIGKILL else 128 + signum), stderr
    assert "Traceback" not in stderr
    assert _gone(server_pid), f"the server (pid {server_pid}) outlived its parent ({signum.name})"
    assert _gone(watchdog_pid), f"the watchdog (pid {watchdog_pid}) outlived its parent ({signum.name})"
    assert (tmp_path / "logs" / "server.log").is_file()


def test_d8_the_watchdog_stops_its_command_when_its_stdin_closes() -> None:
    command = [sys.executable, "-c", "import os, sys, time; print(os.getpid(), flush=True); time.sleep(600)"]
    watchdog = subprocess.Popen(
        [sys.executable, "-m", "mantra_env.agents.watchdog", *command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=ROOT,
    )
    assert watchdog.stdin is not None and watchdog.stdout is not None
    child = int(watchdog.stdout.readline())
    assert _alive(child)
    watchdog.stdin.close()
    assert watchdog.wait(timeout=60) == 128 + signal.SIGTERM
    assert _gone(child)


def test_d8_the_watchdog_exits_with_its_commands_exit_code() -> None:
    watchdog = subprocess.Popen(
        [sys.executable, "-m", "mantra_env.agents.watchdog", sys.executable, "-c", "raise SystemExit(3)"],
        stdin=subprocess.PIPE, cwd=ROOT,
    )  # fmt: skip
    try:
        assert watchdog.wait(timeout=60) == 3  # its stdin is still open: the command ended by itself
    finally:
        assert watchdog.stdin is not None
        watchdog.stdin.close()


def test_d8_the_watchdog_needs_a_command() -> None:
    finished = subprocess.run(
        [sys.executable, "-m", "mantra_env.agents.watchdog"], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert finished.returncode == 2 and "usage" in finished.stderr
