"""A process that runs one command and ends it when its own standard input closes.

``python -m mantra_env.agents.watchdog COMMAND...`` starts ``COMMAND`` and waits. Its stdin is a pipe from the process
that started it, which never writes to it: the pipe closes when that parent exits in any way, SIGKILL included, and the
watchdog then stops the command (SIGTERM, SIGKILL after :data:`GRACE_S`) and exits. SIGTERM, SIGINT and SIGHUP
of the watchdog itself do the same. This is how the bundled model server dies with the runner everywhere: a
process group does not survive SIGKILL of its leader, and a parent-death signal (``prctl``) is Linux-only.

It exits with the command's exit code (negative signal numbers as ``128 + n``). Standard library only, so that
it starts in milliseconds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from types import FrameType

GRACE_S = 10.0  # how long the command gets to shut down after SIGTERM before it is killed
SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name))


def _drain(fd: int, stop: threading.Event) -> None:
    """Read ``fd`` until end of file (the parent is gone or let go), then ask for the stop."""
    try:
        while os.read(fd, 4096):
            pass
    except OSError:  # a closed or broken descriptor means the same as end of file
        pass
    stop.set()


def _stopper(child: subprocess.Popen[bytes], stop: threading.Event, exited: threading.Event) -> None:
    stop.wait()
    if exited.is_set():
        return
    child.terminate()
    if not exited.wait(GRACE_S):
        child.kill()


def watch(command: list[str]) -> int:
    """Run ``command`` until it exits or the stop comes (stdin closed, or a signal); returns its exit code."""
    stop, exited = threading.Event(), threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()  # the stopper thread acts: a handler must not wait on the child the main thread waits on

    for signum in SIGNALS:  # before the child exists, so that no signal can leave it behind
        signal.signal(signum, on_signal)
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL)
    threading.Thread(target=_drain, args=(sys.stdin.fileno(), stop), daemon=True).start()
    threading.Thread(target=_stopper, args=(child, stop, exited), daemon=True).start()
    code = child.wait()
    exited.set()
    return code if code >= 0 else 128 - code


def main(argv: list[str] | None = None) -> int:
    command = sys.argv[1:] if argv is None else argv
    if not command:
        print("usage: python -m mantra_env.agents.watchdog COMMAND [ARGS...]", file=sys.stderr)
        return 2
    return watch(command)


if __name__ == "__main__":
    raise SystemExit(main())
