"""The writer process: episodes it acknowledges are stored whole, group commits fall back to one at a time on a
failure, its death and a locked file are clear errors, and a killed parent loses nothing it handed over."""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import duckdb
import pytest

from mantra_env.store import RolloutStore, StoreError, appender
from mantra_env.store.appender import FRAME_LENGTH
from mantra_env.store.store import episode_rows
from mantra_env.store.writer import EpisodeWriter, episode_sink
from tests.store.test_store import _episode, _run

TABLES = {
    "episodes": "SELECT * EXCLUDE (started_at, finished_at) FROM episodes ORDER BY case_id, attempt",
    "steps": "SELECT * FROM steps ORDER BY case_id, attempt, step",
    "check_verdicts": "SELECT * FROM check_verdicts ORDER BY case_id, attempt, check_id",
}


def _episodes(count: int) -> list:  # type: ignore[type-arg]
    calls = [("check_inventory", None), ("assign_warehouse_picker", "invalid_arguments")]
    return [_episode(f"c{i % 5}", i // 5, calls[: i % 3]) for i in range(count)]


async def _submit_all(store: RolloutStore, episodes: list) -> list[BaseException | None]:  # type: ignore[type-arg]
    """Hands every episode over at once (so the writer falls behind and commits in groups), then waits."""
    async with episode_sink(store) as sink:
        futures = [await sink.submit(episode) for episode in episodes]
        outcomes = await asyncio.gather(*futures, return_exceptions=True)
    return [outcome if isinstance(outcome, BaseException) else None for outcome in outcomes]


def test_the_writer_process_stores_what_writing_in_place_stores(tmp_path: Path) -> None:
    episodes = _episodes(40)
    with RolloutStore(tmp_path / "process.duckdb") as process, RolloutStore(":memory:") as in_place:
        for store in (process, in_place):
            store.start_run(_run())
        assert asyncio.run(_submit_all(process, episodes)) == [None] * 40
        for episode in episodes:
            in_place.record_episode(episode)
        for query in TABLES.values():  # the store is reopened after the run: readable at once
            assert process.query(query) == in_place.query(query)
        assert process.query("SELECT count(*) FROM episodes") == [(40,)]


def test_a_duplicate_in_a_group_is_refused_alone(tmp_path: Path) -> None:
    episodes = _episodes(12)
    with RolloutStore(tmp_path / "db.duckdb") as store:
        store.start_run(_run())
        store.record_episode(episodes[5])
        outcomes = asyncio.run(_submit_all(store, episodes))
        assert [i for i, outcome in enumerate(outcomes) if outcome is not None] == [5]
        assert isinstance(outcomes[5], StoreError) and "is already recorded" in str(outcomes[5])
        assert store.query("SELECT count(*) FROM episodes") == [(12,)]
        assert store.query("SELECT count(*) FROM steps") == [(sum(len(e.trace.calls) for e in episodes),)]


def test_frames_are_grouped_as_they_arrive_and_a_cut_frame_is_dropped() -> None:
    frames = [pickle.dumps(n) for n in range(3)]
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "wb") as pipe:
        pipe.write(b"".join(FRAME_LENGTH.pack(len(frame)) + frame for frame in frames))
        pipe.write(FRAME_LENGTH.pack(100) + b"only part of it")  # the sender died mid-frame
    with os.fdopen(read_end, "rb"):
        assert [[pickle.loads(frame) for frame in batch] for batch in appender._arrived(read_end)] == [[0, 1, 2]]


def test_the_writer_dying_fails_its_pending_episodes_clearly(tmp_path: Path) -> None:
    async def scenario() -> tuple[BaseException | None, BaseException | None]:
        with RolloutStore(tmp_path / "db.duckdb") as store:
            store.start_run(_run())
            with store.handed_over() as path:
                writer = await EpisodeWriter.start(path)
                writer.process.kill()
                await writer.process.wait()
                pending = await writer.submit(_episode("c1", 0, []))
                first = await asyncio.gather(pending, return_exceptions=True)
                later = await asyncio.gather(await writer.submit(_episode("c2", 0, [])), return_exceptions=True)
                await writer.close()
            return first[0], later[0]

    first, later = asyncio.run(scenario())
    for outcome in (first, later):
        assert isinstance(outcome, StoreError)
        assert "rollout writer" in str(outcome) and "exited (code -9)" in str(outcome)


def test_a_database_the_writer_cannot_open_is_a_clear_error(tmp_path: Path) -> None:
    not_a_database = tmp_path / "notes.duckdb"
    not_a_database.write_text("these are my notes, not a database\n")
    with pytest.raises(StoreError, match=r"cannot open rollout database .*notes\.duckdb"):
        asyncio.run(EpisodeWriter.start(str(not_a_database)))
    assert not_a_database.read_text() == "these are my notes, not a database\n"


def test_opening_a_file_another_process_writes_waits_then_says_who(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "busy.duckdb"
    duckdb.connect(str(path)).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('open', flush=True); "
         "sys.stdin.read()", str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        monkeypatch.setattr(appender, "LOCK_WAIT_S", 0.3)
        with pytest.raises(StoreError, match="is another run writing to it"):
            RolloutStore(path)
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait()
    with RolloutStore(path) as store:  # once it has let go
        assert store.schema_version > 0


KILLED_AFTER_HANDING_OVER = textwrap.dedent(
    """
    import asyncio, os, signal, sys
    from mantra_env.store import RolloutStore
    from mantra_env.store.writer import EpisodeWriter
    from tests.store.test_writer import _episodes
    from tests.store.test_store import _run

    async def main():
        store = RolloutStore(sys.argv[1])
        store.start_run(_run())
        store.close()
        writer = await EpisodeWriter.start(sys.argv[1])
        for episode in _episodes(30):
            await writer.submit(episode)
        print(writer.process.pid, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)  # no ack awaited, no close

    asyncio.run(main())
    """
)


def test_a_runner_killed_after_handing_episodes_over_loses_none(tmp_path: Path) -> None:
    db = tmp_path / "db.duckdb"
    script = tmp_path / "killed.py"
    script.write_text(KILLED_AFTER_HANDING_OVER)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    result = subprocess.run([sys.executable, str(script), str(db)], capture_output=True, text=True, env=env)
    assert result.returncode == -signal.SIGKILL, result.stderr
    with RolloutStore(db) as store:  # waits for the orphaned writer to finish and let go of the file
        assert store.query("SELECT count(*) FROM episodes") == [(30,)]
        rows = [episode_rows(e) for e in _episodes(30)]
        assert store.query("SELECT count(*) FROM steps") == [(sum(len(r.steps) for r in rows),)]


@pytest.fixture
def commit_groups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A started run in ``tmp_path / "db.duckdb"``; the list receives the size of each group the writer commits."""
    with RolloutStore(tmp_path / "db.duckdb") as store:
        store.start_run(_run())
    groups: list[int] = []
    write_together = appender.EpisodeInserter.write_together

    def counted(self: appender.EpisodeInserter, episodes: list[appender.EpisodeRows]) -> None:
        groups.append(len(episodes))
        write_together(self, episodes)

    monkeypatch.setattr(appender.EpisodeInserter, "write_together", counted)
    return groups


def test_episodes_waiting_together_are_committed_together(tmp_path: Path, commit_groups: list[int]) -> None:
    """What has arrived while the writer was busy goes in one transaction (that is how it catches up)."""
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "wb") as pipe:
        for episode in _episodes(5):
            frame = pickle.dumps(episode_rows(episode))
            pipe.write(FRAME_LENGTH.pack(len(frame)) + frame)
    answers = tmp_path / "answers"
    with os.fdopen(read_end, "rb"), answers.open("wb") as out:
        assert appender.serve(str(tmp_path / "db.duckdb"), read_end, out) == 0
    assert answers.read_text().split() == ["ready"] + ["ok"] * 5
    assert commit_groups == [5]
    with RolloutStore(tmp_path / "db.duckdb") as store:
        assert store.query("SELECT count(*) FROM episodes") == [(5,)]


def test_episodes_arriving_apart_get_a_transaction_each(tmp_path: Path, commit_groups: list[int]) -> None:
    """A model's episodes finish seconds apart: nothing waits for company. (Here each episode is sent once the
    previous one is acknowledged.)"""
    frames_in, frames_out = os.pipe()
    answers_in, answers_out = os.pipe()
    answers_seen: list[str] = []

    def send() -> None:
        with os.fdopen(frames_out, "wb", buffering=0) as frames, os.fdopen(answers_in, "rb") as answers:
            answers_seen.append(answers.readline().decode().strip())
            for episode in _episodes(3):
                frame = pickle.dumps(episode_rows(episode))
                frames.write(FRAME_LENGTH.pack(len(frame)) + frame)
                answers_seen.append(answers.readline().decode().strip())

    sender = threading.Thread(target=send)
    sender.start()
    with os.fdopen(frames_in, "rb"), os.fdopen(answers_out, "wb", buffering=0) as out:
        assert appender.serve(str(tmp_path / "db.duckdb"), frames_in, out) == 0
    sender.join()
    assert answers_seen == ["ready", "ok", "ok", "ok"]
    assert commit_groups == [1, 1, 1]
