"""Where a run's finished episodes go: a writer process that owns the rollout database while the run is in
flight and commits each episode atomically (group commit when it is behind: see
:mod:`mantra_env.store.appender`), so the runner's event loop never waits for DuckDB.

Why a process: storing an episode is ~4 ms of DuckDB work on this machine (per flushed column and table, and
the commit), and the DuckDB client holds Python's GIL for most of it, so a writer *thread* hardly overlaps with
the episodes still running (measured on 2 cores: 1.5 ms of writes and 1.1 ms of Python took 2.3 ms side by
side). The child runs :mod:`mantra_env.store.appender` as a script; the protocol is described there.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import pickle
import sys
from collections.abc import AsyncIterator
from typing import Protocol

from mantra_env.store import appender
from mantra_env.store.appender import FRAME_LENGTH
from mantra_env.store.errors import StoreError
from mantra_env.store.records import EpisodeRecord
from mantra_env.store.store import RolloutStore, episode_rows

_STDERR_KEPT = 4000  # characters of the child's stderr quoted when it fails


class EpisodeSink(Protocol):
    """Where a run's finished episodes go: ``await submit(episode)`` hands one over and returns a future that is
    done once the episode is committed (or failed with :class:`StoreError`); ``replaces_error`` lets it take the
    place of its key's stored ``error`` episode."""

    async def submit(self, episode: EpisodeRecord, *, replaces_error: bool = False) -> asyncio.Future[None]: ...


@contextlib.asynccontextmanager
async def episode_sink(store: RolloutStore) -> AsyncIterator[EpisodeSink]:
    """The sink for a run on ``store``: a writer process for a database file (the store lets go of the file
    meanwhile and reopens it afterwards, once every episode handed over is committed); ``store`` itself, written
    in place, for an in-memory database, which no other process can reach."""
    if str(store.path) == ":memory:":
        yield _InPlace(store)
        return
    with store.handed_over() as path:
        writer = await EpisodeWriter.start(path)
        try:
            yield writer
        finally:
            await writer.close()


class _InPlace:
    def __init__(self, store: RolloutStore) -> None:
        self.store = store

    async def submit(self, episode: EpisodeRecord, *, replaces_error: bool = False) -> asyncio.Future[None]:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        try:
            self.store.record_episode(episode, replaces_error=replaces_error)
        except StoreError as error:
            future.set_exception(error)
        else:
            future.set_result(None)
        return future


class EpisodeWriter:
    """The parent's end: :meth:`submit` hands an episode to the child and returns a future that resolves once
    it is committed (or fails with :class:`StoreError`)."""

    def __init__(self, process: asyncio.subprocess.Process, path: str) -> None:
        self.process = process
        self.path = path
        self.pending: collections.deque[tuple[tuple[str, str, int], asyncio.Future[None]]] = collections.deque()
        self.stderr = ""
        self._reader = asyncio.create_task(self._read_acks())
        self._stderr_reader = asyncio.create_task(self._read_stderr())

    @classmethod
    async def start(cls, path: str) -> EpisodeWriter:
        """Start the child on the database at ``path`` and wait until it has opened it."""
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-P",  # the script's folder (this package's) is not put first on the child's import path
            appender.__file__,
            path,
            str(appender.SNAPSHOT_INTERVAL_S),  # read at each start, so that tests can shorten it
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        assert process.stdout is not None
        first = await process.stdout.readline()
        if first != b"ready\n":
            error = await process.stderr.read() if process.stderr is not None else b""
            await process.wait()
            raise StoreError(_failure(first, error.decode(errors="replace"), process.returncode))
        return cls(process, path)

    async def submit(self, episode: EpisodeRecord, *, replaces_error: bool = False) -> asyncio.Future[None]:
        """Send ``episode`` to the child; waits only while the pipe is full (the writer is behind)."""
        rows = episode_rows(episode, replaces_error=replaces_error)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._reader.done():  # the child is gone: say why instead of writing into a closed pipe
            future.set_exception(StoreError(self._gone()))
            return future
        # A plain tuple: the child rebuilds its own EpisodeRows, whatever mantra_env its import path would find.
        payload = pickle.dumps(tuple(rows), protocol=pickle.HIGHEST_PROTOCOL)
        assert self.process.stdin is not None
        self.pending.append((rows.key, future))
        self.process.stdin.write(FRAME_LENGTH.pack(len(payload)) + payload)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the ack reader says why, for each
            await self.process.stdin.drain()
        return future

    async def close(self) -> None:
        """End the input, let the child commit what it has, and wait for it to exit."""
        assert self.process.stdin is not None
        if not self.process.stdin.is_closing():
            self.process.stdin.close()
        await asyncio.gather(self._reader, self._stderr_reader)
        await self.process.wait()

    async def _read_acks(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            key, future = self.pending.popleft()
            if future.done():  # its submitter was cancelled
                continue
            if line == b"ok\n":
                future.set_result(None)
            else:
                future.set_exception(StoreError(_failure(line, "", None, key)))
        await self.process.wait()
        await self._stderr_reader
        while self.pending:  # the child died with episodes in flight
            _, future = self.pending.popleft()
            if not future.done():
                future.set_exception(StoreError(self._gone()))

    async def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        while chunk := await self.process.stderr.read(65536):
            self.stderr = (self.stderr + chunk.decode(errors="replace"))[-_STDERR_KEPT:]

    def _gone(self) -> str:
        return (
            f"the rollout writer for {self.path} exited (code {self.process.returncode}) before storing this "
            f"episode{': ' + self.stderr.strip() if self.stderr.strip() else ''}"
        )


def _failure(line: bytes, stderr: str, code: int | None, key: tuple[str, str, int] | None = None) -> str:
    text = line.decode(errors="replace").strip()
    if text.startswith("error "):
        message = str(json.loads(text.removeprefix("error ")))
    else:
        message = f"the rollout writer process stopped (code {code}): {stderr.strip() or text or 'no output'}"
    if key is not None and "already recorded" not in message:
        message = f"episode (run={key[0]!r}, case={key[1]!r}, attempt={key[2]}) was not stored: {message}"
    return message
