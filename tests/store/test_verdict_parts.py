"""Issue 31 in the store: the checks verdict and the unrequested writes kept apart (migration 4), the grader
version of each run, and databases of the previous schema read as "not graded for writes"."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from mantra_env.checks import parse_check
from mantra_env.graders import grade
from mantra_env.grading import GRADER_VERSION
from mantra_env.store import EpisodeRecord, RolloutStore, RunRecord, StoreError
from mantra_env.store.migrations import MIGRATIONS
from mantra_env.trace import ToolCall, Trace
from mantra_env.unrequested import UnrequestedWrite
from mantra_env.verdict import Verdict

CHECKS = [parse_check("CALL check_inventory()")]


def _v3_db(path: Path) -> None:
    """A database as schema version 3 (the last before issue 31) left it: a run, a passed, a failed and an error
    episode, written column by column as that version's code wrote them."""
    conn = duckdb.connect(str(path))
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ)")
    for version, sql in enumerate(MIGRATIONS[:3], start=1):
        conn.execute(sql)
        conn.execute("INSERT INTO schema_migrations VALUES (?, now())", [version])
    conn.execute("INSERT INTO runs VALUES ('old', '', 'operations/starter', 1, 'm', 'a', '', '{}', now(), 'abc', '{}')")
    episodes = [("c1", "passed", 1, 1), ("c2", "failed", 0, 1), ("c3", "error", None, None)]
    for case_id, status, passed, total in episodes:
        conn.execute(
            "INSERT INTO episodes VALUES ('old', ?, 0, ?, NULL, ?, ?, 0, 0, 0, 0, 0.0, NULL, NULL, NULL, NULL, '[]', "
            "now(), now())",
            [case_id, status, passed, total],
        )
    conn.close()


def test_a_previous_schema_database_migrates_to_not_graded_for_writes(tmp_path: Path) -> None:
    path = tmp_path / "v3.duckdb"
    _v3_db(path)
    with RolloutStore(path) as store:
        assert store.schema_version == len(MIGRATIONS)
        old = store.run_record("old")
        assert old is not None and old.grader_version == 1
        rows = store.query(
            "SELECT case_id, status, all_checks_passed, unrequested_writes, graded_for_writes, grader_version "
            "FROM v_episodes ORDER BY case_id"
        )
        assert store.query("SELECT count(*) FROM v_unrequested_writes") == [(0,)]
    assert rows == [
        ("c1", "passed", True, None, False, 1),  # NULL: not graded for writes, never "no unrequested write"
        ("c2", "failed", False, None, False, 1),
        ("c3", "error", None, None, False, 1),
    ]


def _episode(case_id: str, verdict: Verdict, run_id: str = "new") -> EpisodeRecord:
    return EpisodeRecord(
        run_id=run_id,
        case_id=case_id,
        attempt=0,
        status="passed" if verdict.passed else "failed",
        verdict=verdict,
        trace=Trace(
            calls=(
                ToolCall(step=0, tool="check_inventory", args={}, kind="read", result={}),
                ToolCall(step=1, tool="cancel_order", args={"order_id": "O7"}, kind="write", result={}),
            )
        ),
    )


def test_both_parts_of_the_verdict_are_stored_apart() -> None:
    checks = grade(Trace.of(("check_inventory", {})), CHECKS).checks
    write = UnrequestedWrite(step=1, tool="cancel_order", args={"order_id": "O7"})
    with RolloutStore(":memory:") as store:
        store.start_run(RunRecord(run_id="new", suite="s", model="m", agent="a"))
        store.record_episode(_episode("unasked", Verdict.combined(checks, (write,))))
        store.record_episode(_episode("clean", Verdict.combined(checks, ())))
        store.record_episode(_episode("no-plan", Verdict.combined(checks, None)))
        rows = store.query(
            "SELECT case_id, status, all_checks_passed, unrequested_writes, graded_for_writes, grader_version "
            "FROM v_episodes ORDER BY case_id"
        )
        writes = store.query("SELECT case_id, step, tool, arguments, category FROM v_unrequested_writes")
        stored = store.run_record("new")
    assert stored is not None and stored.grader_version == GRADER_VERSION
    assert [(r[0], r[1], r[2], None if r[3] is None else json.loads(r[3]), r[4], r[5]) for r in rows] == [
        ("clean", "passed", True, [], True, GRADER_VERSION),
        ("no-plan", "passed", True, None, False, GRADER_VERSION),
        ("unasked", "failed", True, [{"step": 1, "tool": "cancel_order", "args": {"order_id": "O7"}}], True,
         GRADER_VERSION),
    ]  # fmt: skip
    assert [(w[0], w[1], w[2], json.loads(w[3]), w[4]) for w in writes] == [
        ("unasked", 1, "cancel_order", {"order_id": "O7"}, "unrequested_write")
    ]


def test_resuming_a_run_of_another_grader_version_is_refused_in_one_line() -> None:
    with RolloutStore(":memory:") as store:
        store.start_run(RunRecord(run_id="r", suite="s", model="m", agent="a", grader_version=1))
        with pytest.raises(StoreError) as refused:
            store.start_run(RunRecord(run_id="r", suite="s", model="m", agent="a"))
        store.start_run(RunRecord(run_id="r", suite="s", model="m", agent="a", grader_version=1))  # same: resumes
    message = str(refused.value)
    assert "\n" not in message
    assert f"graded by grader version 1 (the checks alone), this mantra-env grades with version {GRADER_VERSION}" in (
        message
    )
    assert "start a new run with another --run-name" in message


def test_a_run_without_a_recorded_grader_version_reads_as_version_one() -> None:
    """A file another tool wrote may leave the column NULL: every reader takes it as the checks alone."""
    from mantra_env.graders.leaderboard import leaderboard

    with RolloutStore(":memory:") as store:
        store.start_run(RunRecord(run_id="r", suite="s", model="m", agent="a", suite_hash="h"))
        store.record_episode(_episode("c", Verdict.combined(grade(Trace(), CHECKS).checks, None), run_id="r"))
        store.conn.execute("UPDATE runs SET grader_version = NULL")
        stored = store.run_record("r")
        (row,) = leaderboard(store, ["r"], 1, {})
        episodes = store.query("SELECT grader_version FROM v_episodes")
    assert stored is not None and stored.grader_version == 1
    assert row.summary.grader_version == 1 and episodes == [(1,)]
