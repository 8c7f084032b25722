"""Helpers of the domain toolkit tests: a call that must succeed, a call that must be refused without changing
the database, and what an episode's copy-on-write view changed."""

from __future__ import annotations

from typing import Any

from mantra_env.domains.overlay import OverlayDatabase, Table, peek
from mantra_env.toolkit import Toolkit
from mantra_env.trace import ToolError


def database_of(toolkit: Toolkit) -> OverlayDatabase:
    database = getattr(toolkit, "db", None)
    assert isinstance(database, OverlayDatabase)
    return database


def ok(toolkit: Toolkit, tool: str, **args: Any) -> Any:
    result, error = toolkit.execute(tool, args)
    assert error is None, error
    return result


def changed_records(database: OverlayDatabase) -> dict[str, dict[str, Any]]:
    """The records an episode changed, added (or removed: None), as JSON: the rest is the base."""
    return {
        name: {
            key: peek(getattr(database, name), key).model_dump(mode="json") if key in getattr(database, name) else None
            for key in keys
        }
        for name, keys in database.changes().items()
    }


def refused(toolkit: Toolkit, tool: str, **args: Any) -> ToolError:
    before = changed_records(database_of(toolkit))
    result, error = toolkit.execute(tool, args)
    assert error is not None and result is None, (tool, args, result)
    assert changed_records(database_of(toolkit)) == before, f"a refused {tool} changed the database"
    return error


def tables(database: OverlayDatabase) -> list[Table[Any]]:
    return [getattr(database, name) for name in database.record_types]
