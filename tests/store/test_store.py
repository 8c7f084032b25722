import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mantra_env.checks import parse_check
from mantra_env.graders import grade
from mantra_env.store import EpisodeRecord, RolloutStore, RunRecord, StoreError, Usage
from mantra_env.store.migrations import MIGRATIONS
from mantra_env.trace import ToolCall, ToolError, Trace
from mantra_env.verdict import OUTCOME_ADAPTER

CHECKS = [parse_check("CALL check_inventory() PRECEDES CALL assign_warehouse_picker()"), parse_check("NO-CALL po()")]


def _run(run_id: str = "r1") -> RunRecord:
    return RunRecord(run_id=run_id, suite="operations", model="scripted", agent="oracle")


def _episode(case_id: str, attempt: int, calls: list[tuple[str, str | None]], run_id: str = "r1") -> EpisodeRecord:
    trace = Trace(
        calls=tuple(
            ToolCall(
                step=i,
                tool=tool,
                args={"n": i},
                kind="read" if tool.startswith("check") else "write",
                result={"ok": True},
                error=ToolError(code=err, message="bad") if err else None,
            )
            for i, (tool, err) in enumerate(calls)
        ),
        final_answer="done",
    )
    verdict = grade(trace, CHECKS)
    return EpisodeRecord(
        run_id=run_id,
        case_id=case_id,
        attempt=attempt,
        status="passed" if verdict.passed else "failed",
        reward=float(verdict.passed),
        verdict=verdict,
        trace=trace,
        usage=Usage(input_tokens=10, output_tokens=5, model_calls=2),
        latency_s=0.5,
        step_latencies_s=[0.1] * len(calls),
    )


def test_exact_columns_are_pinned() -> None:
    with RolloutStore(":memory:") as store:
        columns = {
            table: [row[0] for row in store.query(f"SELECT column_name FROM (DESCRIBE {table})")]
            for table in ("runs", "episodes", "steps", "check_verdicts")
        }
    assert columns == {
        "runs": [
            "run_id",
            "name",
            "suite",
            "suite_version",
            "model",
            "agent",
            "code_version",
            "config",
            "created_at",
            "suite_hash",
            "settings",
            "grader_version",
        ],
        "episodes": [
            "run_id",
            "case_id",
            "attempt",
            "status",
            "reward",
            "checks_passed",
            "checks_total",
            "steps",
            "input_tokens",
            "output_tokens",
            "model_calls",
            "latency_s",
            "error_kind",
            "error",
            "final_answer",
            "verdict",
            "messages",
            "started_at",
            "finished_at",
            "all_checks_passed",
            "unrequested_writes",
        ],
        "steps": [
            "run_id",
            "case_id",
            "attempt",
            "step",
            "tool",
            "kind",
            "arguments",
            "raw_arguments",
            "result",
            "error_code",
            "error_message",
            "latency_s",
        ],
        "check_verdicts": ["run_id", "case_id", "attempt", "check_id", "check_text", "passed", "category", "evidence"],
    }


def test_episode_rows_and_views(tmp_path: Path) -> None:
    with RolloutStore(tmp_path / "db.duckdb") as store:
        assert store.schema_version == len(MIGRATIONS)
        store.start_run(_run())
        store.record_episode(_episode("c1", 0, [("check_inventory", None), ("assign_warehouse_picker", None)]))
        store.record_episode(
            _episode("c1", 1, [("assign_warehouse_picker", "invalid_arguments"), ("check_inventory", None)])
        )
        store.record_episode(
            EpisodeRecord(
                run_id="r1", case_id="c2", attempt=0, status="error", error_kind="timeout", error="provider timed out"
            )
        )
        assert store.finished_keys("r1") == {("c1", 0), ("c1", 1), ("c2", 0)}
        assert store.task_counts("r1") == [("c1", 2, 1, 0), ("c2", 0, 0, 1)]
        steps = store.query("SELECT step, tool, kind, error_code FROM steps WHERE attempt = 1 ORDER BY step")
        assert steps == [
            (0, "assign_warehouse_picker", "write", "invalid_arguments"),
            (1, "check_inventory", "read", None),
        ]
        behaviour = store.query(
            "SELECT case_id, attempt, premature_write, read_calls, empty_trace FROM v_attempt_behaviour ORDER BY 1, 2"
        )
        assert behaviour == [("c1", 0, False, 1, False), ("c1", 1, True, 1, False), ("c2", 0, False, 0, False)]
        failed = store.query("SELECT case_id, attempt, check_id, category FROM v_failed_checks")
        assert failed == [("c1", 1, "c0", "ordering_violation")]


