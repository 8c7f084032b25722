"""Mutants of a case's oracle plan (mantra_env.mutants) on a hand-made telecom-like case."""

from __future__ import annotations

from typing import Any

from mantra_env.case import Case, CaseCheck, PlannedCall, Scenario
from mantra_env.checks import parse_check
from mantra_env.mutants import VARIANT_KINDS, WRONG_KINDS, Mutant, derive_mutants
from mantra_env.tools import ToolSpec


def spec(name: str, kind: str, required: tuple[str, ...] = (), **properties: dict[str, Any]) -> ToolSpec:
    parameters = {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}
    return ToolSpec(name=name, kind=kind, parameters=parameters)  # type: ignore[arg-type]


TEXT: dict[str, Any] = {"type": "string"}
TOOLS = [
    spec("get_customer", "read", ("customer_id",), customer_id=TEXT),
    spec("get_line", "read", ("line_id",), line_id=TEXT),
    spec("get_bill", "read", ("bill_id",), bill_id=TEXT),
    spec("suspend_line", "write", ("line_id",), line_id=TEXT, reason={**TEXT, "x-free-text": True}),
    spec("transfer", "write", ("summary",), summary=TEXT),
    spec("close_account", "write", ("account_id",), account_id=TEXT),
]
PLAN = [
    PlannedCall(tool="get_customer", arguments={"customer_id": "C1"}),
    PlannedCall(tool="get_line", arguments={"line_id": "L1"}),
    PlannedCall(tool="suspend_line", arguments={"line_id": "L1", "reason": "lost phone"}),
]
PLAN_CALLS = [(c.tool, dict(c.arguments)) for c in PLAN]


def case(plan: list[PlannedCall] | None = PLAN, checks: tuple[str, ...] = ()) -> Case:
    texts = checks or ('CALL get_line(line_id="L1") PRECEDES CALL suspend_line(line_id="L1")',)
    return Case(
        id="c1",
        domain="telecom",
        scenario=Scenario(
            prompt="Suspend my line L1, my phone is lost.",
            external={"customer_id": "C1", "line_id": "L1", "other_line_id": "L2", "bill_id": "B7"},
            internal={"summary": "lost phone"},
        ),
        checks=[CaseCheck(id=f"k{i}", check=parse_check(text)) for i, text in enumerate(texts)],
        oracle_plan=plan,
    )


def of_kind(mutants: list[Mutant], kind: str) -> list[list[tuple[str, dict[str, Any]]]]:
    return [[(c.tool, dict(c.arguments)) for c in m.calls] for m in mutants if m.kind == kind]


def test_each_read_is_dropped_once() -> None:
    dropped = of_kind(derive_mutants(case(), TOOLS), "drop_read")
    assert [[tool for tool, _ in calls] for calls in dropped] == [
        ["get_line", "suspend_line"],
        ["get_customer", "suspend_line"],
    ]


def test_each_write_moves_before_the_first_read() -> None:
    assert [[tool for tool, _ in calls] for calls in of_kind(derive_mutants(case(), TOOLS), "write_first")] == [
        ["suspend_line", "get_customer", "get_line"]
    ]


def test_a_stated_argument_is_swapped_for_a_stated_value_of_its_family_only() -> None:
    swapped = of_kind(derive_mutants(case(), TOOLS), "swap_argument")
    # line ids swap with the other stated line id, never with the customer or bill id; the free-text reason is
    # stated nowhere and is left alone
    assert swapped == [
        [("get_customer", {"customer_id": "C1"}), ("get_line", {"line_id": "L2"}), PLAN_CALLS[2]],
        [PLAN_CALLS[0], PLAN_CALLS[1], ("suspend_line", {"line_id": "L2", "reason": "lost phone"})],
    ]


def test_write_tools_the_plan_does_not_call_are_inserted_with_the_scenario_values() -> None:
    mutants = derive_mutants(case(), TOOLS)
    inserted = [m for m in mutants if m.kind == "insert_write"]
    # transfer takes the stated summary; close_account needs an account id nobody states: no plausible call
    assert [(m.calls[-1].tool, m.calls[-1].arguments, m.added) for m in inserted] == [
        ("transfer", {"summary": "lost phone"}, 3)
    ]


def test_independent_adjacent_reads_are_permuted() -> None:
    assert [[tool for tool, _ in calls] for calls in of_kind(derive_mutants(case(), TOOLS), "permute_reads")] == [
        ["get_line", "get_customer", "suspend_line"]
    ]


def test_a_read_of_an_unstated_value_depends_on_an_earlier_read_and_is_not_permuted() -> None:
    plan = [PLAN[0], PlannedCall(tool="get_line", arguments={"line_id": "L9"}), PLAN[2]]
    assert of_kind(derive_mutants(case(plan), TOOLS), "permute_reads") == []


def test_one_extra_read_of_a_stated_record_comes_before_the_first_write() -> None:
    extra = [m for m in derive_mutants(case(), TOOLS) if m.kind == "extra_read"]
    assert [(m.calls[m.added].tool, m.added) for m in extra if m.added is not None] == [("get_bill", 2)]
    assert len(extra) == 1


def test_the_other_branch_of_an_or_replaces_the_call_the_plan_makes() -> None:
    checks = ('CALL suspend_line(line_id="L1") OR CALL transfer()',)
    branches = [m for m in derive_mutants(case(checks=checks), TOOLS) if m.kind == "other_branch"]
    assert [(c.tool, dict(c.arguments)) for c in branches[0].calls] == [
        ("get_customer", {"customer_id": "C1"}),
        ("get_line", {"line_id": "L1"}),
        ("transfer", {"summary": "lost phone"}),
    ]
    assert len(branches) == 1 and branches[0].added == 2


def test_a_case_without_a_plan_has_no_mutants_and_kinds_are_partitioned() -> None:
    assert derive_mutants(case(plan=None), TOOLS) == []
    assert not set(WRONG_KINDS) & set(VARIANT_KINDS)


def test_a_first_name_never_swaps_for_a_last_name_and_an_empty_value_states_nothing() -> None:
    tools = [*TOOLS, spec("find_user", "read", ("first_name", "last_name"), first_name=TEXT, last_name=TEXT)]
    plan = [PlannedCall(tool="find_user", arguments={"first_name": "Sara", "last_name": "Santos"}), PLAN[2]]
    base = case(plan)
    stated = base.scenario.model_copy(
        update={
            "external": {**base.scenario.external, "first_name": "Sara", "last_name": "Santos", "spare_line_id": ""}
        }
    )
    swapped = of_kind(derive_mutants(base.model_copy(update={"scenario": stated}), tools), "swap_argument")
    assert all(calls[0] == ("find_user", {"first_name": "Sara", "last_name": "Santos"}) for calls in swapped)
    assert [calls[1] for calls in swapped] == [("suspend_line", {"line_id": "L2", "reason": "lost phone"})]
