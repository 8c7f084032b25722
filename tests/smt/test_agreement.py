"""The Z3 check encoding agrees with the Python grader (the normative semantics) on random checks and traces."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mantra_env.checks import Call, Check, TraceIndex, evaluate, parse_check
from mantra_env.checks.operators import in_trace_formula
from mantra_env.checks.semantics import NO_RULES
from mantra_env.smt.pinned import evaluate_checks
from mantra_env.tools import FREE_TEXT_KEY, ToolSpec, argument_rules
from mantra_env.trace import Trace
from mantra_env.worldmodel import parse_model
from tests.checks.strategies import answers, checks, traces
from tests.list_tools import ORDERED_IDS, PAYMENTS, list_tool
from tests.worldmodel.paper import PAPER_TOOLS


def grader_verdicts(check_list: list[Check], trace: Trace, tools: list[ToolSpec] | None = None) -> list[bool]:
    index = TraceIndex(trace.calls, rules=argument_rules(tools) if tools is not None else NO_RULES)
    return [evaluate(check, index).passed for check in check_list]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(checks(), answers()), min_size=1, max_size=4), traces(max_size=7))
# One atom pins a non-list where another pairs lists of the same parameter (found by hypothesis): equality.
@example(
    [
        Call(tool="check_inventory", args={"flag": {}}),
        Call(tool="check_inventory", args={"item": None, "flag": []}, ordered=("flag",)),
    ],
    Trace.of(("check_inventory", {"item": None, "flag": {}})),
)
def test_z3_encoding_agrees_with_the_grader(check_list: list[Check], trace: Trace) -> None:
    # A check outside the trace formula (ANSWER) is skipped by its operator's mark: the encoder takes it as true.
    in_formula = [in_trace_formula(check) for check in check_list]
    z3_verdicts = evaluate_checks(check_list, trace.calls)
    assert [v for v, keep in zip(z3_verdicts, in_formula, strict=True) if keep] == [
        v for v, keep in zip(grader_verdicts(check_list, trace), in_formula, strict=True) if keep
    ]
    assert all(v for v, keep in zip(z3_verdicts, in_formula, strict=True) if not keep)


# Parameters the world model binds get typed slots (Int, Real, enum, String) instead of interned ids.
TYPED_MODEL = parse_model("""
(model
  (var n Int)
  (transition assign_warehouse_picker
    (params (item item) (quantity qty))
    (pre (> (param qty) 0))
    (post (= (next n) (+ n (param qty))))))
""")
typed_calls = st.lists(
    st.one_of(
        st.tuples(
            st.just("assign_warehouse_picker"),
            st.fixed_dictionaries(
                {"item": st.sampled_from(["HWM2741", " HWM2741", "HWC9305"]), "quantity": st.integers(-2, 3)}
            ),
        ),
        st.tuples(st.just("check_inventory"), st.fixed_dictionaries({"item": st.sampled_from(["a", "b"])})),
    ),
    max_size=6,
)
typed_checks = st.lists(
    st.sampled_from(
        [
            "CALL assign_warehouse_picker(quantity=1)",
            'CALL assign_warehouse_picker(quantity=1.0, item="HWM2741")',
            "NO-CALL assign_warehouse_picker(quantity=2.5)",
            'CALL assign_warehouse_picker(quantity="1")',
            'CALL check_inventory(item="a") PRECEDES CALL assign_warehouse_picker(item="HWM2741")',
            "CALL assign_warehouse_picker(quantity=0) AFTER CALL check_inventory()",
            'NO-CALL assign_warehouse_picker() BEFORE CALL check_inventory(item="b")',
            'CALL check_inventory(item="b") FOLLOWS CALL assign_warehouse_picker(quantity=3)',
        ]
    ).map(parse_check),
    min_size=1,
    max_size=4,
)


# List parameters the world model binds become bounded sequences (a length and element slots): pinned lists
# match up to permutation, and paired lists (item_ids with new_item_ids, x-ordered in the schema) together, up to
# one common permutation of their rows, as in the grader. `tags` is paired too but no world model binds it.
LIST_TOOLS = [
    list_tool("exchange_items", item_ids=ORDERED_IDS, new_item_ids=ORDERED_IDS, payments=PAYMENTS, tags=ORDERED_IDS)
]
LIST_MODEL = parse_model("""
(model
  (var swapped (Array String))
  (transition exchange_items
    (params (item_ids old) (new_item_ids new) (payments pay))
    (pre (= (length (param old)) (length (param new))))
    (post (= (next swapped) (union swapped (param old))))))