def test_reopening_does_not_remigrate_and_keeps_rows(tmp_path: Path) -> None:
    path = tmp_path / "db.duckdb"
    with RolloutStore(path) as store:
        store.start_run(_run())
        store.record_episode(_episode("c1", 0, [("check_inventory", None)]))
    with RolloutStore(path) as store:
        assert store.query("SELECT count(*) FROM schema_migrations") == [(len(MIGRATIONS),)]
        assert store.finished_keys("r1") == {("c1", 0)}


def test_duplicate_episode_is_refused_and_first_kept() -> None:
    with RolloutStore(":memory:") as store:
        store.start_run(_run())
        store.record_episode(_episode("c1", 0, [("check_inventory", None)]))
        with pytest.raises(StoreError, match="already recorded"):
            store.record_episode(_episode("c1", 0, [("po", None)]))
        assert store.query("SELECT count(*) FROM steps") == [(1,)]
        assert store.query("SELECT tool FROM steps") == [("check_inventory",)]


def test_after_a_refused_duplicate_the_next_episode_is_stored_alone() -> None:
    """The refused episode's buffered rows are dropped, not written with the next episode."""
    with RolloutStore(":memory:") as store:
        store.start_run(_run())
        store.record_episode(_episode("c1", 0, [("check_inventory", None)]))
        with pytest.raises(StoreError, match="already recorded"):
            store.record_episode(_episode("c1", 0, [("po", None), ("po", None)]))
        store.record_episode(_episode("c2", 0, [("assign_warehouse_picker", None)]))
        steps = store.query("SELECT case_id, step, tool FROM steps ORDER BY case_id, step")
        assert steps == [("c1", 0, "check_inventory"), ("c2", 0, "assign_warehouse_picker")]
        verdicts = store.query("SELECT case_id, count(*) FROM check_verdicts GROUP BY case_id ORDER BY case_id")
        assert verdicts == [("c1", len(CHECKS)), ("c2", len(CHECKS))]


def test_an_episode_whose_write_fails_part_way_leaves_no_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """The episode row is flushed before its steps; a failure at the steps rolls the episode row back too."""
    import mantra_env.store.store as store_module

    rows_of = store_module.episode_rows

    def broken_steps(episode: EpisodeRecord) -> store_module.EpisodeRows:
        rows = rows_of(episode)
        return rows._replace(steps=[[*row[:-1]] for row in rows.steps])  # one column short

    with RolloutStore(":memory:") as store:
        store.start_run(_run())
        monkeypatch.setattr(store_module, "episode_rows", broken_steps)
        with pytest.raises(Exception):  # noqa: B017 - whatever DuckDB raises for the short row
            store.record_episode(_episode("c1", 0, [("check_inventory", None)]))
        monkeypatch.setattr(store_module, "episode_rows", rows_of)
        assert store.query("SELECT count(*) FROM episodes") == [(0,)]
        store.record_episode(_episode("c1", 0, [("check_inventory", None)]))
        assert store.query("SELECT count(*), min(steps) FROM episodes") == [(1, 1)]
        assert store.query("SELECT count(*) FROM steps") == [(1,)]


def test_stored_values_round_trip() -> None:
    episode = _episode("c1", 0, [("assign_warehouse_picker", "invalid_arguments"), ("check_inventory", None)])
    episode = episode.model_copy(update={"messages": [{"role": "user", "content": [{"text": "naïve 'quote' \\"}]}]})
    assert episode.verdict is not None
    with RolloutStore(":memory:") as store:
        store.start_run(_run())
        store.record_episode(episode)
        row = store.query(
            "SELECT status, reward, checks_passed, checks_total, steps, input_tokens, output_tokens, model_calls, "
            "latency_s, final_answer, verdict::VARCHAR, messages::VARCHAR, epoch_us(started_at), "
            "epoch_us(finished_at) FROM episodes"
        )[0]
        steps = store.query(
            "SELECT step, tool, kind, arguments::VARCHAR, result::VARCHAR, error_code, error_message, latency_s "
            "FROM steps ORDER BY step"
        )
        evidence = store.query("SELECT check_id, passed, category, evidence::VARCHAR FROM check_verdicts ORDER BY 1")
    epoch_us = [int(moment.timestamp() * 1_000_000) for moment in (episode.started_at, episode.finished_at)]
    assert row == (
        "failed", 0.0, 1, 2, 2, 10, 5, 2, 0.5, "done", episode.verdict.to_json(),
        json.dumps(episode.messages, ensure_ascii=False, sort_keys=True), *epoch_us,
    )  # fmt: skip
    assert steps == [
        (0, "assign_warehouse_picker", "write", '{"n": 0}', '{"ok": true}', "invalid_arguments", "bad", 0.1),
        (1, "check_inventory", "read", '{"n": 1}', '{"ok": true}', None, None, 0.1),
    ]
    assert [(c.check_id, c.passed, c.category.value if c.category else None) for c in episode.verdict.checks] == [
        row[:3] for row in evidence
    ]
    assert [json.loads(row[3]) for row in evidence] == [
        json.loads(OUTCOME_ADAPTER.dump_json(c.evidence)) for c in episode.verdict.checks
    ]


