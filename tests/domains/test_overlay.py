"""Copy-on-write tables and databases: a Table behaves like a dict copied from its base, and never changes it."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from mantra_env.domains.overlay import OverlayDatabase, Table, find, peek, scan


class Box(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str
    items: list[int]


class Store(OverlayDatabase):
    boxes: dict[str, Box]


def base() -> dict[str, Box]:
    return {key: Box(label=key.upper(), items=[i]) for i, key in enumerate("abcd")}


def _label(box: Box) -> str:
    return box.label


def test_records_are_copied_on_first_access_by_key_and_the_base_never_changes() -> None:
    shared = base()
    table = Table(shared)
    assert table.touched == 0 and len(table) == 4 and list(table) == ["a", "b", "c", "d"]
    box = table["a"]
    box.items.append(9)
    assert table["a"] is box and table["a"].items == [0, 9] and shared["a"].items == [0]
    assert peek(table, "b") is shared["b"] and [b.label for b in scan(table)] == ["A", "B", "C", "D"]
    assert table.touched == 1 and table.changed() == ["a"]
    table["e"] = Box(label="E", items=[])
    del table["b"]
    assert list(table) == ["a", "c", "d", "e"] and len(table) == 4 and "b" not in table and "e" in table
    with pytest.raises(KeyError):
        table["b"]
    with pytest.raises(KeyError):
        del table["zz"]
    assert table.changed() == ["a", "b", "e"] and set(shared) == set("abcd")
    table["a"] = Box(label="A", items=[0])  # equal to the base again: no longer a change
    assert table.changed() == ["b", "e"]


def test_find_uses_a_shared_index_and_sees_the_episode_changes() -> None:
    shared = base()
    table = Table(shared)
    assert find(table, _label, "C") == ["c"] and find(shared, _label, "C") == ["c"]
    table["c"].label = "Z"
    table["n"] = Box(label="C", items=[])
    assert find(table, _label, "C") == ["n"] and find(table, _label, "Z") == ["c"]
    del table["n"]
    assert find(table, _label, "C") == [] and find(Table(shared), _label, "C") == ["c"]


OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(["get", "append", "set", "delete", "find"]), st.sampled_from("abcdef"), st.integers(0, 9)
    ),
    max_size=30,
)


@given(OPERATIONS)
def test_a_table_behaves_like_a_dict_copy_of_its_base(operations: list[tuple[str, str, int]]) -> None:
    shared = base()
    before = copy.deepcopy(shared)
    table, model = Table(shared), copy.deepcopy(shared)
    for operation, key, number in operations:
        if operation == "get":
            assert (key in table) == (key in model)
            assert (table.get(key) or None) == model.get(key)
        elif operation == "append" and key in model:
            table[key].items.append(number)
            model[key].items.append(number)
        elif operation == "set":
            table[key], model[key] = Box(label=str(number), items=[]), Box(label=str(number), items=[])
        elif operation == "delete" and key in model:
            del table[key], model[key]
        elif operation == "find":
            assert sorted(find(table, _label, str(number))) == sorted(
                k for k, b in model.items() if b.label == str(number)
            )
    assert dict(table.items()) == model and len(table) == len(model)
    assert shared == before
    assert set(table.changed()) == {k for k in {*model, *before} if model.get(k) != before.get(k)}


def test_an_overlay_database_view_is_cheap_and_its_patch_touches_only_its_records() -> None:
    store = Store(boxes=base())
    view = store.episode([{"op": "set", "path": "boxes.a.items.0", "value": 5}])
    assert isinstance(view.boxes, Table) and view.boxes["a"].items == [5] and store.boxes["a"].items == [0]
    assert view.changes() == {"boxes": ["a"]} and view.boxes.touched == 1
    assert store.episode().changes() == {} and store.episode().dump() == store.dump()
    view.boxes["b"].items.clear()
    assert view.dump()["boxes"]["b"] == {"label": "B", "items": []} and store.dump()["boxes"]["b"]["items"] == [1]
    with pytest.raises(TypeError, match="not of another view"):
        view.episode()
    replaced = store.episode([{"op": "set", "path": "boxes", "value": {"z": {"label": "Z", "items": []}}}])
    assert list(replaced.boxes) == ["z"]


def test_an_overlay_database_has_only_tables() -> None:
    with pytest.raises(TypeError, match=r"Bad\.count: an OverlayDatabase field must be dict\[str, <pydantic model>\]"):

        class Bad(OverlayDatabase):
            count: int

    with pytest.raises(TypeError, match="must be dict"):

        class AlsoBad(OverlayDatabase):
            names: dict[str, str]


def test_views_share_the_base_json_and_indexes() -> None:
    store = Store(boxes=base())
    first, second = store.episode(), store.episode()
    first.boxes["a"]
    find(first.boxes, _label, "A")
    shared: Any = store._shared["boxes"]
    assert set(shared.texts) == {"a"} and _label in shared.indexes
    assert second.boxes["a"] == store.boxes["a"] and second.boxes["a"] is not store.boxes["a"]
