"""Lists in the bounded encoding: bounded sequences with set updates, sums of fields, witnesses that replay
through the grader, and lists longer than the bound reported as such."""

from __future__ import annotations

import pytest

from mantra_env.checks import parse_check
from mantra_env.graders import grade
from mantra_env.smt.queries import CaseSolver, SmtInputError
from mantra_env.trace import Trace
from tests.list_tools import IDS, ORDERED_IDS, PAYMENTS, list_tool

TOOLS = [
    list_tool("get_order", "read", order_id={"type": "string"}),
    list_tool("return_items", order_id={"type": "string"}, item_ids=IDS),
    list_tool("pay", payments=PAYMENTS),
    list_tool("exchange_items", item_ids=ORDERED_IDS, new_item_ids=ORDERED_IDS),
]
MODEL = """
(model
  (const ORDER_ITEMS (List String) ("i1" "i2" "i3"))
  (const PRICE Real 30.0)
  (var looked   Bool)
  (var paid     Bool)
  (var returned (Array String))
  (transition get_order (params (order_id o)) (pre (= (param o) "W1")) (post (= (next looked) true)))
  (transition return_items
    (params (order_id o) (item_ids items))
    (pre  looked (= (param o) "W1") (not (empty (param items))) (subset (param items) ORDER_ITEMS)
          (not (contains returned "i3")))
    (post (= (next returned) (union returned (param items)))))
  (transition exchange_items
    (params (item_ids old) (new_item_ids new))
    (pre  (= (length (param old)) (length (param new))) (subset (param old) returned))
    (post (= (next returned) (difference returned (param old)))))
  (transition pay
    (params (payments p))
    (pre  (= (sum (field (param p) amount)) PRICE) (contains (field (param p) payment_id) "gift_card"))
    (post (= (next paid) true)))
  (goal (contains returned "i1") (contains returned "i2") (not (contains returned "i3")) paid))
"""
INITIAL = {"looked": False, "paid": False, "returned": []}


def _replay(solver: CaseSolver) -> Trace:
    result = solver.compliant_witness()
    assert result.status == "found" and result.witness is not None
    return Trace.of(*((call.tool, call.args) for call in result.witness.calls))


def test_the_compliant_witness_holds_lists_and_passes_the_grader() -> None:
    checks = [
        parse_check('CALL return_items(order_id="W1", item_ids=["i2", "i1"])'),
        parse_check('CALL get_order(order_id="W1") PRECEDES CALL return_items()'),
        parse_check("CALL pay()"),
    ]
    trace = _replay(CaseSolver(MODEL, checks, 4, INITIAL, TOOLS))
    assert grade(trace, checks).passed
    (returned,) = [call.args for call in trace.calls if call.tool == "return_items"]
    assert sorted(returned["item_ids"]) == ["i1", "i2"]  # matched up to permutation
    (paid,) = [call.args for call in trace.calls if call.tool == "pay"]
    assert sum(p["amount"] for p in paid["payments"]) == 30
    assert "gift_card" in [p["payment_id"] for p in paid["payments"]]


def test_set_updates_union_and_difference() -> None:
    # The goal needs i3 never returned; returning [i1, i3] and then exchanging [i3] away reaches it only if
    # difference removes it. The precondition of return_items forbids a second return once i3 is in.
    checks = [
        parse_check('CALL return_items(item_ids=["i1", "i2", "i3"])'),
        parse_check("CALL pay()"),
        parse_check('CALL exchange_items(item_ids=["i3"] PAIRED, new_item_ids=["i9"] PAIRED)'),
    ]
    trace = _replay(CaseSolver(MODEL, checks, 5, INITIAL, TOOLS))
    assert grade(trace, checks).passed
    tools = [call.tool for call in trace.calls]
    assert tools.index("exchange_items") > tools.index("return_items")


def test_a_paired_pin_keeps_its_rows_in_any_order() -> None:
    # exchange_items needs its items returned, and the goal needs i1 and i2 returned again afterwards.
    checks = [parse_check('CALL exchange_items(item_ids=["i2", "i1"] PAIRED, new_item_ids=["n1", "n2"] PAIRED)')]
    solver = CaseSolver(MODEL, checks, 6, INITIAL, TOOLS)
    trace = _replay(solver)
    (call,) = [c.args for c in trace.calls if c.tool == "exchange_items"]
    assert sorted(zip(call["item_ids"], call["new_item_ids"], strict=True)) == [("i1", "n2"), ("i2", "n1")]


