"""The database records a scenario writer sees: a seeded, budgeted selection of whole records relevant to its
sample, so that across samples the scenarios use the whole database rather than its first few records.

Domain-agnostic: the collections are the database's top-level mappings of records, the ids are their keys (and
the keys of records nested in them, e.g. a product's variants), and a sample's tools say which collections
matter through their parameter names (``order_id`` → ``orders``, ``item_ids`` → ``items``, or a collection whose
records carry a field of that name). From seeded anchors of those collections the selection follows the ids a
record mentions (a user's orders, the products an order's items belong to) up to two steps away.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mantra_env.tools import ToolSpec

DEFAULT_BUDGET_CHARS = 6_000  # fits an 8k-context local model beside the excerpt, the tools and the schema
SETTINGS_MAX_CHARS = 500  # a small top-level section that is no collection (a policy) is shown whole
_FOLLOW_DEPTH = 2  # anchor → the records it names → the records those name
_ID_TOKEN = re.compile(r"[#\w][\w.-]*")


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def _is_collection(value: Any) -> bool:
    return isinstance(value, dict) and bool(value) and all(isinstance(record, dict) for record in value.values())


@dataclass(frozen=True)
class DatabaseIndex:
    """Where every id of a database lives: ``owner[id]`` is the top-level record ``(collection, key)`` that is or
    holds the record with that id."""

    collections: dict[str, dict[str, Any]]
    settings: dict[str, Any]
    owner: dict[str, tuple[str, str]]

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> DatabaseIndex:
        collections = {name: value for name, value in data.items() if _is_collection(value)}
        settings = {name: value for name, value in data.items() if name not in collections and value}
        owner: dict[str, tuple[str, str]] = {}
        for name in sorted(collections):
            for key in collections[name]:
                owner.setdefault(key, (name, key))
        for name in sorted(collections):  # nested record ids (a product's variants) point at their holder
            for key, record in collections[name].items():
                for nested in _nested_keys(record):
                    owner.setdefault(nested, (name, key))
        return cls(collections, settings, owner)

    def referenced(self, record: Any) -> list[tuple[str, str]]:
        """The top-level records whose ids appear as values in ``record`` (in order of appearance)."""
        found: list[tuple[str, str]] = []
        for text in _strings(record):
            place = self.owner.get(text)
            if place is not None and place not in found:
                found.append(place)
        return found

    def addressed_by(self, parameters: Iterable[str], by_fields: bool = False) -> list[str]:
        """The collections a tool parameter names: by stem (``order_id``/``order_ids`` → ``orders``) or by a
        field of that name in the collection's records. With ``by_fields`` a parameter that is no ``*_id`` also
        names the collections whose records hold a field of its name or its plural (``zip_code`` → the outages'
        ``zip_codes``, ``flight_number`` → ``flights``): the records such a tool looks up by value."""
        chosen: list[str] = []
        for parameter in parameters:
            stem = re.sub(r"_ids?$", "", parameter)
            if stem == parameter:
                if by_fields:
                    chosen += [name for name in self._holding(parameter, f"{parameter}s") if name not in chosen]
                continue
            plurals = {stem, f"{stem}s", f"{stem}es", f"{stem[:-1]}ies" if stem.endswith("y") else stem}
            for name in sorted(self.collections):
                first = next(iter(self.collections[name].values()))
                if (name in plurals or parameter in first) and name not in chosen:
                    chosen.append(name)
        return chosen

    def _holding(self, *fields: str) -> list[str]:
        """The collections whose (first) record has one of ``fields``."""
        return [
            name
            for name in sorted(self.collections)
            if any(field in next(iter(self.collections[name].values())) for field in fields)
        ]


def _nested_keys(record: Any) -> Iterable[str]:
    if isinstance(record, dict):
        for value in record.values():
            if _is_collection(value):
                yield from value
            yield from _nested_keys(value)
    elif isinstance(record, list):
        for value in record:
            yield from _nested_keys(value)


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def sample_rng(seed: int, sample_id: str) -> random.Random:
    """A generator seeded by the run's seed and the sample (stable across processes, unlike ``hash``)."""
    digest = hashlib.sha256(f"{seed}:{sample_id}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def select_records(
    data: Mapping[str, Any],
    tools: Sequence[ToolSpec],
    excerpt: str,
    rng: random.Random,
    budget: int = DEFAULT_BUDGET_CHARS,
    by_fields: bool = False,
) -> list[tuple[str, str]]:
    """Whole records ``(collection, key)`` for one sample, at most ``budget`` characters of compact JSON: the
    records the excerpt names, then seeded anchors of the collections the tools address (``by_fields``: also
    through their parameters that are no ids, :meth:`DatabaseIndex.addressed_by`), each with the records it
    names (two steps), round-robin over those collections until the budget is spent."""
    index = DatabaseIndex.of(data)
    sizes: dict[tuple[str, str], int] = {}
    chosen: list[tuple[str, str]] = []
    spent = 0

    def take(place: tuple[str, str]) -> bool:
        nonlocal spent
        if place in chosen:
            return True
        size = sizes.setdefault(place, len(_compact(index.collections[place[0]][place[1]])) + len(place[1]) + 4)
        if spent + size > budget:
            return False
        chosen.append(place)
        spent += size
        return True

    def take_with_references(anchor: tuple[str, str]) -> None:
        if not take(anchor):
            return
        frontier = [anchor]
        for _ in range(_FOLLOW_DEPTH):
            following: list[tuple[str, str]] = []
            for place in frontier:
                for named in index.referenced(index.collections[place[0]][place[1]]):
                    if named not in chosen and take(named):
                        following.append(named)
            frontier = following

    for token in dict.fromkeys(_ID_TOKEN.findall(excerpt)):
        if token in index.owner:
            take_with_references(index.owner[token])
    parameters = [name for spec in tools for name in spec.properties]
    anchors = index.addressed_by(parameters, by_fields) or sorted(index.collections)
    pools = {name: sorted(index.collections[name]) for name in anchors}
    for pool in pools.values():
        rng.shuffle(pool)
    misses = 0
    while misses < 2 * len(anchors) and any(pools.values()):
        for name in anchors:
            if not pools[name]:
                continue
            before = spent
            take_with_references((name, pools[name].pop()))
            misses = misses + 1 if spent == before else 0
    return chosen


def records_text(data: Mapping[str, Any], places: Sequence[tuple[str, str]]) -> str:
    """The selection as the scenario prompt shows it: one ``collection.key: record`` line each (the same paths a
    ``database_patch`` addresses), after the small settings sections."""
    index = DatabaseIndex.of(data)
    lines = [
        f"{name}: {_compact(value)}"
        for name, value in index.settings.items()
        if len(_compact(value)) <= SETTINGS_MAX_CHARS
    ]
    lines += [f"{name}.{key}: {_compact(index.collections[name][key])}" for name, key in places]
    return "\n".join(lines)


def database_view(
    data: Mapping[str, Any],
    tools: Sequence[ToolSpec],
    excerpt: str,
    seed: int,
    sample_id: str,
    budget: int = DEFAULT_BUDGET_CHARS,
    by_fields: bool = False,
) -> str:
    """The records the scenario writer of ``sample_id`` sees (deterministic for a seed and a sample)."""
    return records_text(data, select_records(data, tools, excerpt, sample_rng(seed, sample_id), budget, by_fields))
