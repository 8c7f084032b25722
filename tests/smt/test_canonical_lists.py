"""Canonical list item order (``CaseSolver(canonical_lists=True)``, a generation config's
``validation.canonical_lists``, recorded in the case's validation record): the compliant witness holds each list
argument's items sorted where the world model allows, so a witness with a list argument is shaped at its own
length like any other (issue 32: without it, such witnesses are redone at the bound to keep the solver's order of
the stored plans, which cost retail its slowest cases)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import z3

from mantra_env import oracle
from mantra_env.agents.scripted import plan_from_witness
from mantra_env.case import Case, ValidationRecord, load_suite
from mantra_env.checks import parse_check
from mantra_env.domains import load_domain
from mantra_env.smt import CaseSolver, Witness
from tests.smt.test_lists import INITIAL, MODEL, TOOLS

SUITES = Path(__file__).resolve().parents[2] / "mantra_env" / "domains"
RETURN = parse_check('CALL return_items(order_id="W1", item_ids=["i2", "i1"])')
EXCHANGE = parse_check('CALL exchange_items(item_ids=["i2", "i1"] PAIRED, new_item_ids=["n1", "n2"] PAIRED)')


def _witness(solver: CaseSolver) -> Witness:
    result = solver.compliant_witness()
    assert result.status == "found" and result.witness is not None
    return result.witness


def _args(witness: Witness, tool: str) -> list[dict[str, object]]:
    return [dict(call.args) for call in witness.calls if call.tool == tool]


def test_a_list_witness_is_shaped_at_its_own_length_with_its_items_sorted() -> None:
    on = CaseSolver(MODEL, [RETURN], 5, INITIAL, TOOLS, canonical_lists=True, witness_at_own_length=True)
    assert _args(_witness(on), "return_items") == [{"order_id": "W1", "item_ids": ["i1", "i2"]}]  # 3 calls
    assert on._solver is None  # the bound's formula was never loaded: no list gate
    off = CaseSolver(MODEL, [RETURN], 5, INITIAL, TOOLS, witness_at_own_length=True)
    assert _args(_witness(off), "return_items") == [{"order_id": "W1", "item_ids": ["i2", "i1"]}]  # the solver's
    assert off._solver is not None  # redone at the bound, as the stored plans were made
    at_bound = CaseSolver(MODEL, [RETURN], 5, INITIAL, TOOLS, canonical_lists=True)  # every pass at the bound
    assert _args(_witness(at_bound), "return_items") == [{"order_id": "W1", "item_ids": ["i1", "i2"]}]
    assert at_bound._shorter == {}


def test_a_paired_list_follows_its_sorted_partner_and_the_order_is_the_same_every_run() -> None:
    witnesses = [
        _witness(CaseSolver(MODEL, [EXCHANGE], 6, INITIAL, TOOLS, canonical_lists=True, witness_at_own_length=True))
        for _ in range(3)
    ]
    assert witnesses[0] == witnesses[1] == witnesses[2]
    (exchange,) = _args(witnesses[0], "exchange_items")
    assert exchange == {"item_ids": ["i1", "i2"], "new_item_ids": ["n2", "n1"]}  # the pairs the check pins
    for call in _args(witnesses[0], "return_items"):
        items = call["item_ids"]
        assert isinstance(items, list) and items == sorted(items)


V3_LIST_CASES = Path(__file__).parent / "fixtures" / "retail_v3_list_cases.jsonl"
"""Two exchanges of retail v3 (validated with canonical_lists off, their plans in the solver's item order), kept
here since v4 re-audited the suite: the cases whose stored order differs from the canonical one."""


def _shipped(domain: str, case_id: str) -> Case:
    if domain == "retail":
        lines = V3_LIST_CASES.read_text(encoding="utf-8").splitlines()
        (case,) = [c for c in map(Case.model_validate_json, lines) if c.id == case_id]
        return case
    (case,) = [c for c in load_suite(SUITES / domain / "suites" / "generated").cases if c.id == case_id]
    return case


def _solver(case: Case, canonical_lists: bool) -> CaseSolver:
    tools = load_domain(case.domain).tool_specs()
    bound = case.validation.trace_bound
    assert bound is not None
    return CaseSolver(
        case.world_model,
        case.checks,
        bound,
        case.scenario.valuation,
        tools,
        canonical_lists=canonical_lists,
        witness_at_own_length=True,
    )


def _pairs(plan: list[dict[str, Any]]) -> list[list[tuple[Any, Any]]]:
    """Per call, its (item, new item) pairs, sorted: the plan up to the order of its items."""
    found = []
    for call in plan:
        args = call["arguments"]
        assert isinstance(args, dict)
        found.append(sorted(zip(args.get("item_ids", []), args.get("new_item_ids", []), strict=True)))
    return found


@pytest.mark.parametrize("case_id", ["generated-s007-1", "generated-s013-1"])
def test_the_retail_exchanges_keep_their_pairs_in_canonical_order_at_their_own_length(case_id: str) -> None:
    case = _shipped("retail", case_id)
    tools = load_domain("retail").tool_specs()
    solver = _solver(case, canonical_lists=True)
    plan = plan_from_witness(case, _witness(solver), tools)
    assert solver._solver is None  # shaped on the encoding at the witness's own length
    assert case.oracle_plan is not None
    stored = [call.model_dump(mode="json") for call in case.oracle_plan]
    assert [call["tool"] for call in plan] == [call["tool"] for call in stored]
    assert _pairs(plan) == _pairs(stored)  # the same items, paired alike
    (listed,) = [call["arguments"] for call in plan if "item_ids" in call["arguments"]]
    stored_items = next(call.arguments["item_ids"] for call in case.oracle_plan if "item_ids" in call.arguments)
    assert listed["item_ids"] == sorted(listed["item_ids"]) != stored_items  # stored (mode off): the other order


@pytest.mark.slow
def test_the_canonical_order_is_the_one_every_pass_at_the_bound_gives() -> None:
    # the point of the key: at the bound and at the witness's own length the items come out in the same order
    case = _shipped("retail", "generated-s007-1")
    short = _witness(_solver(case, canonical_lists=True))
    solver = _solver(case, canonical_lists=True)
    assumptions = [*solver._checks(), *solver._world(), *solver._fit()]
    assert solver.solver.check(*assumptions) == z3.sat
    at_bound = solver._shaped(assumptions, solver._shortest(assumptions, solver.solver.model()))
    assert at_bound.calls == short.calls


def test_the_oracle_asks_in_the_mode_the_case_was_validated_in() -> None:
    case = _shipped("retail", "generated-s007-1")
    tools = load_domain("retail").tool_specs()
    bound = case.validation.trace_bound or 16
    modes = {"canonical_lists": True, "witness_at_own_length": True}
    recorded = case.model_copy(update={"oracle_plan": None, "validation": case.validation.model_copy(update=modes)})
    (listed,) = [
        c.args["item_ids"] for c in oracle.compliant_witness(recorded, tools, bound).calls if "item_ids" in c.args
    ]
    assert listed == ["1330660254", "3442732859"]  # sorted; the stored plan (mode off) has the other order
    assert recorded.validation.solver_modes == modes


def test_the_modes_are_left_out_of_a_record_when_off_so_old_suites_keep_their_bytes() -> None:
    assert ValidationRecord().model_dump(mode="json").keys().isdisjoint({"canonical_lists", "refuse_invented_ids"})
    assert ValidationRecord().solver_modes == {}
    on = ValidationRecord(canonical_lists=True, refuse_invented_ids=True)
    assert on.model_dump(mode="json")["canonical_lists"] is True
    assert ValidationRecord.model_validate_json(on.model_dump_json()).solver_modes == {
        "canonical_lists": True,
        "refuse_invented_ids": True,
    }
