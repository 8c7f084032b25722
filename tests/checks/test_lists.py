"""List arguments in checks: permutation matching by default, paired lists (the tool schema's x-ordered)
compared together up to one common permutation, in the text and JSON forms, the lazy and compiled matchers, and
stamping from the schema."""

from __future__ import annotations

from typing import Annotated

import pytest

from mantra_env.checks import (
    TraceIndex,
    arg_equal,
    args_match,
    bag_equal,
    check_from_json,
    check_to_json,
    evaluate,
    paired_equal,
    parse_check,
)
from mantra_env.checks.ast import Call
from mantra_env.graders import grade
from mantra_env.toolkit import ORDERED, Toolkit, tool
from mantra_env.tools import ToolSpec, list_order_problem, with_list_order
from mantra_env.trace import Trace


class _Retail(Toolkit):
    @tool(kind="write")
    def exchange_items(
        self, item_ids: Annotated[list[str], ORDERED], new_item_ids: Annotated[list[str], ORDERED], note: list[str]
    ) -> str:
        """Exchange items of an order.

        Args:
            item_ids: the items to exchange.
            new_item_ids: the replacements, one per item in item_ids and in the same order.
            note: tags, in any order.
        """
        return "ok"


SPECS: dict[str, ToolSpec] = {spec.name: spec for spec in _Retail.tool_specs()}


@pytest.mark.parametrize(
    ("pinned", "actual", "equal"),
    [
        (["a", "b"], ["b", "a"], True),
        (["a", "b"], [" a", "b "], True),  # element strings are trimmed as scalars are
        (["a", "a", "b"], ["a", "b", "b"], False),  # each element as often
        (["a", "b"], ["a", "b", "b"], False),
        ([1, 2.5], [2.5, 1.0], True),
        ([[1, 2]], [[2, 1]], False),  # only the top-level list is unordered
        ([], [], True),
        (["a"], "a", False),
        ("a", ["a"], False),
    ],
)
def test_argument_equality_of_lists(pinned: object, actual: object, equal: bool) -> None:
    assert arg_equal(pinned, actual) is equal
    if isinstance(pinned, list):
        assert bag_equal(pinned, actual) is equal
        assert paired_equal([pinned], [actual]) is equal  # one paired list alone is an ordinary list


@pytest.mark.parametrize(
    ("actual", "equal"),
    [
        ((["a", "b"], ["x", "y"]), True),
        ((["b", "a"], ["y", "x"]), True),  # the same exchange, named in another order
        ((["a", "b"], ["y", "x"]), False),  # another exchange: a gets y
        ((["b", "a"], ["x", "y"]), False),
        ((["a", "b", "b"], ["x", "y", "y"]), False),  # each row as often
        ((["a"], ["x"]), False),
        ((["a", "b"], ["x"]), False),  # every list has its pinned length
        ((["a", "b"], "x"), False),
        ((["a", "b"], None), False),  # a paired list the call omits
    ],
)
def test_paired_lists_compare_row_by_row_up_to_one_permutation(actual: tuple[object, object], equal: bool) -> None:
    assert paired_equal([["a", "b"], ["x", "y"]], list(actual)) is equal
    args = {"item_ids": actual[0], "new_item_ids": actual[1]} if actual[1] is not None else {"item_ids": actual[0]}
    pinned = {"item_ids": ["a", "b"], "new_item_ids": ["x", "y"]}
    assert args_match(pinned, args, ("item_ids", "new_item_ids")) is equal


def test_repeated_rows_and_lists_of_different_lengths() -> None:
    assert paired_equal([["a", "a"], ["x", "y"]], [["a", "a"], ["y", "x"]])  # rows (a,x) and (a,y) either way
    assert not paired_equal([["a", "a"], ["x", "x"]], [["a", "a"], ["x", "y"]])
    # pinned lists of different lengths have no rows: position by position
    assert paired_equal([["a", "b"], ["x"]], [["a", "b"], ["x"]])
    assert not paired_equal([["a", "b"], ["x"]], [["b", "a"], ["x"]])


def test_paired_round_trips_through_text_and_json() -> None:
    text = 'CALL exchange_items(item_ids=["a", "b"] PAIRED, new_item_ids=["x", "y"] PAIRED)'
    check = parse_check(text)
    assert isinstance(check, Call) and check.ordered == ("item_ids", "new_item_ids")
    assert check.text == text
    assert check_from_json(check_to_json(check)) == check
    assert parse_check('CALL exchange_items(item_ids=["a"])').model_dump(mode="json") == {
        "tool": "exchange_items",
        "args": {"item_ids": ["a"]},
        "op": "call",
    }  # no "ordered" key when nothing is paired: existing suites keep their bytes


def test_paired_on_a_value_that_is_not_a_list_is_refused() -> None:
    with pytest.raises(ValueError, match="not a pinned list"):
        Call(tool="t", args={"a": "x"}, ordered=("a",))


@pytest.mark.parametrize("compiled", [False, True])
def test_the_grader_matches_paired_lists_together(compiled: bool) -> None:
    check = parse_check(
        'CALL exchange_items(item_ids=["i1", "i2"] PAIRED, new_item_ids=["n1", "n2"] PAIRED, note=["p", "q"])'
    )
    reordered = Trace.of(
        ("exchange_items", {"item_ids": ["i2", "i1"], "new_item_ids": ["n2", "n1"], "note": ["q", "p"]})
    )
    swapped = Trace.of(("exchange_items", {"item_ids": ["i1", "i2"], "new_item_ids": ["n2", "n1"], "note": ["p", "q"]}))
    wrong_note = Trace.of(
        ("exchange_items", {"item_ids": ["i1", "i2"], "new_item_ids": ["n1", "n2"], "note": ["p", "p"]})
    )
    if compiled:  # the generated one-pass matcher runs when a trace is indexed with its atoms
        assert grade(reordered, [check]).passed
        assert not grade(swapped, [check]).passed and not grade(wrong_note, [check]).passed
    else:
        assert evaluate(check, TraceIndex(reordered.calls)).passed
        assert not evaluate(check, TraceIndex(swapped.calls)).passed
        assert not evaluate(check, TraceIndex(wrong_note.calls)).passed


def test_the_schema_marks_ordered_lists_and_providers_do_not_see_the_mark() -> None:
    spec = SPECS["exchange_items"]
    assert spec.ordered("new_item_ids") and spec.ordered("item_ids")
    assert not spec.ordered("note") and not spec.ordered("missing")
    sent = spec.openai_schema()["function"]["parameters"]["properties"]
    assert "x-ordered" not in sent["new_item_ids"] and sent["new_item_ids"]["type"] == "array"


def test_checks_are_stamped_from_the_schema_and_disagreement_is_reported() -> None:
    written = parse_check(
        'CALL exchange_items(item_ids=["a", "b"], new_item_ids=["x", "y"]) PRECEDES CALL exchange_items()'
    )
    problem = list_order_problem(written.atoms[0], SPECS)
    assert problem is not None and "new_item_ids" in problem and "PAIRED" in problem
    stamped = with_list_order(written, SPECS)
    assert stamped.atoms[0].ordered == ("item_ids", "new_item_ids")
    assert all(list_order_problem(atom, SPECS) is None for atom in stamped.atoms)
    assert with_list_order(stamped, SPECS) == stamped
    assert with_list_order(parse_check("CALL unknown_tool(x=[1])"), SPECS) == parse_check("CALL unknown_tool(x=[1])")
