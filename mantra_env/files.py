"""Writing files that two processes cannot tear, and locks that die with their holder.

:func:`write_atomic` is how the project writes every file meant to be whole (artifacts, review files, exchange
requests, cache entries, suites): the bytes go to a temporary file with a unique name in the target's folder
(``tempfile.mkstemp``), are flushed to disk, and the file is renamed over the target (``os.replace``). A reader
sees the old file or the new one, never a part, and two writers of one path each write their own temporary file,
so the last rename wins whole. The temporary file is removed on any failure (an unencodable text, a full disk, a
target that is a folder, an interruption).

:func:`exclusive_lock` guards a read-check-write (a review save) or a whole run: an exclusive ``fcntl.flock`` on
an open descriptor of a lock file. The kernel releases it when the descriptor is closed, also when the holder is
killed (SIGKILL included), so a lock is never left stale. The lock file holds the holder's pid while it is held,
for the message of whoever finds it taken; the file itself stays (deleting a lock file races with a process that
has just opened it), and its existence means nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from mantra_env.errors import MantraError

LOCK_POLL_S = 0.01
"""How often a lock with a time-out tries again (``flock`` itself has no time-out)."""


class LockHeld(MantraError, RuntimeError):
    """A lock is held by another process (the message names the lock, the holder's pid and what to do).

    Attributes:
        path: the lock file.
        holder: the holder's pid, or None if it did not say.
    """

    def __init__(self, message: str, *, path: Path, holder: int | None) -> None:
        super().__init__(message)
        self.path = path
        self.holder = holder


@cache
def _umask() -> int:
    """The process's umask, read without changing it (``os.umask`` can only be read by setting it, which races
    with other threads creating files)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return 0o022


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` whole or not at all, creating its folder (see the module doc).

    The file gets the permissions a plain ``open(path, "w")`` would give it (``mkstemp`` makes them owner-only).

    Raises:
        UnicodeEncodeError: ``data`` is text that UTF-8 cannot encode (a lone surrogate); nothing is written.
        OSError: the folder cannot be created or written, or ``path`` is a folder; nothing is left behind.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as file:
            os.fchmod(file.fileno(), 0o666 & ~_umask())
            file.write(payload)
            file.flush()
            os.fsync(file.fileno())  # the rename must not reach the disk before the bytes do
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _holder(descriptor: int) -> int | None:
    """The pid the lock's holder wrote into the lock file, if any."""
    with contextlib.suppress(OSError, ValueError):
        text = os.pread(descriptor, 32, 0).decode("ascii").strip()
        return int(text) if text else None
    return None


@contextlib.contextmanager
def exclusive_lock(path: Path, what: str, timeout_s: float | None = None) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created with its folder if missing) for the block.

    Args:
        path: the lock file.
        what: what the lock guards, for the message (``"run directory runs/x"``).
        timeout_s: None waits as long as it takes; 0 does not wait; else wait at most that many seconds.

    Raises:
        LockHeld: another process (or another open of the file in this one) holds it past ``timeout_s``.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        _acquire(descriptor, path, what, timeout_s)
        try:
            os.ftruncate(descriptor, 0)
            os.pwrite(descriptor, f"{os.getpid()}\n".encode("ascii"), 0)
            yield
        finally:
            with contextlib.suppress(OSError):  # no pid of a holder that is gone
                os.ftruncate(descriptor, 0)
    finally:
        os.close(descriptor)  # releases the lock


def _acquire(descriptor: int, path: Path, what: str, timeout_s: float | None) -> None:
    if timeout_s is None:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        return
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                break
            time.sleep(LOCK_POLL_S)
    holder = _holder(descriptor)
    by = f"process {holder}" if holder is not None else "another process"
    raise LockHeld(f"{what} is in use by {by} (lock {path}); wait for it to finish", path=path, holder=holder)