def test_resuming_a_run_with_other_settings_is_refused() -> None:
    with RolloutStore(":memory:") as store:
        store.start_run(_run())
        store.start_run(_run())  # same settings: resume
        with pytest.raises(StoreError, match="model: 'scripted' -> 'other'"):
            store.start_run(RunRecord(run_id="r1", suite="operations", model="other", agent="oracle"))


def test_newer_database_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "db.duckdb"
    with RolloutStore(path) as store:
        store.conn.execute("INSERT INTO schema_migrations VALUES (99, now())")
    with pytest.raises(StoreError, match="newer than this mantra-env"):
        RolloutStore(path)


@pytest.mark.slow
def test_sigkill_mid_write_loses_no_finished_episode(tmp_path: Path) -> None:
    """A writer killed with SIGKILL while writing keeps every committed episode and no partial one."""
    path = tmp_path / "db.duckdb"
    script = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_store import _episode, _run
        from mantra_env.store import RolloutStore
        store = RolloutStore({str(path)!r})
        store.start_run(_run())
        for attempt in range(5):
            store.record_episode(_episode("c1", attempt, [("check_inventory", None)] * 3))
        store.conn.execute("BEGIN TRANSACTION")
        store.conn.execute("INSERT INTO episodes SELECT * REPLACE (99 AS attempt) FROM episodes LIMIT 1")
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == -9, result.stderr
    with RolloutStore(path) as store:
        assert store.finished_keys("r1") == {("c1", a) for a in range(5)}
        assert store.query("SELECT count(*) FROM steps") == [(15,)]


def test_d4_an_error_episode_is_replaced_atomically_and_nothing_else_is() -> None:
    with RolloutStore(":memory:") as store:
        store.start_run(_run())
        store.record_episode(EpisodeRecord(run_id="r1", case_id="c1", attempt=0, status="error", error_kind="server"))
        store.record_episode(_episode("c2", 0, [("check_inventory", None)]))
        assert store.error_keys("r1") == {("c1", 0)}
        store.record_episode(_episode("c1", 0, [("check_inventory", None)] * 2), replaces_error=True)
        assert store.query("SELECT case_id, status, steps FROM episodes ORDER BY 1") == [
            ("c1", "failed", 2),
            ("c2", "failed", 1),
        ]
        assert store.query("SELECT count(*) FROM steps WHERE case_id = 'c1'") == [(2,)]
        assert store.error_keys("r1") == set()
        with pytest.raises(StoreError, match="already recorded"):  # a scored episode is never replaced
            store.record_episode(_episode("c2", 0, [("po", None)]), replaces_error=True)
        assert store.query("SELECT tool FROM steps WHERE case_id = 'c2'") == [("check_inventory",)]


def test_a_failed_migration_is_one_clear_error_and_leaves_the_file_at_its_version(tmp_path: Path) -> None:
    import duckdb

    path = tmp_path / "db.duckdb"
    with RolloutStore(path) as store:  # back to version 1, but with a view in the way of migration 2
        store.conn.execute("DELETE FROM schema_migrations WHERE version > 1")
        store.conn.execute("ALTER TABLE runs DROP COLUMN suite_hash; ALTER TABLE runs DROP COLUMN settings")
        store.conn.execute("ALTER TABLE runs DROP COLUMN grader_version")
        store.conn.execute("ALTER TABLE episodes DROP COLUMN all_checks_passed")
        store.conn.execute("ALTER TABLE episodes DROP COLUMN unrequested_writes")
    with pytest.raises(StoreError, match=r"cannot migrate rollout database .* to schema version 2 .*left at version 1"):
        RolloutStore(path)
    conn = duckdb.connect(str(path), read_only=True)
    assert conn.execute("SELECT max(version) FROM schema_migrations").fetchall() == [(1,)]
    conn.close()
