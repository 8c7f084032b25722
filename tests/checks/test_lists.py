"""List arguments in checks: permutation matching by default, IN ORDER where the tool schema says so, in the
text and JSON forms, the lazy and compiled matchers, and stamping from the schema."""

from __future__ import annotations

from typing import Annotated

import pytest

from graders import grade
from mantra_env.checks import arg_equal, bag_equal, check_from_json, check_to_json, parse_check
from mantra_env.checks.ast import Call
from mantra_env.toolkit import ORDERED, Toolkit, tool
from mantra_env.tools import ToolSpec, list_order_problem, with_list_order
from mantra_env.trace import Trace


class _Retail(Toolkit):
    @tool(kind="write")
    def exchange_items(self, item_ids: list[str], new_item_ids: Annotated[list[str], ORDERED]) -> str:
        """Exchange items of an order.

        Args:
            item_ids: the items to exchange.
            new_item_ids: the replacements, one per item in item_ids and in the same order.
        """
        return "ok"


SPECS: dict[str, ToolSpec] = {spec.name: spec for spec in _Retail.tool_specs()}


@pytest.mark.parametrize(
    ("pinned", "actual", "ordered", "equal"),
    [
        (["a", "b"], ["b", "a"], False, True),
        (["a", "b"], ["b", "a"], True, False),
        (["a", "b"], [" a", "b "], True, True),  # element strings are trimmed as scalars are
        (["a", "a", "b"], ["a", "b", "b"], False, False),  # each element as often
        (["a", "b"], ["a", "b", "b"], False, False),
        ([1, 2.5], [2.5, 1.0], False, True),
        ([[1, 2]], [[2, 1]], False, False),  # only the top-level list is unordered
        ([], [], False, True),
        (["a"], "a", False, False),
        ("a", ["a"], False, False),
    ],
)
def test_argument_equality_of_lists(pinned: object, actual: object, ordered: bool, equal: bool) -> None:
    assert arg_equal(pinned, actual, ordered) is equal
    if isinstance(pinned, list) and not ordered:
        assert bag_equal(pinned, actual) is equal


def test_in_order_round_trips_through_text_and_json() -> None:
    text = 'CALL exchange_items(item_ids=["a", "b"], new_item_ids=["x", "y"] IN ORDER)'
    check = parse_check(text)
    assert isinstance(check, Call) and check.ordered == ("new_item_ids",)
    assert check.text == text
    assert check_from_json(check_to_json(check)) == check
    assert parse_check('CALL exchange_items(item_ids=["a"])').model_dump(mode="json") == {
        "tool": "exchange_items",
        "args": {"item_ids": ["a"]},
        "op": "call",
    }  # no "ordered" key when nothing is ordered: existing suites keep their bytes


def test_in_order_on_a_value_that_is_not_a_list_is_refused() -> None:
    with pytest.raises(ValueError, match="not a pinned list"):
        Call(tool="t", args={"a": "x"}, ordered=("a",))


@pytest.mark.parametrize("compiled", [False, True])
def test_the_grader_matches_lists_by_the_atoms_order(compiled: bool) -> None:
    check = parse_check('CALL exchange_items(item_ids=["i1", "i2"], new_item_ids=["n1", "n2"] IN ORDER)')
    same_pairs = Trace.of(("exchange_items", {"item_ids": ["i2", "i1"], "new_item_ids": ["n1", "n2"]}))
    swapped = Trace.of(("exchange_items", {"item_ids": ["i1", "i2"], "new_item_ids": ["n2", "n1"]}))
    if compiled:  # the generated one-pass matcher runs when a trace is indexed with its atoms
        assert grade(same_pairs, [check]).passed and not grade(swapped, [check]).passed
    else:
        from mantra_env.checks import TraceIndex, evaluate

        assert evaluate(check, TraceIndex(same_pairs.calls)).passed
        assert not evaluate(check, TraceIndex(swapped.calls)).passed


def test_the_schema_marks_ordered_lists_and_providers_do_not_see_the_mark() -> None:
    spec = SPECS["exchange_items"]
    assert spec.ordered("new_item_ids") and not spec.ordered("item_ids") and not spec.ordered("missing")
    sent = spec.openai_schema()["function"]["parameters"]["properties"]
    assert "x-ordered" not in sent["new_item_ids"] and sent["new_item_ids"]["type"] == "array"


def test_checks_are_stamped_from_the_schema_and_disagreement_is_reported() -> None:
    written = parse_check(
        'CALL exchange_items(item_ids=["a", "b"], new_item_ids=["x", "y"]) PRECEDES CALL exchange_items()'
    )
    problem = list_order_problem(written.atoms[0], SPECS)
    assert problem is not None and "new_item_ids" in problem and "IN ORDER" in problem
    stamped = with_list_order(written, SPECS)
    assert stamped.atoms[0].ordered == ("new_item_ids",)
    assert all(list_order_problem(atom, SPECS) is None for atom in stamped.atoms)
    assert with_list_order(stamped, SPECS) == stamped
    assert with_list_order(parse_check("CALL unknown_tool(x=[1])"), SPECS) == parse_check("CALL unknown_tool(x=[1])")
