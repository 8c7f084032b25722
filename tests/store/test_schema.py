"""Databases the store did not create: foreign files, other schema versions, crafted views (D10, D16)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import duckdb
import pytest

from mantra_env.store import EpisodeRecord, RolloutStore, RunRecord, StoreError
from mantra_env.store.appender import connect
from mantra_env.store.migrations import MIGRATIONS
from mantra_env.store.schema import LATEST


def _tables(path: Path) -> list[str]:
    conn = duckdb.connect(str(path), read_only=True)
    try:
        return sorted(str(r[0]) for r in conn.execute("SELECT table_name FROM duckdb_tables()").fetchall())
    finally:
        conn.close()


def _foreign_db(path: Path) -> None:
    conn = duckdb.connect(str(path))
    conn.execute("CREATE TABLE runs (id INTEGER, owner VARCHAR)")
    conn.execute("INSERT INTO runs VALUES (1, 'another app')")
    conn.close()


def _v1_db(path: Path) -> None:
    """A database as mantra-env's schema version 1 left it (no views, no suite hash), with one run."""
    conn = duckdb.connect(str(path))
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ)")
    conn.execute(MIGRATIONS[0])
    conn.execute("INSERT INTO schema_migrations VALUES (1, now())")
    conn.execute("INSERT INTO runs VALUES ('old', '', 'operations/starter', 0, 'm', 'a', '', '{}', now())")
    conn.close()


@pytest.mark.parametrize("read_only", [False, True])
def test_d10_another_applications_database_is_refused_and_left_untouched(tmp_path: Path, read_only: bool) -> None:
    path = tmp_path / "other.duckdb"
    _foreign_db(path)
    with pytest.raises(StoreError, match=r"is not a mantra-env rollout database \(it holds runs but no"):
        RolloutStore(path, read_only=read_only)
    assert _tables(path) == ["runs"]  # no schema_migrations was created in it


def test_d10_mantra_tables_with_other_columns_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "db.duckdb"
    RolloutStore(path).close()
    conn = duckdb.connect(str(path))
    conn.execute("ALTER TABLE episodes ADD COLUMN extra VARCHAR")
    conn.close()
    for read_only in (False, True):
        with pytest.raises(StoreError, match="do not have the columns of mantra-env's schema version"):
            RolloutStore(path, read_only=read_only)


def test_d10_an_older_schema_is_migrated_when_writing_and_explained_when_reading(tmp_path: Path) -> None:
    path = tmp_path / "v1.duckdb"
    _v1_db(path)
    with pytest.raises(StoreError, match=rf"schema version 1, older .*\({LATEST}\); upgrade it once with"):
        RolloutStore(path, read_only=True)
    with RolloutStore(path) as store:  # writing migrates; the old run keeps working, without a hash
        assert store.schema_version == LATEST
        old = store.run_record("old")
        assert old is not None and old.suite_hash is None and old.settings == {}
        assert store.task_counts("old") == []
    with RolloutStore(path, read_only=True) as store:
        assert store.schema_version == LATEST


def test_d10_the_upgrade_command_migrates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mantra_env.store.__main__ import main

    path = tmp_path / "v1.duckdb"
    _v1_db(path)
    assert main(["--db", str(path)]) == 0
    assert f"schema version {LATEST}" in capsys.readouterr().out
    assert main(["--db", str(tmp_path / "missing.duckdb")]) == 2
    assert "no rollout database" in capsys.readouterr().err


def test_d10_a_newer_schema_is_refused_for_reading_too(tmp_path: Path) -> None:
    path = tmp_path / "db.duckdb"
    with RolloutStore(path) as store:
        store.conn.execute("INSERT INTO schema_migrations VALUES (99, now())")
    with pytest.raises(StoreError, match="newer than this mantra-env"):
        RolloutStore(path, read_only=True)


def test_d16_views_stored_in_the_file_are_not_trusted(tmp_path: Path) -> None:
    path = tmp_path / "db.duckdb"
    with RolloutStore(path) as store:
        store.start_run(RunRecord(run_id="r", suite="s", model="m", agent="a"))
        store.record_episode(EpisodeRecord(run_id="r", case_id="c", attempt=0, status="passed"))
    conn = duckdb.connect(str(path))
    conn.execute("CREATE OR REPLACE VIEW v_task_counts AS SELECT 'r' AS run_id, 'forged' AS case_id, 9 AS attempts, "
                 "9 AS passed, 0 AS errors")  # fmt: skip
    conn.close()
    with RolloutStore(path, read_only=True) as store:  # reading shadows the file's views with mantra-env's own
        assert store.task_counts("r") == [("c", 1, 1, 0)]
    with RolloutStore(path) as store:  # writing recreates them
        assert store.task_counts("r") == [("c", 1, 1, 0)]
        assert "forged" not in str(store.query("SELECT sql FROM duckdb_views() WHERE view_name = 'v_task_counts'"))


def test_d16_connections_cannot_read_local_files_or_load_extensions(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET\n")
    for read_only in (False, True):
        if read_only:
            RolloutStore(tmp_path / "db.duckdb").close()
        with RolloutStore(tmp_path / "db.duckdb", read_only=read_only) as store, pytest.raises(duckdb.Error):
            store.query(f"SELECT content FROM read_text('{secret}')")
    conn = connect(str(tmp_path / "db.duckdb"))  # what the writer process opens the file with
    try:
        settings = conn.execute(
            "SELECT current_setting('enable_external_access'), current_setting('autoinstall_known_extensions'), "
            "current_setting('autoload_known_extensions')"
        ).fetchone()
    finally:
        conn.close()
    assert settings == (False, False, False)


def test_d16_a_sqlite_file_is_refused_without_loading_an_extension(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "x.sqlite"
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE runs (a)")
        conn.commit()
    before = path.read_bytes()
    with pytest.raises(StoreError, match=r"it is not a DuckDB database .* e\.g\. for SQLite"):
        RolloutStore(path)
    assert path.read_bytes() == before
