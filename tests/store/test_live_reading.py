"""Reading a rollout database while a run writes it: readers get the writer's live snapshot (DuckDB lets no other
process open a file one process writes), which holds every acknowledged episode once it is due, is never half
written, and is gone when the writer is; a snapshot that cannot be taken costs no episode."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mantra_env.agents.base import AgentReport, ScriptedAgent
from mantra_env.agents.scripted import OraclePolicy
from mantra_env.domains import find_suite
from mantra_env.env import MantraEnv
from mantra_env.runner import RunSettings, run_suite
from mantra_env.store import RolloutStore, appender
from mantra_env.store.appender import snapshot_path
from mantra_env.store.records import RunRecord
from mantra_env.store.writer import EpisodeWriter
from tests.store.test_store import _run
from tests.store.test_writer import _episodes

FAILURE_DEADLINE_S = 60.0  # only a broken reader path waits this long; a working one is done in well under a second


def count_episodes(db: Path) -> tuple[int, str | None]:
    """(episodes stored, the snapshot read or None), as a report opening ``db`` now would see them."""
    with RolloutStore(db, read_only=True) as store:
        (count,) = store.query("SELECT count(*) FROM episodes")[0]
        return int(count), store.snapshot


def test_a_reader_sees_each_acknowledged_episode_while_the_writer_holds_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "live.duckdb"
    with RolloutStore(db) as store:
        store.start_run(_run())
    monkeypatch.setattr(appender, "SNAPSHOT_INTERVAL_S", 0.0)  # a snapshot with every commit

    async def scenario() -> list[tuple[int, str | None]]:
        writer = await EpisodeWriter.start(str(db))
        seen = [count_episodes(db)]  # the run's start: its run row, no episode yet
        for episode in _episodes(4):
            await (await writer.submit(episode))
            seen.append(count_episodes(db))
        await writer.close()
        return seen

    seen = asyncio.run(scenario())
    snapshot = snapshot_path(str(db))
    assert seen == [(n, snapshot) for n in range(5)]
    assert not Path(snapshot).exists()  # the writer is gone, and so is its snapshot
    assert count_episodes(db) == (4, None)  # the file itself again


def test_the_last_episodes_reach_the_snapshot_without_another_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Commits within the interval of the previous snapshot are in the next one, taken once the interval is over
    even if nothing more arrives (a model's last episode of a long run)."""
    db = tmp_path / "live.duckdb"
    with RolloutStore(db) as store:
        store.start_run(_run())
    monkeypatch.setattr(appender, "SNAPSHOT_INTERVAL_S", 0.3)

    async def scenario() -> int:
        writer = await EpisodeWriter.start(str(db))  # takes the first snapshot: the interval starts now
        for episode in _episodes(3):
            await (await writer.submit(episode))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + FAILURE_DEADLINE_S
        count = 0
        while count < 3 and loop.time() < deadline:
            count, snapshot = await asyncio.to_thread(count_episodes, db)
            assert snapshot is not None
            await asyncio.sleep(0.05)  # polling cadence of the reader, not a wait for the writer
        await writer.close()
        return count

    assert asyncio.run(scenario()) == 3


def test_a_snapshot_that_cannot_be_written_costs_no_episode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "live.duckdb"
    with RolloutStore(db) as store:
        store.start_run(_run())
    Path(snapshot_path(str(db))).mkdir()  # in the way: no snapshot can be renamed there
    monkeypatch.setattr(appender, "SNAPSHOT_INTERVAL_S", 0.0)

    async def scenario() -> str:
        writer = await EpisodeWriter.start(str(db))
        for episode in _episodes(3):
            await (await writer.submit(episode))
        await writer.close()
        return writer.stderr

    stderr = asyncio.run(scenario())
    assert stderr.count("warning: cannot update the live snapshot") == 1  # said once, not per episode
    assert count_episodes(db) == (3, None)


class Gated:
    """The oracle, but episode ``n`` starts only once the polling reader has seen ``n`` episodes stored, so that the
    reader provably reads during the run, between every two episodes."""

    name = "gated"

    def __init__(self, seen: list[threading.Event], started: list[int], late: list[int]) -> None:
        self.seen, self.started, self.late = seen, started, late

    async def run(self, env: MantraEnv, case_id: str, seed: int) -> AgentReport:
        n = len(self.started)
        self.started.append(n)
        if n and not await asyncio.to_thread(self.seen[n].wait, FAILURE_DEADLINE_S):
            self.late.append(n)
        return await ScriptedAgent(OraclePolicy()).run(env, case_id, seed)