PAIRED_MODEL = """
(model
  (const STATED (List (Record (payment_id String) (amount Real)))
    (((payment_id "gift_card") (amount 10.0)) ((payment_id "card") (amount 20.0))))
  (var chosen (Record (payment_id String) (amount Real)))
  (var paid Bool)
  (transition pay (params (payments p)) (pre (subset (param p) STATED) (contains STATED chosen))
    (post (= (next paid) true)))
  (goal paid))
"""


@pytest.mark.parametrize(
    ("payments", "chosen", "status"),
    [
        ('[{"payment_id": "gift_card", "amount": 10.0}]', ("gift_card", 10.0), "consistent"),
        ('[{"payment_id": "card", "amount": 20.0}, {"payment_id": "gift_card", "amount": 10.0}]', ("card", 20.0),
         "consistent"),
        # each record is matched as a whole: a stated id with another row's amount is no stated record
        ('[{"payment_id": "gift_card", "amount": 20.0}]', ("gift_card", 10.0), "conflict"),
        ('[{"payment_id": "gift_card", "amount": 10.0}]', ("gift_card", 20.0), "conflict"),
    ],
)  # fmt: skip
def test_membership_in_a_list_of_records_compares_every_field(
    payments: str, chosen: tuple[str, float], status: str
) -> None:
    initial = {"paid": False, "chosen": {"payment_id": chosen[0], "amount": chosen[1]}}
    checks = [parse_check(f"CALL pay(payments={payments})")]
    assert CaseSolver(PAIRED_MODEL, checks, 2, initial, TOOLS).forward().status == status


def test_the_schema_decides_the_order_of_pinned_lists() -> None:
    unmarked = [parse_check('CALL exchange_items(item_ids=["i1"], new_item_ids=["n1"] PAIRED)')]
    with pytest.raises(SmtInputError, match="PAIRED"):
        CaseSolver(MODEL, unmarked, 3, INITIAL, TOOLS)


def test_a_list_longer_than_the_bound_is_reported_as_such() -> None:
    needs_four = MODEL.replace("(not (empty (param items)))", "(>= (length (param items)) (+ 2 2))")
    solver = CaseSolver(needs_four, [parse_check("CALL return_items()")], 3, INITIAL, TOOLS)
    result = solver.compliant_witness()
    assert result.status == "unknown" and "longer than the list bound 3" in result.reason
    roomy = CaseSolver(needs_four, [parse_check("CALL return_items()")], 3, INITIAL, TOOLS, list_bound=4)
    trace = _replay(roomy)
    assert [len(c.args["item_ids"]) >= 4 for c in trace.calls if c.tool == "return_items"] == [True]
    with pytest.raises(SmtInputError, match="longer than the list bound 2"):
        CaseSolver(
            MODEL, [parse_check('CALL return_items(item_ids=["i1", "i2", "i3"])')], 3, INITIAL, TOOLS, list_bound=2
        )


def test_lists_only_checks_pin_are_one_value_in_canonical_order() -> None:
    # get_order's world model does not bind a list; a check pins one on a tool the model does not know.
    checks = [parse_check('CALL note(tags=["b", "a"])'), parse_check('CALL note(tags=["a", "b"])')]
    result = CaseSolver(None, checks, 1).compliant_witness()
    assert result.status == "found" and result.witness is not None
    assert result.witness.calls[0].args == {"tags": ["a", "b"]}  # one call matches both pins


# --- the array theory without extensionality ------------------------------------------------------------------

SAME_SETS = """
(model
  (const ORDER_ITEMS (List String) ("i1"))
  (var returned (Array String))
  (var expected (Array String))
  (transition return_items (params (item_ids items)) (pre (subset (param items) ORDER_ITEMS))
    (post (= (next returned) (union returned (param items)))))
  (goal (not (= returned expected))))
"""


