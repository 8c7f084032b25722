"""Copy-on-write databases: one validated base shared by every episode, plus each episode's own copies of the
records it touched.

A domain's database model may derive from :class:`OverlayDatabase`; its fields are then all *tables*
(``dict[str, Record]`` with a pydantic record type). The base data is validated once per domain. Each episode
gets a *view* (:meth:`OverlayDatabase.episode`): the same model built without validation, with a :class:`Table`
in place of each dict. A table copies a base record the first time the episode asks for it by key
(``table[key]``, ``table.get(key)``), so tools change the records they get in place, as they would a plain
dict's, and the base never changes. Reading without copying goes through :func:`peek` (one record),
:func:`scan` (all) and :func:`find` (records by an indexed key, e.g. a user by email): read only, change a record
only after getting it by key. A reset builds a new view: O(tables + patch); the previous episode's copies go with
its view. A database patch copies (or adds, or removes) only the records it addresses and validates only those.

Copies are parsed from the base record's JSON text (pydantic's JSON round trip is ~3x faster than a deep copy;
each base record's text is computed once and shared by every view, like the indexes :func:`find` builds).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping, MutableMapping, Sequence
from functools import cache
from typing import Any, ClassVar, Generic, Self, TypeVar, cast, get_args, get_origin

from pydantic import BaseModel, ConfigDict, PrivateAttr, TypeAdapter

R = TypeVar("R", bound=BaseModel)


class _Shared:
    """What every view of one base table shares: base records as JSON text, indexes by key function."""

    __slots__ = ("indexes", "texts")

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}
        self.indexes: dict[Callable[[Any], Hashable], dict[Hashable, list[str]]] = {}


class Table(MutableMapping[str, R], Generic[R]):
    """A dict of records over a shared, never-changed base: records are copied on first access by key."""

    __slots__ = ("_base", "_copies", "_removed", "_shared")

    def __init__(self, base: Mapping[str, R], shared: _Shared | None = None) -> None:
        self._base = base
        self._shared = shared or _Shared()
        self._copies: dict[str, R] = {}
        self._removed: set[str] = set()  # base keys deleted in this episode

    def __getitem__(self, key: str) -> R:
        record = self._copies.get(key)
        if record is not None:
            return record
        if key in self._removed:
            raise KeyError(key)
        original = self._base[key]
        text = self._shared.texts.get(key)
        if text is None:
            text = self._shared.texts[key] = original.model_dump_json()
        record = type(original).model_validate_json(text)
        self._copies[key] = record
        return record

    def __setitem__(self, key: str, record: R) -> None:
        self._copies[key] = record
        self._removed.discard(key)

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        self._copies.pop(key, None)
        if key in self._base:
            self._removed.add(key)

    def __contains__(self, key: object) -> bool:
        return key in self._copies or (key in self._base and key not in self._removed)

    def __iter__(self) -> Iterator[str]:
        removed, copies = self._removed, self._copies
        yield from (key for key in self._base if key not in removed)
        yield from (key for key in copies if key not in self._base)

    def __len__(self) -> int:
        return len(self._base) - len(self._removed) + sum(1 for key in self._copies if key not in self._base)

    def peek(self, key: str) -> R:
        """The current record without copying it: read only."""
        record = self._copies.get(key)
        if record is not None:
            return record
        if key in self._removed:
            raise KeyError(key)
        return self._base[key]

    def scan(self) -> Iterator[R]:
        """Every current record without copying it: read only."""
        for key in self:
            yield self.peek(key)

    def find(self, key: Callable[[R], Hashable], value: Hashable) -> list[str]:
        """Keys of the current records with ``key(record) == value``: O(matches + records touched), through an
        index over the base built on first use and shared by every view. ``key`` must be a module-level function
        (indexes are cached by it)."""
        index = self._shared.indexes.get(key)
        if index is None:
            index = {}
            for record_id, record in self._base.items():
                index.setdefault(key(record), []).append(record_id)
            self._shared.indexes[key] = index
        copies, removed = self._copies, self._removed
        found = [k for k in index.get(value, ()) if k not in copies and k not in removed]
        return found + [k for k, record in copies.items() if key(record) == value]

    @property
    def touched(self) -> int:
        """How many records this episode copied, added or removed."""
        return len(self._copies) + len(self._removed)

    def changed(self) -> list[str]:
        """Keys whose record differs from the base (changed, added or removed): O(records touched)."""
        base = self._base
        edited = [key for key, record in self._copies.items() if key not in base or record != base[key]]
        return sorted([*edited, *self._removed])


def scan(table: Mapping[str, R]) -> Iterator[R]:
    """The records of a table (a :class:`Table` or a plain dict) for reading, without copy-on-write copies."""
    return table.scan() if isinstance(table, Table) else iter(table.values())


def peek(table: Mapping[str, R], key: str) -> R:
    """One record of a table (a :class:`Table` or a plain dict) for reading, without a copy-on-write copy."""
    return table.peek(key) if isinstance(table, Table) else table[key]


def find(table: Mapping[str, R], key: Callable[[R], Hashable], value: Hashable) -> list[str]:
    """Keys of a table's records with ``key(record) == value`` (indexed for a :class:`Table`, see its ``find``)."""
    if isinstance(table, Table):
        return table.find(key, value)
    return [record_id for record_id, record in table.items() if key(record) == value]