POLLER = """
import select, sys
from pathlib import Path
from tests.store.test_live_reading import count_episodes
db = Path(sys.argv[1])
while not select.select([sys.stdin], [], [], 0.02)[0]:  # until the test closes stdin; polling cadence 20 ms
    count, snapshot = count_episodes(db) if db.exists() else (0, None)
    print(count, int(snapshot is not None), flush=True)
"""


def test_a_reader_polling_during_a_run_sees_its_finished_episodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader in another process (as the report or a viewer is) polls the database of a live run."""
    domain, suite = find_suite("operations")
    assert domain is not None
    db = tmp_path / "run.duckdb"
    monkeypatch.setattr(appender, "SNAPSHOT_INTERVAL_S", 0.0)
    settings = RunSettings(attempts=2, concurrency=1, cases=("fig1-*",))
    total = 4
    seen = [threading.Event() for _ in range(total + 1)]
    started: list[int] = []
    late: list[int] = []
    observations: list[tuple[int, bool]] = []
    poller = subprocess.Popen(
        [sys.executable, "-c", POLLER, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )

    def read_observations() -> None:
        assert poller.stdout is not None
        for line in poller.stdout:
            count, through_snapshot = map(int, line.split())
            observations.append((count, bool(through_snapshot)))
            for n in range(min(count, total) + 1):
                seen[n].set()

    reader = threading.Thread(target=read_observations)
    reader.start()
    try:
        record = RunRecord(run_id="live", suite="operations/starter", model="scripted:gated", agent="gated")
        with RolloutStore(db) as store:
            make_agent = lambda: Gated(seen, started, late)  # noqa: E731
            asyncio.run(run_suite(store, record, suite, domain, make_agent, settings))  # type: ignore[arg-type]
    finally:
        assert poller.stdin is not None
        poller.stdin.close()
        poller.wait()
        reader.join()
    assert poller.returncode == 0
    assert late == [], f"the reader did not see episodes {late} while the run was writing"
    during = [(count, through_snapshot) for count, through_snapshot in observations if 0 < count < total]
    assert {count for count, _ in during} == set(range(1, total))  # it saw every intermediate state
    assert all(through_snapshot for _, through_snapshot in during)
    assert count_episodes(db) == (total, None)


def test_the_report_runs_on_a_live_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from mantra_env.graders.report import main as report

    db = tmp_path / "live.duckdb"
    with RolloutStore(db) as store:
        store.start_run(_run())
    monkeypatch.setattr(appender, "SNAPSHOT_INTERVAL_S", 0.0)

    async def scenario() -> int:
        writer = await EpisodeWriter.start(str(db))
        for episode in _episodes(5):
            await (await writer.submit(episode))
        try:
            return await asyncio.to_thread(report, ["--db", str(db), "--out", str(tmp_path / "report")])
        finally:
            await writer.close()

    assert asyncio.run(scenario()) == 0
    assert f"a run is writing {db}" in capsys.readouterr().err
    assert (tmp_path / "report" / "report.md").read_text().count("r1") >= 1


def test_snapshots_are_copied_to_unique_names_with_the_database_mode_and_left_nowhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "live.duckdb"
    with RolloutStore(db) as store:
        store.start_run(_run())
    db.chmod(0o640)
    (tmp_path / f".{db.name}.snapshot.left-by-a-killed-writer.tmp").write_bytes(b"")
    monkeypatch.setattr(appender, "SNAPSHOT_INTERVAL_S", 0.0)

    async def scenario() -> tuple[int, list[str]]:
        writer = await EpisodeWriter.start(str(db))
        for episode in _episodes(2):
            await (await writer.submit(episode))
        mode = Path(snapshot_path(str(db))).stat().st_mode & 0o777
        names = sorted(path.name for path in tmp_path.iterdir() if path.suffix != ".wal")
        await writer.close()
        return mode, names

    mode, names = asyncio.run(scenario())
    assert mode == 0o640  # readable by whoever may read the database
    assert names == ["live.duckdb", "live.duckdb.snapshot"]  # the killed writer's copy is gone, and no new one
    assert sorted(path.name for path in tmp_path.iterdir()) == ["live.duckdb"]
