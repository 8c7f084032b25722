"""The DuckDB end of storing episodes: opening a rollout database file, committing episodes atomically, and the
loop of the writer process that does so while a run is in flight.

It imports nothing of mantra_env (the writer process runs this file as a script, and starts in the ~0.2 s that
importing DuckDB takes instead of the ~0.5 s of the whole package). The parent's side, and why a process, are in
:mod:`mantra_env.store.writer`.

Protocol: the parent sends each episode's :class:`EpisodeRows` as a length-prefixed pickle of its tuple on the
child's stdin.
The child answers ``ready`` once the database is open (or one ``error <json string>`` line, and exits), then
every frame, in order, with one line: ``ok`` once its episode is committed, or ``error <json string>``.

The writer commits at most every :data:`COMMIT_INTERVAL_S` (10 ms): episodes that arrive further apart -- a
model's episodes take seconds -- are committed each in a transaction of its own; those that arrive within one
interval are committed together, in one transaction (group commit: a commit of one episode costs ~3.5 ms of
CPU, of sixteen ~0.5 ms each, so a writer that commits one by one cannot keep up with a fast run, or keeps up
only by taking a core from it). Either way an episode is stored whole or not at all, and is
acknowledged only once committed; a group that fails (a duplicate key) is rolled back and retried one episode at
a time, so that each episode gets its own answer. End of input -- the run ended, or the parent died, even by
SIGKILL -- makes the child commit every frame it has received whole, then exit: an episode handed over is never
lost.

Readers during a run (the report, a viewer): DuckDB lets no other process open a file one process writes, not even
to read. So the writer keeps a *live snapshot*, ``<db>.snapshot`` (:func:`snapshot_path`): a copy of the database
taken after a CHECKPOINT, between transactions, when it opens the file and then at most every
:data:`SNAPSHOT_INTERVAL_S` while new episodes are committed (and once more that long after the last of them).
A copy is written beside it and renamed over it, so a reader opens a whole snapshot, never a half-written one;
readers fall back to it only while the database itself is locked. The copy is taken before the commits that made
it due are acknowledged, so an acknowledged episode is in the next snapshot at the latest. A snapshot that
cannot be taken is a warning on stderr, never a lost episode; the snapshot is deleted when the writer exits.
"""

from __future__ import annotations

import contextlib
import glob
import json
import math
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO, NamedTuple

import duckdb

LOCK_WAIT_S = 10.0  # how long opening waits for another process (a run's writer finishing) to let go of the file
COMMIT_INTERVAL_S = 0.01  # the writer commits at most this often; what arrives meanwhile is committed together
SNAPSHOT_INTERVAL_S = 2.0  # how stale a run's live snapshot may get (a copy of the file: see the module docstring)
SNAPSHOT_SUFFIX = ".snapshot"
FRAME_LENGTH = struct.Struct("!I")
SAFE_CONFIG: dict[str, str | bool | int | float | list[str]] = {
    # A rollout database may come from elsewhere (mantra_env.store.schema): no query it holds may read or write
    # other files, and opening it never downloads or loads an extension (json is built in).
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}


class OpenError(RuntimeError):
    """The database file cannot be opened."""


class LockedError(OpenError):
    """Another process holds the database file."""


def snapshot_path(path: str) -> str:
    """Where the writer of the database ``path`` keeps its live snapshot for readers."""
    return path + SNAPSHOT_SUFFIX


class DuplicateEpisode(ValueError):
    """The episode's (run, case, attempt) is already stored."""