class OverlayDatabase(BaseModel):
    """Base class of a database made only of tables, with copy-on-write episode views (see the module doc)."""

    model_config = ConfigDict(extra="forbid")
    record_types: ClassVar[Mapping[str, type[BaseModel]]] = {}
    _shared: dict[str, _Shared] = PrivateAttr(default_factory=dict)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        types: dict[str, type[BaseModel]] = {}
        for name, info in cls.model_fields.items():
            args = get_args(info.annotation)
            if get_origin(info.annotation) is not dict or args[0] is not str or not _is_model(args[1]):
                raise TypeError(f"{cls.__name__}.{name}: an OverlayDatabase field must be dict[str, <pydantic model>]")
            types[name] = args[1]
        cls.record_types = types

    def episode(self, patch: Sequence[dict[str, Any]] | None = None) -> Self:
        """A copy-on-write view of this (base) database, with ``patch`` applied to the view only.

        Raises:
            DomainError: a patch operation is malformed or addresses nothing.
            pydantic.ValidationError: a patched record is invalid.
        """
        if any(isinstance(getattr(self, name), Table) for name in self.record_types):
            raise TypeError("episode() makes a view of the base database, not of another view")
        shared = self._shared
        tables: dict[str, Any] = {
            name: Table(getattr(self, name), shared.setdefault(name, _Shared())) for name in self.record_types
        }
        view = cast(Self, type(self).model_construct(None, **tables))
        for position, operation in enumerate(patch or ()):
            _apply(view, operation, f"database_patch[{position}]")
        return view

    def changes(self) -> dict[str, list[str]]:
        """Per table, the keys of the records a view changed, added or removed (empty tables left out)."""
        tables = {name: getattr(self, name) for name in self.record_types}
        return {name: keys for name, table in tables.items() if isinstance(table, Table) and (keys := table.changed())}

    def dump(self) -> dict[str, Any]:
        """The whole database as JSON data (base or view), without copying records on the way."""
        return {
            name: {record_id: record.model_dump(mode="json") for record_id, record in _items(getattr(self, name))}
            for name in self.record_types
        }


def _items(table: Mapping[str, R]) -> Iterator[tuple[str, R]]:
    if isinstance(table, Table):
        return ((key, table.peek(key)) for key in table)
    return iter(table.items())


def _is_model(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


@cache
def _table_adapter(record_type: type[BaseModel]) -> TypeAdapter[dict[str, Any]]:
    return TypeAdapter(dict[str, record_type])  # type: ignore[valid-type]


def _apply(view: OverlayDatabase, operation: dict[str, Any], where: str) -> None:
    """One patch operation on a view: copy (or add, or remove) the record it addresses, validate that record."""
    from mantra_env.domains import (  # not at the top: that package imports this module
        DomainError,
        apply_patch_operation,
    )

    op, path = operation.get("op"), operation.get("path")
    if op not in ("set", "remove") or not isinstance(path, str) or not path:
        apply_patch_operation({}, operation, where)  # raises the shared "expected {op, path, value}" error
    assert isinstance(path, str)
    table_name, _, rest = path.partition(".")
    record_type = view.record_types.get(table_name)
    if record_type is None:
        raise DomainError(f"{where}: path {path!r} does not exist (the tables are: {', '.join(view.record_types)})")
    if op == "set" and "value" not in operation:
        raise DomainError(f"{where}: a 'set' needs a 'value'")
    if not rest:
        if op == "remove":
            raise DomainError(f"{where}: cannot remove the table {table_name!r}; remove its records instead")
        setattr(view, table_name, Table(_table_adapter(record_type).validate_python(operation["value"])))
        return
    table: Table[Any] = getattr(view, table_name)
    key, _, inner = rest.partition(".")
    if not inner:
        if op == "set":
            table[key] = record_type.model_validate(operation["value"])
        elif key in table:
            del table[key]
        else:
            raise DomainError(f"{where}: cannot remove {path!r}: it does not exist")
        return
    if key not in table:
        raise DomainError(f"{where}: path {table_name}.{key!r} does not exist")
    data = table.peek(key).model_dump()
    apply_patch_operation(data, {**operation, "path": inner}, f"{where} (in {table_name}.{key})")
    table[key] = record_type.model_validate(data)


__all__ = ["OverlayDatabase", "Table", "find", "peek", "scan"]
