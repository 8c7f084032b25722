"""What a database file holds, checked before the store trusts or writes it.

A rollout database may come from elsewhere: an older or newer mantra-env, another application, or someone who
crafted it. Before anything is read or written, :func:`checked_version` finds the file's schema version and
refuses a file that is not a rollout database (tables but no ``schema_migrations``, or mantra tables whose
columns are not those the migrations create) without writing to it. The ``v_*`` views are never taken from the
file: :data:`~mantra_env.store.migrations.VIEWS` recreates them when writing and shadows them with temporary
views when reading. Connections have DuckDB's file access and extension auto-loading off
(:func:`~mantra_env.store.appender.connect`), so even a query the checks miss cannot read a local file.
"""

from __future__ import annotations

import functools

import duckdb

from mantra_env.store.appender import SAFE_CONFIG
from mantra_env.store.errors import StoreError
from mantra_env.store.migrations import MIGRATIONS, VIEWS

LATEST = len(MIGRATIONS)
TABLES = ("runs", "episodes", "steps", "check_verdicts")
_Columns = tuple[tuple[str, int, str, str, str | None, bool], ...]


def _relations(conn: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """The file's own tables and views (not temporary ones), by name."""
    rows = conn.execute(
        "SELECT table_name, 'table' FROM duckdb_tables() WHERE database_name = current_database() "
        "AND schema_name = 'main' UNION ALL SELECT view_name, 'view' FROM duckdb_views() "
        "WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal"
    ).fetchall()
    return {str(name): str(kind) for name, kind in rows}


def _columns(conn: duckdb.DuckDBPyConnection, names: tuple[str, ...]) -> _Columns:
    rows = conn.execute(
        "SELECT table_name, column_index, column_name, data_type, coalesce(column_default, generation_expression), "
        "is_nullable FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = 'main' "
        "AND table_name IN (SELECT unnest(?)) "
        "ORDER BY table_name, column_index",
        [list(names)],
    ).fetchall()
    return tuple((str(t), int(i), str(c), str(d), None if x is None else str(x), bool(n)) for t, i, c, d, x, n in rows)


@functools.cache
def _expected_columns(version: int) -> _Columns:
    """The columns of the mantra tables after migrations 1..``version`` (from a scratch in-memory database)."""
    conn = duckdb.connect(":memory:", config=SAFE_CONFIG)
    try:
        conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ)")
        for sql in MIGRATIONS[:version]:
            conn.execute(sql)
        return _columns(conn, (*TABLES, "schema_migrations"))
    finally:
        conn.close()


def _foreign(path: str, why: str) -> StoreError:
    return StoreError(f"{path} is not a mantra-env rollout database ({why}); it was left untouched: use another --db")


def checked_version(conn: duckdb.DuckDBPyConnection, path: str) -> int:
    """The schema version of the file behind ``conn`` (0: an empty database), after checking that its mantra
    tables are exactly those the migrations up to that version create. Reads only."""
    relations = _relations(conn)
    if "schema_migrations" not in relations:
        if relations:
            shown = ", ".join(sorted(relations)[:5])
            raise _foreign(path, f"it holds {shown} but no schema_migrations table")
        return 0
    try:
        row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    except duckdb.Error:
        raise _foreign(path, "its schema_migrations table is not mantra-env's") from None
    version = int(row[0]) if row and isinstance(row[0], int) else 0
    if version > LATEST:
        raise StoreError(
            f"rollout database {path} has schema version {version}, newer than this mantra-env ({LATEST}); "
            "upgrade mantra-env or use another --db"
        )
    if version < 1:
        raise _foreign(path, "its schema_migrations table records no migration")
    wanted = ("schema_migrations", *TABLES)
    not_tables = [name for name in wanted if relations.get(name) == "view"]
    if not_tables:
        raise _foreign(path, f"{', '.join(not_tables)} should be tables but are views")
    if _columns(conn, wanted) != _expected_columns(version):
        raise _foreign(path, f"its tables do not have the columns of mantra-env's schema version {version}")
    return version


def check_readable(conn: duckdb.DuckDBPyConnection, path: str) -> None:
    """Refuse a file that readers cannot use as it is, then shadow its views with this mantra-env's own."""
    version = checked_version(conn, path)
    if version == 0:
        raise StoreError(f"{path} holds no rollout tables: run `python -m mantra_env.run --db {path}` first")
    if version < LATEST:
        raise StoreError(
            f"rollout database {path} has schema version {version}, older than this mantra-env's ({LATEST}); "
            f"upgrade it once with `python -m mantra_env.store --db {path}` (runs stay as they are)"
        )
    conn.execute(VIEWS.replace("CREATE OR REPLACE VIEW", "CREATE OR REPLACE TEMP VIEW"))