def connect(path: str, *, read_only: bool = False, wait: bool = True) -> duckdb.DuckDBPyConnection:
    """A connection to the database file ``path`` (or ``:memory:``), waiting up to :data:`LOCK_WAIT_S` (if
    ``wait``) while another process holds it (DuckDB lets one process write a file, and no other process even read
    it then; :class:`LockedError` after that). File access from queries and extension auto-loading are off
    (:data:`SAFE_CONFIG`)."""
    deadline = time.monotonic() + (LOCK_WAIT_S if wait else 0.0)
    while True:
        try:
            conn = duckdb.connect(path, read_only=read_only, config=SAFE_CONFIG)
            break
        except duckdb.IOException as exc:
            locked = "lock" in str(exc).lower()
            if not locked or time.monotonic() > deadline:
                hint = "; is another run writing to it? wait for it to end or use another --db" if locked else ""
                error = LockedError if locked else OpenError
                raise error(f"cannot open rollout database {path}: {exc}{hint}") from None
            time.sleep(0.05)
        except duckdb.PermissionException:  # DuckDB wanted an extension to read it: a SQLite file, typically
            raise OpenError(
                f"cannot open rollout database {path}: it is not a DuckDB database (DuckDB would need an extension "
                "to read it, e.g. for SQLite); use a DuckDB file made by mantra-env or a new --db"
            ) from None
        except duckdb.Error as exc:
            raise OpenError(f"cannot open rollout database {path}: {exc}") from None
    if not read_only:
        # Written one small transaction at a time from a busy Python thread, a rollout database gains nothing
        # from DuckDB's worker threads, which only compete with that thread for the cores (measured: about
        # 1 ms per stored episode on 2 cores). Its reads are small. A setting of the whole database instance.
        conn.execute("SET threads = 1")
    return conn


class EpisodeRows(NamedTuple):
    """One episode as rows: its ``episodes`` row, its ``steps`` and its ``check_verdicts``."""

    key: tuple[str, str, int]
    episode: list[Any]
    steps: list[list[Any]]
    verdicts: list[list[Any]]
    replaces_error: bool = False
    """Take the place of this key's stored ``error`` episode, if there is one (``--retry-errors``), in the same
    transaction; a stored episode of any other status is never replaced (the write fails as a duplicate)."""


class EpisodeInserter:
    """Writes episodes, atomically, through a connection of its own.

    A small DuckDB transaction is dominated by per-statement work: planning and optimizing an INSERT of one
    episode row takes ~0.6 of its ~1 ms, and binding a multi-row ``INSERT ... VALUES`` ~13 us per placeholder
    (DuckDB 2.0, measured here). Rows therefore go through appenders, one per table and created once, which
    bind no placeholders, on a connection whose optimizer is off (the setting is per connection; a plain
    append gives it nothing to improve). With one DuckDB thread (see :func:`connect`) an episode of the
    runner benchmark costs ~4 ms to store on its own (~5.7 ms with INSERT statements), and far less in a group.
    Constraints are checked at each flush, inside the transaction, so a duplicate key rolls it all back.
    """

    def __init__(self, conn: duckdb.DuckDBPyConnection) -> None:
        self.conn = conn.cursor()  # its own connection: the optimizer setting is per connection
        self.conn.execute("PRAGMA disable_optimizer")
        self.tables = [self.conn.appender(table) for table in ("episodes", "steps", "check_verdicts")]

    def close(self) -> None:
        self.conn.close()

    def write(self, rows: EpisodeRows) -> None:
        """Store one episode in one transaction; a duplicate key raises :class:`DuplicateEpisode`."""
        self.write_together([rows])

    def write_together(self, episodes: list[EpisodeRows]) -> None:
        """Store whole episodes in one transaction: all of them, or (on any failure) none."""
        table_rows = (
            [rows.episode for rows in episodes],
            [step for rows in episodes for step in rows.steps],
            [verdict for rows in episodes for verdict in rows.verdicts],
        )
        self.conn.execute("BEGIN TRANSACTION")
        try:
            for rows in episodes:
                if rows.replaces_error:
                    _delete_error_episode(self.conn, rows.key)
            for appender, rows_of_table in zip(self.tables, table_rows, strict=True):
                if rows_of_table:  # episodes first: a duplicate key fails before any step is appended
                    appender.append_rows(rows_of_table)
                    appender.flush()
            self.conn.execute("COMMIT")
        except BaseException as error:
            # A failed COMMIT has already ended the transaction, and ROLLBACK would then hide its error.
            with contextlib.suppress(duckdb.TransactionException):
                self.conn.execute("ROLLBACK")
            for table in self.tables:  # a failed append or flush leaves its rows buffered for the next episode
                table.clear()
            if isinstance(error, duckdb.ConstraintException) and len(episodes) == 1:
                run_id, case_id, attempt = episodes[0].key
                raise DuplicateEpisode(
                    f"episode (run={run_id!r}, case={case_id!r}, attempt={attempt}) is already recorded; "
                    "finished episodes are never overwritten"
                ) from None
            raise