""")
_ids = st.sampled_from(["i1", "i2", " i1", "i3"])
_payment = st.fixed_dictionaries({"payment_id": st.sampled_from(["gc", "cc"]), "amount": st.sampled_from([1, 2.5])})
# Calls that name the rows (i3, i1) and (i1, i3) in either order (a check pins them), or (i3, i3) and (i1, i1):
# the same items in each list, paired otherwise.
_rows = st.one_of(st.permutations([("i3", "i1"), ("i1", "i3")]), st.permutations([("i3", "i3"), ("i1", "i1")]))
_paired_args = st.one_of(
    st.tuples(st.lists(_ids, max_size=3), st.lists(_ids, max_size=3)),
    _rows.map(lambda rows: ([old for old, _ in rows], [new for _, new in rows])),
)
list_calls = st.lists(
    st.tuples(
        st.just("exchange_items"),
        st.tuples(
            _paired_args,
            st.lists(_payment, max_size=2),
            st.one_of(st.lists(st.sampled_from(["x", "y"]), max_size=2), st.just("x")),
        ).map(lambda p: {"item_ids": p[0][0], "new_item_ids": p[0][1], "payments": p[1], "tags": p[2]}),
    ),
    max_size=4,
)
list_checks = st.lists(
    st.sampled_from(
        [
            'CALL exchange_items(item_ids=["i1", "i2"] PAIRED)',
            'NO-CALL exchange_items(item_ids=["i2", "i1", "i1"] PAIRED)',
            'CALL exchange_items(new_item_ids=["i2", "i1"] PAIRED)',
            "CALL exchange_items(item_ids=[] PAIRED, new_item_ids=[] PAIRED)",
            'CALL exchange_items(item_ids=["i3", "i1"] PAIRED, new_item_ids=["i1", "i3"] PAIRED)',
            'NO-CALL exchange_items(item_ids=["i3", "i1"] PAIRED, new_item_ids=["i3", "i1"] PAIRED)',
            'CALL exchange_items(item_ids=["i3", "i1"] PAIRED, new_item_ids=["i1"] PAIRED)',
            'CALL exchange_items(item_ids=["i3"] PAIRED, tags=["x"] PAIRED)',
            'CALL exchange_items(tags=["y", "x"] PAIRED)',
            'CALL exchange_items(payments=[{"payment_id": "gc", "amount": 2.5}, {"payment_id": "cc", "amount": 1}])',
            'NO-CALL exchange_items(payments=[{"payment_id": "gc", "amount": 1.0}]) AFTER CALL exchange_items()',
            'CALL exchange_items(item_ids="i1")',
        ]
    ).map(parse_check),
    min_size=1,
    max_size=4,
)


# Free-text parameters (x-free-text: compared after normalisation) and schema defaults (an omitted argument is
# the default). The world model binds `address` (its equalities stay exact); `note` only checks pin. The calls
# draw values equal to the pinned ones after normalisation, and values that are not (a missing component, an
# identifier in another case).
TEXT = {"type": "string", FREE_TEXT_KEY: True}
TEXT_TOOLS = [
    list_tool(
        "ship",
        optional=("mode", "note"),
        order_id={"type": "string"},
        address=TEXT,
        mode={"type": "string", "default": "standard"},
        note={"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, FREE_TEXT_KEY: True},
    ),
    list_tool("lookup", kind="read", order_id={"type": "string"}),
]
TEXT_MODEL = parse_model("""
(model
  (var shipped_to String)
  (transition ship
    (params (address addr))
    (post (= (next shipped_to) (param addr)))))
""")
_addresses = ["12 Main St., Apt 4", "12 main st apt 4", " 12  MAIN ST APT 4 ", "１２ Main St; Apt 4"]
_addresses.append("12 Main St, Apt 4, USA")  # one more component: another address
_notes = ["Leave at door.", "leave at door", "LEAVE\u00a0AT DOOR!", "leave at the door"]
text_calls = st.lists(
    st.one_of(
        st.tuples(
            st.just("ship"),
            st.fixed_dictionaries(
                {"order_id": st.sampled_from(["O1", "o1"]), "address": st.sampled_from(_addresses)},
                optional={
                    "mode": st.sampled_from(["standard", "Standard", "express"]),
                    "note": st.one_of(st.none(), st.sampled_from(_notes)),
                },
            ),
        ),
        st.tuples(st.just("lookup"), st.fixed_dictionaries({"order_id": st.sampled_from(["O1", "o1", "O1."])})),
    ),
    max_size=5,
)
text_checks = st.lists(
    st.sampled_from(
        [
            'CALL ship(address="12 Main St., Apt 4")',
            'NO-CALL ship(order_id="O1", address="12 MAIN ST APT 4")',
            'CALL ship(address="12 Main St, Apt 4, USA")',
            'CALL ship(note="Leave at door.")',
            "CALL ship(note=null)",
            'CALL ship(mode="standard")',
            'NO-CALL ship(mode="express")',
            'CALL ship(order_id="o1", mode="Standard")',
            'CALL lookup(order_id="O1") PRECEDES CALL ship(address="12 main st apt 4", note="leave at door")',
            'CALL ship(address="12 Main St., Apt 4") AFTER CALL lookup(order_id="O1.")',
        ]
    ).map(parse_check),
    min_size=1,
    max_size=4,
)


SLOT_CASES: dict[str, tuple[Any, Any, Any, list[ToolSpec]]] = {
    "typed": (typed_checks, typed_calls, TYPED_MODEL, PAPER_TOOLS),
    "lists": (list_checks, list_calls, LIST_MODEL, LIST_TOOLS),
    "free_text": (text_checks, text_calls, TEXT_MODEL, TEXT_TOOLS),
}


@pytest.mark.parametrize("case", sorted(SLOT_CASES))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_agreement_with_typed_parameter_slots(case: str, data: st.DataObject) -> None:
    checks_of, calls_of, model, tools = SLOT_CASES[case]
    check_list: list[Check] = data.draw(checks_of)
    trace = Trace.of(*data.draw(calls_of))
    assert evaluate_checks(check_list, trace.calls, model, tools) == grader_verdicts(check_list, trace, tools)


def test_every_check_operator_has_a_z3_encoding_as_it_has_an_evaluator() -> None:
    """The encoder's operator table covers exactly the node types the grader evaluates whose operator is in the
    trace formula (a new operator without an encoding fails here, not with an assert in the middle of a query)."""
    from mantra_env.checks import NODE_TYPES
    from mantra_env.checks.operators import BY_NODE
    from mantra_env.checks.semantics import _EVALUATORS
    from mantra_env.smt.encode import _CHECK_ENCODERS

    assert set(_EVALUATORS) == set(NODE_TYPES)
    assert set(_CHECK_ENCODERS) == {node for node in NODE_TYPES if BY_NODE[node].in_trace_formula}
