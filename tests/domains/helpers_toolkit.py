"""Helpers of the domain toolkit tests: a call that must succeed, a call that must be refused without changing
the database, what an episode's copy-on-write view changed, and the checks every domain's tests make."""

from __future__ import annotations

import json
from typing import Any

from mantra_env.domains import Domain
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


def assert_manual_names_its_tools(domain: Domain) -> None:
    """The manual names every write tool and every identity lookup (``find_...``) in backticks."""
    for name, kind in domain.episode_constants.kinds.items():
        if kind == "write" or name.startswith("find_"):
            assert f"`{name}`" in domain.manual, f"the manual never names {name}"


def assert_a_reset_gives_the_base_back(domain: Domain) -> None:
    """A fresh database (what a reset builds) and the shared base both dump to the domain's base data."""
    base_text = json.dumps(domain.base_data, sort_keys=True)
    after_reset = domain.fresh_database()
    assert isinstance(after_reset, OverlayDatabase) and after_reset.changes() == {}
    assert json.dumps(after_reset.dump(), sort_keys=True) == base_text
    base = domain._overlay_base
    assert base is not None and json.dumps(base.dump(), sort_keys=True) == base_text