def test_a_negated_array_equality_keeps_extensionality() -> None:
    # Returning i1 again leaves both sets {i1}: they are equal, so the goal is unreachable. Only the
    # extensionality axiom tells the solver so; without it two arrays may differ while agreeing everywhere.
    checks = [parse_check('CALL return_items(item_ids=["i1"])')]
    initial = {"returned": ["i1"], "expected": ["i1"]}
    solver = CaseSolver(SAME_SETS, checks, 3, initial, TOOLS)
    assert solver.encoding.extensional
    assert solver.compliant_witness().status == "infeasible"
    solver.encoding.extensional = False  # what dropping the axiom here would answer
    solver._solver = None
    assert solver.compliant_witness().status == "found"


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("(post (= (next returned) (union returned (param items))))", False),
        ("(post (not (= (next returned) expected)))", True),
        ("(post (=> (= returned expected) looked))", True),
        ("(post (=> looked (= (next returned) expected)))", False),
        ("(post (= looked (= returned expected)))", True),
        ("(pre (= returned expected))", True),
    ],
)
def test_extensionality_is_needed_only_where_an_array_equality_can_be_false(where: str, expected: bool) -> None:
    model = f"""
    (model (var looked Bool) (var returned (Array String)) (var expected (Array String))
      (transition return_items (params (item_ids items)) {where}))"""
    solver = CaseSolver(model, [parse_check("CALL return_items()")], 2, {}, TOOLS)
    assert solver.encoding.extensional is expected


CHECK_SETS = [
    ['CALL return_items(order_id="W1", item_ids=["i2", "i1"])', "CALL pay()"],
    ['CALL return_items(item_ids=["i1", "i2", "i3"])', "CALL pay()", "CALL exchange_items()"],
    ["CALL get_order() PRECEDES CALL return_items()", "NO-CALL exchange_items()"],
    [
        'CALL exchange_items(item_ids=["i2"] PAIRED, new_item_ids=["n1"] PAIRED)',
        "CALL return_items() BEFORE CALL pay()",
    ],
]


@pytest.mark.parametrize("texts", CHECK_SETS)
@pytest.mark.parametrize("mode", ["refusal", "paper"])
def test_dropping_extensionality_keeps_every_answer(texts: list[str], mode: str) -> None:
    answers = []
    for extensional in (False, True):
        solver = CaseSolver(MODEL, [parse_check(t) for t in texts], 5, INITIAL, TOOLS, mode=mode)  # type: ignore[arg-type]
        assert not solver.encoding.extensional
        solver.encoding.extensional = extensional
        results = [solver.forward(), *solver.backward_all(), solver.compliant_witness()]
        answers.append([r.status for r in results])
    assert answers[0] == answers[1]
    assert "unknown" not in answers[0]


def _with_order_items(count: int) -> str:
    items = " ".join(f'"i{k}"' for k in range(1, count + 1))
    return MODEL.replace(
        '(const ORDER_ITEMS (List String) ("i1" "i2" "i3"))', f"(const ORDER_ITEMS (List String) ({items}))"
    )


def test_a_constant_longer_than_the_list_slots_allow_is_refused_with_the_reason_not_encoded() -> None:
    """A constant's length sets every list argument's slots: 1,440 values grew an encoding past 20 GB."""
    longest = CaseSolver(_with_order_items(16), [parse_check("CALL pay()")], 3, INITIAL, TOOLS)
    assert longest.encoding.layout.list_bound == 16 and longest.forward().status in ("consistent", "conflict")
    with pytest.raises(SmtInputError, match=r"would need 33 element slots .* more than the 32 the encoding allows"):
        CaseSolver(_with_order_items(33), [parse_check("CALL pay()")], 3, INITIAL, TOOLS)


def test_a_union_with_a_list_argument_of_too_many_slots_is_refused_before_its_term_doubles_past_memory() -> None:
    solver = CaseSolver(MODEL, [parse_check("CALL pay()")], 3, INITIAL, TOOLS, list_bound=16)
    assert solver.forward().status in ("consistent", "conflict")  # encoded and answered
    with pytest.raises(SmtInputError, match=r"\(union \.\.\.\) \(line \d+\) adds a list argument of 17 element slots"):
        CaseSolver(MODEL, [parse_check("CALL pay()")], 3, INITIAL, TOOLS, list_bound=17)
