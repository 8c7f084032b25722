"""Witnesses a person or judge reads: a string argument the query leaves free shows the scenario's value of
that name or an unnamed placeholder, never another parameter's literal (issue 14, readable witnesses)."""

from __future__ import annotations

from mantra_env.case import CaseCheck
from mantra_env.smt import CaseSolver

MODEL = """
(model
  (var zip String)
  (var verified Bool)
  (var refunded Bool)
  (transition find_user_by_name_zip
    (params (first_name fn) (last_name ln) (zip z))
    (pre  true)
    (post (= (next verified) (or verified (= (param z) zip)))))
  (transition refund_order
    (params (order_id oid) (reason r))
    (pre  verified (= (param oid) "O1"))
    (post (= (next refunded) true)))
  (goal refunded))
"""
CHECKS = [
    CaseCheck(
        id="names", check='CALL find_user_by_name_zip(first_name="Ana", last_name="Lopez") PRECEDES CALL refund_order()'
    ),
    CaseCheck(id="refund", check='CALL refund_order(order_id="O1", reason="damaged")'),
]
# Scenario facts the model does not read are interned too: the solver's first choice for a free string is one of
# the table's low numbers, i.e. some literal of the case.
OTHER_FACTS = {f"fact_{n}": f"#W{n}000" for n in range(8)}
INITIAL = {"zip": "02139", "verified": False, "refunded": False, "reason": "damaged", **OTHER_FACTS}
LITERALS = {"Ana", "Lopez", "O1", "02139", "damaged", *OTHER_FACTS.values()}


def test_free_arguments_are_placeholders_or_the_scenarios_values() -> None:
    solver = CaseSolver(MODEL, CHECKS, 4, INITIAL)
    result = solver.backward("names", shortest=True)
    assert result.status == "conflict" and result.witness is not None
    lookup = next(call for call in result.witness.calls if call.tool == "find_user_by_name_zip")
    assert lookup.args["zip"] == "02139"  # the world model needs it
    assert {lookup.args["first_name"], lookup.args["last_name"]} & LITERALS <= {"Ana", "Lopez"}
    assert (lookup.args["first_name"], lookup.args["last_name"]) != ("Ana", "Lopez")  # what the audit is about


def test_a_value_the_query_needs_is_kept_and_a_violating_one_is_unnamed() -> None:
    """The audit of ``refund``: the world model needs O1, so it stays; the reason must differ from the pinned one,
    so it is an unnamed value rather than some other literal of the case."""
    result = CaseSolver(MODEL, CHECKS, 4, INITIAL).backward("refund", shortest=True)
    assert result.status == "conflict" and result.witness is not None
    refund = next(call for call in result.witness.calls if call.tool == "refund_order")
    assert refund.args["order_id"] == "O1"
    assert str(refund.args["reason"]).startswith("<value #")
    for call in result.witness.calls:
        if call.tool == "find_user_by_name_zip":
            assert call.args["zip"] == "02139"
            assert {call.args["first_name"], call.args["last_name"]} & LITERALS <= {"Ana", "Lopez"}
