"""What every command-line entry point does with errors: a :class:`~mantra_env.errors.MantraError` is one line
``error: ...`` on stderr and exit code 2, never a traceback; Ctrl-C is exit code 130 with a line saying what was
kept and how to continue. SIGTERM and SIGHUP (``timeout``, ``docker stop``, CI cancellation, a closed terminal)
take the same way out, so that ``finally`` blocks and context managers run (the bundled model server is stopped,
the store is closed), with exit code 128 + the signal's number. Output piped into a reader that stops early
(``| head``) ends the command quietly with exit code 141, as a shell tool would, instead of a traceback."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from types import FrameType

from mantra_env.errors import MantraError

_INVOKED_AS: ContextVar[str | None] = ContextVar("invoked_as", default=None)

BROKEN_PIPE = 13
"""SIGPIPE's number on every POSIX system (the ``signal`` module lacks it on Windows)."""
CLEANUP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


def program_name(module: str) -> str:
    """The name a command's ``--help`` shows: ``mantra <verb>`` when the ``mantra`` command runs it (see
    :func:`invoked_as`), ``python -m <module>`` otherwise."""
    return _INVOKED_AS.get() or f"python -m {module}"


def command_parser(module: str, description: str | None, *examples: str) -> argparse.ArgumentParser:
    """The parser of ``python -m <module>`` (and of its ``mantra`` verb): named by :func:`program_name`, the
    description as written, and ``examples`` listed after the options, each what follows the program's name."""
    epilog = "examples:\n" + "\n".join(f"  %(prog)s {line}".rstrip() for line in examples) if examples else None
    return argparse.ArgumentParser(
        prog=program_name(module),
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


@contextmanager
def invoked_as(name: str) -> Iterator[None]:
    """Within the block, :func:`program_name` is ``name``."""
    token = _INVOKED_AS.set(name)
    try:
        yield
    finally:
        _INVOKED_AS.reset(token)


class Terminated(KeyboardInterrupt):
    """A termination signal, raised in the main thread like Ctrl-C's :class:`KeyboardInterrupt` so that
    everything that cleans up after an interruption does it here too."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated(signum)


@contextmanager
def termination_raises() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise :class:`Terminated` (only the main thread can set handlers;
    elsewhere nothing changes). Signals that are ignored (``nohup``) stay ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in CLEANUP_SIGNALS}
    for signum, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(signum, _raise_terminated)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def run_command(body: Callable[[], int], interrupted: str = "interrupted") -> int:
    """Run ``body`` and turn deliberate errors and interruptions into exit codes (see the module docstring)."""
    try:
        with termination_raises():
            return body()
    except MantraError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader is gone: point stdout at /dev/null so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + BROKEN_PIPE
    except KeyboardInterrupt as interruption:
        signum = interruption.signum if isinstance(interruption, Terminated) else signal.SIGINT
        print(f"\n{interrupted}", file=sys.stderr)
        return 128 + signum