def _delete_error_episode(conn: duckdb.DuckDBPyConnection, key: tuple[str, str, int]) -> None:
    """Delete the episode ``key`` and its rows if it is stored as an ``error`` (inside the caller's transaction)."""
    found = conn.execute(
        "SELECT 1 FROM episodes WHERE run_id = ? AND case_id = ? AND attempt = ? AND status = 'error'", list(key)
    ).fetchone()
    if found:
        for table in ("steps", "check_verdicts", "episodes"):
            conn.execute(f"DELETE FROM {table} WHERE run_id = ? AND case_id = ? AND attempt = ?", list(key))


_COPY = "import shutil, sys; shutil.copyfile(sys.argv[1], sys.argv[2])"


class Snapshots:
    """The writer's live snapshot of its database for readers (see the module docstring)."""

    def __init__(self, conn: duckdb.DuckDBPyConnection, path: str, interval_s: float) -> None:
        self.conn = conn
        self.path = path
        self.target = snapshot_path(path)
        self.interval_s = interval_s
        self.taken_at = -math.inf
        self.stale = True  # the database has commits the snapshot lacks (at first: no snapshot yet)
        self.warned = False

    def due_in(self) -> float | None:
        """Seconds until the next snapshot is due (0: now), or None when the snapshot is up to date."""
        if not self.stale:
            return None
        return max(0.0, self.taken_at + self.interval_s - time.monotonic())

    def committed(self) -> None:
        """Note a commit, and take the snapshot if one is due."""
        self.stale = True
        self.take_if_due()

    def take_if_due(self) -> None:
        if self.due_in() != 0.0:
            return
        temporary = ""
        try:
            self.conn.execute("CHECKPOINT")  # the file alone then holds every commit (no write-ahead log)
            temporary = self._temporary()
            # Copied by another process: DuckDB's lock on the file is a POSIX record lock, which a process loses
            # when it closes *any* descriptor of the file, so this process must never open the file itself.
            copy = subprocess.run(
                [sys.executable, "-I", "-S", "-c", _COPY, self.path, temporary], capture_output=True, text=True
            )
            if copy.returncode:
                raise OSError(copy.stderr.strip().splitlines()[-1] if copy.stderr.strip() else "the copy failed")
            os.replace(temporary, self.target)  # readers open the old snapshot or the new one, never a part
        except (duckdb.Error, OSError) as error:
            if temporary:
                with contextlib.suppress(OSError):
                    os.remove(temporary)
            if not self.warned:  # readers see an older snapshot; the episodes are stored all the same
                print(f"warning: cannot update the live snapshot {self.target} for readers: {error}", file=sys.stderr)
                self.warned = True
        self.stale = False
        self.taken_at = time.monotonic()

    def _temporary(self) -> str:
        """A new file with a unique name beside the snapshot for the next copy (never a name another writer of
        the folder could use at the same time), readable by whoever may read the database (``mkstemp`` makes it
        owner-only)."""
        descriptor, temporary = tempfile.mkstemp(
            dir=os.path.dirname(self.target) or ".", prefix=f".{os.path.basename(self.target)}.", suffix=".tmp"
        )
        try:
            os.fchmod(descriptor, os.stat(self.path).st_mode & 0o777)
        finally:
            os.close(descriptor)
        return temporary

    def remove(self) -> None:
        folder, name = os.path.dirname(self.target) or ".", os.path.basename(self.target)
        leftovers = glob.glob(os.path.join(glob.escape(folder), f".{glob.escape(name)}.*.tmp"))
        for stale in (self.target, *leftovers):  # only this database's writer makes these (DuckDB's lock)
            with contextlib.suppress(OSError):  # none there; or no file (taking one will say so, once)
                os.remove(stale)


