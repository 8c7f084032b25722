"""The DuckDB rollout store: append-only, each finished episode committed atomically, keyed by (run, case,
attempt).

One process writes (the runner, or its writer process while a run is in flight: :mod:`mantra_env.store.writer`);
readers use the ``v_*`` views. A reader (``read_only=True``) of a file a run's writer holds reads the writer's
live snapshot instead (:attr:`RolloutStore.snapshot`: the finished episodes as of at most a few seconds ago).
A killed run loses no finished episode and, because the key is unique and the runner skips finished keys on
``--resume``, duplicates none.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import duckdb

from mantra_env.store.appender import (
    DuplicateEpisode,
    EpisodeInserter,
    EpisodeRows,
    LockedError,
    OpenError,
    connect,
    snapshot_path,
)
from mantra_env.store.errors import StoreError
from mantra_env.store.migrations import MIGRATIONS, VIEWS
from mantra_env.store.records import EpisodeRecord, RunRecord, grader_name
from mantra_env.store.schema import check_readable, checked_version
from mantra_env.verdict import OUTCOME_ADAPTER, Verdict

DEFAULT_DB = Path("results") / "mantra.duckdb"


_SURROGATE = re.compile("[\ud800-\udfff]")


def _json(value: Any, *, sort_keys: bool = True) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=sort_keys)
    # A lone surrogate (a model can send "\ud800" in valid JSON) is neither UTF-8 nor JSON DuckDB accepts: it is
    # stored as the six characters of its escape, an escaped backslash inside the JSON string.
    return text if text.isascii() else _SURROGATE.sub(lambda char: f"\\\\u{ord(char[0]):04x}", text)


def _text(value: str | None) -> str | None:
    """``value`` as DuckDB can store it: a lone surrogate becomes the six characters of its escape."""
    if value is None or value.isascii():
        return value
    return _SURROGATE.sub(lambda char: f"\\u{ord(char[0]):04x}", value)


def _unrequested_json(verdict: Verdict | None) -> str | None:
    """The ``unrequested_writes`` column: a JSON list of {step, tool, args}; None when not graded for writes."""
    if verdict is None or verdict.unrequested_writes is None:
        return None
    return _json([write.model_dump(mode="json") for write in verdict.unrequested_writes])


def episode_rows(episode: EpisodeRecord, *, replaces_error: bool = False) -> EpisodeRows:
    """The rows ``episode`` is stored as (column order of the migrations: each appends its columns); ``replaces_error``:
    see :attr:`EpisodeRows.replaces_error`."""
    key = [episode.run_id, episode.case_id, episode.attempt]
    verdict = episode.verdict
    trace = episode.trace
    latencies = episode.step_latencies_s
    return EpisodeRows(
        key=(episode.run_id, episode.case_id, episode.attempt),
        episode=[
            *key,
            episode.status,
            episode.reward,
            verdict.passed_count if verdict else None,
            len(verdict.checks) if verdict else None,
            len(trace.calls),
            episode.usage.input_tokens,
            episode.usage.output_tokens,
            episode.usage.model_calls,
            episode.latency_s,
            episode.error_kind,
            _text(episode.error),
            _text(trace.final_answer),
            verdict.to_json() if verdict else None,
            _json(episode.messages),
            episode.started_at,
            episode.finished_at,
            verdict.checks_passed if verdict else None,
            _unrequested_json(verdict),
        ],
        steps=[
            [
                *key,
                call.step,
                _text(call.tool),
                call.kind,
                _json(call.args),
                _text(call.raw_arguments),
                _json(call.result, sort_keys=False),  # the tool's key order: the export re-serialises it as the env
                call.error.code if call.error else None,
                _text(call.error.message) if call.error else None,
                latencies[call.step] if call.step < len(latencies) else None,
            ]
            for call in trace.calls
        ],
        verdicts=[
            [
                *key,
                check.check_id,
                check.check,
                check.passed,
                check.category.value if check.category else None,
                OUTCOME_ADAPTER.dump_json(check.evidence).decode(),
            ]
            for check in (verdict.checks if verdict else ())
        ],
        replaces_error=replaces_error,
    )


def open_connection(path: str, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """:func:`~mantra_env.store.appender.connect`, failing with :class:`StoreError`."""
    try:
        return connect(path, read_only=read_only)
    except OpenError as error:
        raise StoreError(str(error)) from None


def open_for_reading(path: str) -> tuple[duckdb.DuckDBPyConnection, str | None]:
    """A read-only connection to ``path``, or, while a run's writer holds it, to the writer's live snapshot (the
    second item: the snapshot's path, else None). Without a snapshot, waits for the file like every opening."""
    if path != ":memory:":
        try:
            return connect(path, read_only=True, wait=False), None
        except LockedError:
            snapshot = snapshot_path(path)
            with contextlib.suppress(OpenError):  # gone meanwhile (the run ended): wait for the file below
                return connect(snapshot, read_only=True, wait=False), snapshot
        except OpenError:
            pass  # said again, as the last attempt says it
    return open_connection(path, read_only=True), None


class RolloutStore:
    """A rollout database file (or ``:memory:``), migrated to the latest schema on open."""

    def __init__(self, path: Path | str = DEFAULT_DB, *, read_only: bool = False) -> None:
        self.path = path
        self._inserter: EpisodeInserter | None = None
        target = str(path)
        if target != ":memory:" and not read_only:
            try:
                Path(target).parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise StoreError(
                    f"cannot create the folder of rollout database {target}: {error.strerror or error}"
                ) from None
        self.snapshot: str | None = None
        """The live snapshot read instead of ``path``, which a run's writer holds (read-only stores only)."""
        if read_only:
            self.conn, self.snapshot = open_for_reading(target)
        else:
            self.conn = open_connection(target)
        try:
            if read_only:
                check_readable(self.conn, target)
            else:
                self._migrate(checked_version(self.conn, target))
        except BaseException:
            self.conn.close()
            raise

    # -- lifecycle -------------------------------------------------------------------------------------
    def close(self) -> None:
        if self._inserter is not None:
            self._inserter.close()
            self._inserter = None
        self.conn.close()

    @contextlib.contextmanager
    def handed_over(self) -> Iterator[str]:
        """Let go of the database file for the duration (so that a writer process can open it), then reopen it.
        Yields the file's path."""
        if str(self.path) == ":memory:":
            raise StoreError("an in-memory rollout database cannot be handed to another process")
        self.close()
        try:
            yield str(self.path)
        finally:
            self.conn = open_connection(str(self.path))

    def __enter__(self) -> RolloutStore:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def _migrate(self, current: int) -> None:
        """Apply the migrations after ``current`` (the checked version), each in a transaction with its record,
        then recreate the views."""
        for version, sql in enumerate(MIGRATIONS[current:], start=current + 1):
            self.conn.execute("BEGIN TRANSACTION")
            try:
                if version == 1:  # in the transaction: a failed first migration leaves the file as it was
                    self.conn.execute(
                        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ)"
                    )
                self.conn.execute(sql)
                self.conn.execute("INSERT INTO schema_migrations VALUES (?, now())", [version])
                self.conn.execute("COMMIT")
            except duckdb.Error as error:
                self.conn.execute("ROLLBACK")
                raise StoreError(
                    f"cannot migrate rollout database {self.path} to schema version {version} (it was left at "
                    f"version {version - 1}): {error}"
                ) from None
        self.conn.execute(VIEWS)

    @property
    def schema_version(self) -> int:
        row = self.conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    # -- writing ---------------------------------------------------------------------------------------
    def start_run(self, run: RunRecord) -> None:
        """Record a run; starting a run that exists is a resume, refused when ``run`` differs from the stored one
        in anything that decides its episodes (:meth:`RunRecord.differences`)."""
        existing = self.run_record(run.run_id)
        if existing is not None:
            if existing.grader_version != run.grader_version:
                raise StoreError(
                    f"run {run.run_id!r} was graded by grader version {existing.grader_version} "
                    f"({grader_name(existing.grader_version)}), this mantra-env grades with version "
                    f"{run.grader_version} ({grader_name(run.grader_version)}): resuming it would score its episodes "
                    "two ways; start a new run with another --run-name (the stored run stays as it is)"
                )
            changed = existing.differences(run)
            if changed:
                raise StoreError(
                    f"run {run.run_id!r} was stored with other settings, and resuming it would mix episodes of "
                    f"both: {'; '.join(changed)} (stored -> now); resume it with its settings or choose another "
                    "--run-name"
                )
            return
        self.conn.execute(
            "INSERT INTO runs (run_id, name, suite, suite_version, model, agent, code_version, config, created_at, "
            "suite_hash, settings, grader_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                run.run_id,
                run.name,
                run.suite,
                run.suite_version,
                run.model,
                run.agent,
                run.code_version,
                _json(run.config),
                run.created_at,
                run.suite_hash,
                _json(run.settings),
                run.grader_version,
            ],
        )

    def record_episode(self, episode: EpisodeRecord, *, replaces_error: bool = False) -> None:
        """Write one finished episode, its steps and check verdicts in a single transaction (replacing the key's
        stored ``error`` episode, if ``replaces_error``)."""
        if self._inserter is None:
            self._inserter = EpisodeInserter(self.conn)
        try:
            self._inserter.write(episode_rows(episode, replaces_error=replaces_error))
        except DuplicateEpisode as error:
            raise StoreError(str(error)) from None

    # -- reading ---------------------------------------------------------------------------------------
    def run_record(self, run_id: str) -> RunRecord | None:
        """The stored run ``run_id``, or None."""
        row = self.conn.execute(
            "SELECT run_id, name, suite, suite_version, model, agent, code_version, config, epoch_us(created_at), "
            "suite_hash, settings, coalesce(grader_version, 1) FROM runs WHERE run_id = ?",
            [run_id],
        ).fetchone()
        if row is None:
            return None
        names = ("run_id", "name", "suite", "suite_version", "model", "agent", "code_version", "config")
        fields: dict[str, Any] = dict(zip(names, row[:8], strict=True))
        fields["config"] = json.loads(row[7]) if row[7] else {}
        settings = json.loads(row[10]) if row[10] else {}
        created_at = datetime.fromtimestamp(row[8] / 1e6, UTC)  # fetching a TIMESTAMPTZ needs pytz
        return RunRecord(**fields, created_at=created_at, suite_hash=row[9], settings=settings, grader_version=row[11])

    def runs_of(self, suite: str, model: str) -> list[str]:
        """Ids of the runs of ``suite`` with ``model``, the latest first."""
        rows = self.conn.execute(
            "SELECT run_id FROM runs WHERE suite = ? AND model = ? ORDER BY created_at DESC, run_id DESC",
            [suite, model],
        ).fetchall()
        return [str(row[0]) for row in rows]

    def error_keys(self, run_id: str) -> set[tuple[str, int]]:
        """(case_id, attempt) pairs of ``run_id`` stored as infrastructure errors."""
        rows = self.conn.execute(
            "SELECT case_id, attempt FROM episodes WHERE run_id = ? AND status = 'error'", [run_id]
        ).fetchall()
        return {(str(case_id), int(attempt)) for case_id, attempt in rows}

    def finished_keys(self, run_id: str) -> set[tuple[str, int]]:
        """(case_id, attempt) pairs already recorded for ``run_id``."""
        rows = self.conn.execute("SELECT case_id, attempt FROM episodes WHERE run_id = ?", [run_id]).fetchall()
        return {(str(case_id), int(attempt)) for case_id, attempt in rows}

    def task_counts(self, run_id: str) -> list[tuple[str, int, int, int]]:
        """Per case: (case_id, scored attempts, passed attempts, infrastructure errors), ordered by case."""
        rows = self.conn.execute(
            "SELECT case_id, attempts, passed, errors FROM v_task_counts WHERE run_id = ? ORDER BY case_id",
            [run_id],
        ).fetchall()
        return [(str(c), int(n), int(a), int(e)) for c, n, a, e in rows]

    def query(self, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        """Run a read query (against the ``v_*`` views, typically)."""
        return self.conn.execute(sql, params or []).fetchall()
