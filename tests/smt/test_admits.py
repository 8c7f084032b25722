"""CaseSolver.admits: the world model's judgement of one concrete trace (the mutation audit's classifier)."""

from __future__ import annotations

import pytest

from mantra_env.checks import parse_check
from mantra_env.smt import CaseSolver
from mantra_env.smt.queries import SmtInputError, WitnessCall

MODEL = """(model
  (var order_id String) (var read Bool) (var cancelled Bool)
  (transition get_order (params (order_id o)) (pre) (post (= (next read) (or read (= (param o) order_id)))))
  (transition cancel_order (params (order_id o)) (pre read (= (param o) order_id)) (post (= (next cancelled) true)))
  (goal cancelled))"""


def solver() -> CaseSolver:
    checks = [parse_check('CALL cancel_order(order_id="A1")')]
    return CaseSolver(MODEL, checks, 3, {"order_id": "A1", "read": False, "cancelled": False})


def test_the_model_admits_the_procedure_and_refuses_a_skipped_read_or_a_missed_goal() -> None:
    found = solver()
    read, cancel = (
        WitnessCall(tool="get_order", args={"order_id": "A1"}),
        WitnessCall(tool="cancel_order", args={"order_id": "A1"}),
    )
    assert found.admits([read, cancel]) is True
    assert found.admits([cancel]) is False  # the precondition's read is missing
    assert found.admits([read]) is False  # the goal is missed
    assert found.admits([WitnessCall(tool="get_order", args={"order_id": "B2"}), cancel]) is False  # another order read
    assert found.admits([read, cancel]) is True  # the solver stays usable after each question


def test_a_trace_longer_than_the_bound_or_of_an_unknown_tool_is_refused_with_a_reason() -> None:
    found = solver()
    with pytest.raises(SmtInputError, match="does not fit the bound 3"):
        found.admits([WitnessCall(tool="get_order", args={"order_id": "A1"})] * 4)
    with pytest.raises(SmtInputError, match="refund, which no transition or check names"):
        found.admits([WitnessCall(tool="refund")])
