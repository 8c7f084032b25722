"""With ``witness_at_own_length`` (a generation config's ``validation.witness_at_own_length``) the compliant witness
is shortened and shaped on the case encoded at each candidate length, not at the case's bound (issue 32 item 2):
the same calls up to the solver's free choices, but no query carries the bound's open steps. Airline s023-4 took
558 s for its canonical witness at h=16 (0.3 s at its own length 4), s005-1 spent 116 s on one length query.
Without it (the default) every pass is made at the bound, as the shipped recordings but retail v4 were made."""

from __future__ import annotations

from pathlib import Path

import pytest
import z3

from mantra_env.agents.scripted import plan_from_witness
from mantra_env.case import Case, CaseCheck, ValidationRecord, load_suite
from mantra_env.domains import load_domain
from mantra_env.schemas import render
from mantra_env.smt import CaseSolver
from mantra_env.smt.queries import DEFAULT_TIMEOUT_MS, Witness

SUITES = Path(__file__).resolve().parents[2] / "mantra_env" / "domains"


def _shipped(domain: str, suite: str, case_id: str) -> Case:
    (case,) = [c for c in load_suite(SUITES / domain / "suites" / suite).cases if c.id == case_id]
    return case


@pytest.mark.parametrize("case_id", ["generated-s023-4", "generated-s005-1", "generated-s011-4"])
def test_the_slow_airline_witnesses_fit_a_small_work_budget_and_replay_the_stored_plan(case_id: str) -> None:
    # The work budget is deterministic (Z3 resource units). At h=16, one second's worth ran out on s005-1's length
    # queries (the witness kept extra calls) and on s011-4's first query (unknown); s023-4's canonical queries ran
    # out too, but its first trace happened to be the canonical one: 558 s without a budget.
    _assert_stored_plan("airline", case_id, 1_000)


@pytest.mark.slow
@pytest.mark.parametrize("case_id", ["generated-s007-1", "generated-s013-1"])
def test_witnesses_with_list_arguments_keep_their_stored_item_order(case_id: str) -> None:
    # shaped at their own length, these exchanges came out with the same items in another order
    _assert_stored_plan("retail", case_id)


def _assert_stored_plan(domain: str, case_id: str, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> None:
    case = _shipped(domain, "generated", case_id)
    tools = load_domain(domain).tool_specs()
    bound = case.validation.trace_bound
    solver = CaseSolver(
        case.world_model, case.checks, bound, case.scenario.valuation, tools, timeout_ms, witness_at_own_length=True
    )
    result = solver.compliant_witness()
    assert result.status == "found" and result.witness is not None
    assert case.oracle_plan is not None
    assert plan_from_witness(case, result.witness, tools) == [c.model_dump(mode="json") for c in case.oracle_plan]


def _witness_at_the_bound(solver: CaseSolver) -> Witness:
    """The compliant witness as it was made before: every pass on the case's own bound."""
    assumptions = [*solver._checks(), *solver._world(), *solver._fit()]
    assert solver.solver.check(*assumptions) == z3.sat
    model = solver._shortest(assumptions, solver.solver.model())
    model = solver._readable(assumptions, solver._canonical(assumptions, model))
    return solver._witness(model, (), goal=False)


@pytest.mark.slow
def test_the_starter_witnesses_are_those_shaped_at_the_bound() -> None:
    # the same canonical calls (tools, order, named arguments) as every pass made at the case's bound
    tools = load_domain("operations").tool_specs()
    for case in load_suite(SUITES / "operations" / "suites" / "starter").cases:
        bound = case.validation.trace_bound
        at_bound = _witness_at_the_bound(
            CaseSolver(case.world_model, case.checks, bound, case.scenario.valuation, tools)
        )
        result = CaseSolver(
            case.world_model, case.checks, bound, case.scenario.valuation, tools, witness_at_own_length=True
        ).compliant_witness()
        assert result.witness is not None
        assert result.witness.calls == at_bound.calls, case.id


MODEL = """
(model
  (var verified Bool)
  (var refunded Bool)
  (transition verify (params (id i)) (pre) (post (= (next verified) (or verified (= (param i) "U1")))))
  (transition refund (params (order_id o)) (pre verified) (post (= (next refunded) (= (param o) "O1"))))
  (transition note (params (text t)) (pre) (post))
  (goal refunded))
"""


@pytest.mark.parametrize("mode", ["refusal", "paper"])
def test_the_shortest_witness_is_found_below_the_bound_in_both_modes(mode: str) -> None:
    checks = [CaseCheck(id="refund", check='CALL refund(order_id="O1")')]
    initial = {"verified": False, "refunded": False}
    solver = CaseSolver(MODEL, checks, 12, initial, mode=mode, witness_at_own_length=True)  # type: ignore[arg-type]
    result = solver.compliant_witness()
    assert result.status == "found" and result.witness is not None
    assert [call.tool for call in result.witness.calls] == ["verify", "refund"]
    assert result.witness.calls[1].args == {"order_id": "O1"}
    assert result.bound == 12
    assert sorted(solver._shorter) == [1, 2] and solver._solver is None  # the bound's formula was never loaded


def test_an_empty_witness_needs_no_shorter_encoding() -> None:
    checks = [CaseCheck(id="none", check="NO-CALL refund()")]
    model = MODEL.replace("(goal refunded)", "")
    result = CaseSolver(model, checks, 8, {"verified": False}, witness_at_own_length=True).compliant_witness()
    assert result.status == "found" and result.witness is not None and result.witness.calls == []


@pytest.mark.parametrize("mode", ["refusal", "paper"])
def test_without_the_key_every_pass_is_made_at_the_bound(mode: str) -> None:
    # as the shipped recordings were made: no shorter encoding is built, and the witness is the one every pass at
    # the bound gives (the same here as at its own length; tests/generators/test_validation.py has a case where
    # the two differ)
    checks = [CaseCheck(id="refund", check='CALL refund(order_id="O1")')]
    initial = {"verified": False, "refunded": False}
    solver = CaseSolver(MODEL, checks, 12, initial, mode=mode)  # type: ignore[arg-type]
    result = solver.compliant_witness()
    assert solver._shorter == {} and solver._solver is not None
    assert result.status == "found" and result.witness is not None
    assert result.witness == _witness_at_the_bound(CaseSolver(MODEL, checks, 12, initial, mode=mode))  # type: ignore[arg-type]
    assert [call.tool for call in result.witness.calls] == ["verify", "refund"]


def test_a_validation_record_carries_the_key_but_never_writes_it() -> None:
    # The export's oracle reads it from the case (as canonical_lists); written, it would change the bytes of
    # retail v4, validated with it but shipped before it existed. A suite read back has it off.
    record = ValidationRecord(witness_at_own_length=True, canonical_lists=True)
    assert record.solver_modes == {"canonical_lists": True, "witness_at_own_length": True}
    assert record.model_copy(update={"rounds": 2}).solver_modes == record.solver_modes
    assert "witness_at_own_length" not in record.model_dump_json()
    assert ValidationRecord.model_validate_json(record.model_dump_json()).solver_modes == {"canonical_lists": True}
    assert "witness_at_own_length" not in render("case")  # the schema of what is written
