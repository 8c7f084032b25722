"""The second compliant witness (issue 31): a trace that writes something in place of the plan's write (another
value where the checks leave an argument open, the other branch of an OR over writes), or "unique"."""

from __future__ import annotations

import pytest

from mantra_env.case import CaseCheck
from mantra_env.smt import CaseSolver, SmtInputError, WitnessCall
from mantra_env.smt.queries import OTHER_TEXT
from mantra_env.tools import ToolSpec

LOOKUP = ToolSpec(
    name="lookup",
    kind="read",
    parameters={"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
)
REFUND = ToolSpec(
    name="refund",
    kind="write",
    parameters={
        "type": "object",
        "properties": {
            "order_id": {"type": "string"},
            "method": {"type": "string"},
            "reason": {"type": "string"},
            "express": {"type": "boolean"},
        },
        "required": ["order_id", "method"],
    },
)
CREDIT = ToolSpec(
    name="credit",
    kind="write",
    parameters={"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
)
TOOLS = [LOOKUP, REFUND, CREDIT]
MODEL = """
(model
  (var looked Bool)
  (var done Bool)
  (transition lookup
    (params (order_id o))
    (pre)
    (post (= (next looked) (or looked (= (param o) "O1")))))
  (transition refund
    (params (order_id o) (method m))
    (pre looked (= (param o) "O1") (or (= (param m) "card") (= (param m) "gift_card")))
    (post (= (next done) true)))
  (transition credit
    (params (order_id o))
    (pre looked (= (param o) "O1"))
    (post (= (next done) true)))
  (goal done))
"""
INITIAL = {"looked": False, "done": False}
LOOKED_UP = WitnessCall(tool="lookup", args={"order_id": "O1"})
BY_CARD = WitnessCall(
    tool="refund", args={"order_id": "O1", "method": "card", "reason": "the screen is broken", "express": False}
)


def _solver(checks: list[str], bound: int) -> CaseSolver:
    entries = [CaseCheck(id=f"c{n}", check=text) for n, text in enumerate(checks)]
    return CaseSolver(MODEL, entries, bound, INITIAL, TOOLS)


def _changes(checks: list[str], plan: list[WitnessCall]) -> set[tuple[str, int | None, str | None]]:
    return {(a.change, a.step, a.argument) for a in _solver(checks, len(plan)).variations(plan)}


REFUND_ONLY = ['CALL lookup(order_id="O1") PRECEDES CALL refund()', 'CALL refund(order_id="O1")', "NO-CALL credit()"]


def test_an_argument_the_checks_leave_open_takes_another_value_and_free_text_another_text() -> None:
    plan = [LOOKED_UP, BY_CARD]
    assert _solver(REFUND_ONLY, 6).alternative_witness(plan).status == "found"
    found = {a.argument: a for a in _solver(REFUND_ONLY, len(plan)).variations(plan)}
    assert set(found) == {"method", "reason", "express"}  # order_id: the world model needs O1
    assert (found["method"].change, found["method"].step) == ("value", 1)
    assert found["method"].calls == [
        LOOKED_UP,
        BY_CARD.model_copy(update={"args": {**BY_CARD.args, "method": "gift_card"}}),
    ]
    assert found["reason"].change == "text"
    assert found["reason"].calls[1].args["reason"] == OTHER_TEXT.format("the screen is broken")
    assert found["express"].change == "unread"  # no slot: the world model never reads it, no check pins it
    assert found["express"].calls[1].args == {**BY_CARD.args, "express": True}  # the schema's other value


def test_the_other_branch_of_an_or_over_writes_is_another_tool() -> None:
    checks = ['CALL lookup(order_id="O1")', 'CALL refund(order_id="O1") OR CALL credit(order_id="O1")']
    plan = [LOOKED_UP, WitnessCall(tool="credit", args={"order_id": "O1"})]
    assert _solver(checks, 6).alternative_witness(plan).status == "found"
    (other,) = _solver(checks, len(plan)).variations(plan)
    assert (other.change, other.step) == ("tool", 1)
    assert other.calls[0] == LOOKED_UP
    assert other.calls[1].tool == "refund" and other.calls[1].args["order_id"] == "O1"
    assert other.calls[1].args["method"] in ("card", "gift_card")  # what the world model accepts, never unnamed


def test_a_case_that_pins_every_write_argument_is_unique_but_for_free_text() -> None:
    checks = [*REFUND_ONLY, 'CALL refund(method="card", express=false)']
    plan = [LOOKED_UP, BY_CARD]
    assert _solver(checks, 6).alternative_witness(plan).status == "infeasible"
    assert _changes(checks, plan) == {("text", 1, "reason")}
    free = _solver(checks, len(plan)).variations(plan, free_only=True)
    assert [(a.change, a.argument) for a in free] == [("text", "reason")]


def test_an_extra_write_is_no_alternative() -> None:
    """A refusal plan (no write) whose checks do not forbid the refund: a trace that refunds passes the checks,
    but it adds a write instead of replacing one; the unrequested-write rule exists to fail it."""
    plan = [LOOKED_UP]
    assert _solver(['CALL lookup(order_id="O1")'], 6).alternative_witness(plan).status == "infeasible"


RETURN = ToolSpec(
    name="return_items",
    kind="write",
    parameters={
        "type": "object",
        "properties": {"order_id": {"type": "string"}, "item_ids": {"type": "array", "items": {"type": "string"}}},
        "required": ["order_id", "item_ids"],
    },
)
RETURN_MODEL = """
(model
  (var returned (Array String))
  (transition lookup (params (order_id o)) (pre) (post))
  (transition return_items
    (params (order_id o) (item_ids items))
    (pre (= (param o) "O1") (subset (param items) (list "I1" "I2")) LENGTH)
    (post (= (next returned) (union returned (param items)))))
  (goal (contains returned "I1") (contains returned "I2")))
"""


@pytest.mark.parametrize(("length", "status"), [("(= (length (param items)) 2)", "infeasible"), ("true", "found")])
def test_the_same_items_in_another_order_are_the_same_argument(length: str, status: str) -> None:
    """The grader matches a list up to permutation, so ["I2", "I1"] is the plan's own return; a longer list
    (an item twice) is another argument."""
    checks = [CaseCheck(id="lookup", check='CALL lookup(order_id="O1")')]
    plan = [LOOKED_UP, WitnessCall(tool="return_items", args={"order_id": "O1", "item_ids": ["I1", "I2"]})]
    solver = CaseSolver(RETURN_MODEL.replace("LENGTH", length), checks, 6, {"returned": []}, [LOOKUP, RETURN])
    result = solver.alternative_witness(plan)
    assert result.status == status
    if result.witness is not None:
        items = next(call.args["item_ids"] for call in result.witness.calls if call.tool == "return_items")
        assert isinstance(items, list) and sorted(set(map(str, items))) == ["I1", "I2"] and len(items) > 2


def test_an_alternative_needs_the_tools_and_tools_it_knows() -> None:
    with pytest.raises(SmtInputError, match="read/write kinds"):
        CaseSolver(MODEL, [], 4, INITIAL).alternative_witness([LOOKED_UP])
    with pytest.raises(SmtInputError, match="no transition or check names"):
        _solver(REFUND_ONLY, 4).variations([WitnessCall(tool="lookup_v2", args={})])