def serve(path: str, frames: int, answers: BinaryIO, snapshot_interval_s: float | None = None) -> int:
    """The child's loop: open ``path``, then commit the episodes read from the file descriptor ``frames``,
    answering each on ``answers``; with ``snapshot_interval_s``, keep a live snapshot for readers that often."""
    reply = _Replies(answers)
    try:
        conn = connect(path)
    except OpenError as error:
        reply("error " + json.dumps(str(error)))
        return 1
    inserter = EpisodeInserter(conn)
    snapshots = None if snapshot_interval_s is None else Snapshots(conn, path, snapshot_interval_s)
    try:
        if snapshots is not None:
            snapshots.remove()  # one a killed writer left behind is not this run's
            snapshots.take_if_due()
        reply("ready")
        for batch in _arrived(frames, snapshots.due_in if snapshots is not None else None):
            if not batch:  # no input for a while: time for the snapshot of the last commits
                if snapshots is not None:
                    snapshots.take_if_due()
                continue
            episodes = [EpisodeRows(*pickle.loads(payload)) for payload in batch]
            answered = _commit(inserter, episodes)
            if snapshots is not None and any(line == "ok" for line in answered):
                snapshots.committed()
            for line in answered:
                reply(line)
    finally:
        if snapshots is not None:
            snapshots.remove()
        inserter.close()
        conn.close()
    return 0


def _commit(inserter: EpisodeInserter, episodes: list[EpisodeRows]) -> list[str]:
    """Commit ``episodes`` (together if they can be, else one at a time); the answer line of each."""
    if len(episodes) > 1:
        with contextlib.suppress(Exception):  # then one at a time, so that each gets its own answer
            inserter.write_together(episodes)
            return ["ok"] * len(episodes)
    answered = []
    for rows in episodes:
        try:
            inserter.write(rows)
        except Exception as error:  # the parent decides what a failed episode means; keep serving
            answered.append("error " + json.dumps(str(error)))
        else:
            answered.append("ok")
    return answered


def _arrived(fd: int, idle_s: Callable[[], float | None] | None = None) -> Iterator[list[bytes]]:
    """The whole frames that have arrived on ``fd`` each time the writer is ready for more, at most every
    :data:`COMMIT_INTERVAL_S`: one at a time when episodes arrive further apart (a model's episodes take seconds),
    all those waiting otherwise (group commit). A frame cut short by the end of input was never handed over whole
    and is dropped. When ``idle_s()`` gives a number of seconds and nothing arrives within it, an empty batch."""
    buffer = bytearray()
    ready_at = 0.0
    while True:
        if (pause := ready_at - time.monotonic()) > 0:
            time.sleep(pause)  # let the next ones arrive rather than spend a commit on each
        timeout = idle_s() if idle_s is not None else None
        if timeout is not None and not select.select([fd], [], [], timeout)[0]:
            yield []
            continue
        if not (chunk := os.read(fd, 1 << 20)):
            return
        ready_at = time.monotonic() + COMMIT_INTERVAL_S
        buffer += chunk
        batch, start = [], 0
        while len(buffer) - start >= FRAME_LENGTH.size:
            (length,) = FRAME_LENGTH.unpack_from(buffer, start)
            end = start + FRAME_LENGTH.size + length
            if end > len(buffer):
                break
            batch.append(bytes(buffer[start + FRAME_LENGTH.size : end]))
            start = end
        del buffer[:start]
        if batch:
            yield batch


class _Replies:
    """Answers on the parent's pipe; once the parent is gone, answers go nowhere but the work goes on."""

    def __init__(self, answers: BinaryIO) -> None:
        self.answers: BinaryIO | None = answers

    def __call__(self, line: str) -> None:
        if self.answers is None:
            return
        try:
            self.answers.write(line.encode() + b"\n")
        except (BrokenPipeError, ValueError):
            self.answers = None


def main() -> int:
    # Ctrl-C reaches the whole foreground process group; the writer ends when its input does, after the last
    # episode it was handed, whatever happens to the parent.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    sys.stdout = open(os.devnull, "w")  # nothing else may write into the answer pipe  # noqa: SIM115
    interval = float(sys.argv[2]) if len(sys.argv) > 2 else None  # argv: path [snapshot interval in seconds]
    return serve(sys.argv[1], sys.stdin.fileno(), answers, interval)


if __name__ == "__main__":
    sys.exit(main())
