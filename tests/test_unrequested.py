"""The unrequested-write rule on hand-made tools, checks and plans (the shipped cases' traps: tests/env)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mantra_env.case import Case, CaseCheck, PlannedCall, Scenario
from mantra_env.checks import FailureCategory, parse_check
from mantra_env.domains import load_domain
from mantra_env.grading import GRADER_VERSION, grade, grade_case
from mantra_env.tools import ToolSpec
from mantra_env.trace import ToolCall, ToolError, Trace
from mantra_env.unrequested import RequestedWrites, UnrequestedWrite, unrequested_writes
from mantra_env.verdict import VERDICT_ADAPTER, Verdict, read_verdict


def spec(name: str, kind: str, **properties: dict[str, Any]) -> ToolSpec:
    parameters = {"type": "object", "properties": properties, "required": [], "additionalProperties": False}
    return ToolSpec(name=name, kind=kind, parameters=parameters)  # type: ignore[arg-type]


TEXT: dict[str, Any] = {"type": "string"}
TOOLS = [
    spec("get_line", "read", line_id=TEXT),
    spec("suspend_line", "write", line_id=TEXT, reason=TEXT),
    spec("resume_line", "write", line_id=TEXT),
    spec("refuel", "write", line_id=TEXT, gigabytes={"type": "integer"}, payment_method_id={**TEXT, "x-target": False}),
    spec("transfer", "write", summary=TEXT),
    spec("tag", "write", label={**TEXT, "x-target": True}, note=TEXT),
]
PLAN = [
    PlannedCall(tool="get_line", arguments={"line_id": "L1"}),
    PlannedCall(tool="suspend_line", arguments={"line_id": "L1", "reason": "lost"}),
    PlannedCall(tool="refuel", arguments={"line_id": "L1", "gigabytes": 2, "payment_method_id": "card_1"}),
    PlannedCall(tool="tag", arguments={"label": "vip", "note": "x"}),
]
CHECKS = [
    CaseCheck(id="read_first", check=parse_check('CALL get_line(line_id="L1") PRECEDES CALL suspend_line()')),
    CaseCheck(id="either", check=parse_check('CALL suspend_line(line_id="L1") OR CALL transfer()')),
]


def writes(*calls: tuple[str, dict[str, Any]], errors: frozenset[int] = frozenset()) -> tuple[UnrequestedWrite, ...]:
    steps = tuple(
        ToolCall(step=i, tool=tool, args=args, error=ToolError(code="x", message="refused") if i in errors else None)
        for i, (tool, args) in enumerate(calls)
    )
    found = unrequested_writes(Trace(calls=steps), CHECKS, PLAN, TOOLS)
    assert found is not None
    return found


def test_a_write_the_case_never_asks_for_is_unrequested() -> None:
    found = writes(("get_line", {"line_id": "L1"}), ("resume_line", {"line_id": "L1"}))
    assert found == (UnrequestedWrite(step=1, tool="resume_line", args={"line_id": "L1"}),)


def test_reads_are_never_unrequested() -> None:
    assert writes(("get_line", {"line_id": "L9"}), ("get_line", {})) == ()


def test_a_plan_write_with_other_unpinned_values_is_requested() -> None:
    assert writes(("suspend_line", {"line_id": "L1", "reason": "stolen"})) == ()
    assert writes(("refuel", {"line_id": "L1", "gigabytes": 5, "payment_method_id": "card_1"})) == ()


def test_paying_another_way_is_the_same_write() -> None:
    # payment_method_id is marked "x-target": false: it pays for the write, it is not the record written.
    assert writes(("refuel", {"line_id": "L1", "gigabytes": 2, "payment_method_id": "gift_card_7"})) == ()


def test_a_plan_write_of_another_record_is_unrequested() -> None:
    found = writes(("refuel", {"line_id": "L2", "gigabytes": 2, "payment_method_id": "card_1"}))
    assert [w.step for w in found] == [0]


def test_identifiers_are_exact_a_case_differing_id_is_another_record() -> None:
    assert [w.tool for w in writes(("refuel", {"line_id": "l1", "gigabytes": 2}))] == ["refuel"]


def test_a_marked_target_without_an_id_name_identifies_the_write() -> None:
    assert writes(("tag", {"label": "vip", "note": "other"})) == ()
    assert [w.args for w in writes(("tag", {"label": "gold"}))] == [{"label": "gold"}]


def test_the_other_branch_of_an_or_over_write_tools_is_requested() -> None:
    # transfer is no plan write; the OR's other branch names it (an argument-free atom matches every call).
    assert writes(("transfer", {"summary": "customer asked for a human"})) == ()


def test_an_atom_that_names_no_record_of_a_planned_write_requests_only_the_plans_record() -> None:
    # suspend_line() is an argument-free PRECEDES anchor: it orders the suspension, it does not say which line.
    assert [w.args for w in writes(("suspend_line", {"line_id": "L7"}))] == [{"line_id": "L7"}]
    # An atom that pins the target names its record, as the OR's suspend_line(line_id="L1") does.
    assert writes(("suspend_line", {"line_id": "L1", "reason": "other"})) == ()
    other = [CaseCheck(id="x", check=parse_check('CALL suspend_line(line_id="L7") OR CALL transfer()'))]
    trace = Trace.of(("suspend_line", {"line_id": "L7"}))
    assert unrequested_writes(trace, [*CHECKS, *other], PLAN, TOOLS) == ()


def test_refused_attempts_never_count() -> None:
    assert writes(("resume_line", {"line_id": "L1"}), errors=frozenset({0})) == ()


def test_calls_of_unknown_tools_are_not_writes() -> None:
    assert writes(("drop_database", {})) == ()


def test_no_stored_plan_means_not_graded_for_writes() -> None:
    trace = Trace.of(("resume_line", {"line_id": "L1"}))
    assert unrequested_writes(trace, CHECKS, None, TOOLS) is None
    assert unrequested_writes(trace, CHECKS, [], TOOLS) == (
        UnrequestedWrite(step=0, tool="resume_line", args={"line_id": "L1"}),
    )


CALLS = st.sampled_from(
    [
        ("get_line", {"line_id": "L1"}),
        ("suspend_line", {"line_id": "L1"}),
        ("resume_line", {"line_id": "L1"}),
        ("refuel", {"line_id": "L2"}),
        ("refuel", {"line_id": "L1", "payment_method_id": "g"}),
        ("tag", {"label": "gold"}),
        ("transfer", {}),
    ]
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(CALLS, st.booleans()), max_size=8))
def test_each_call_is_judged_alone_so_a_prefix_has_a_prefix_of_the_writes(steps: list[Any]) -> None:
    calls = [call for call, _ in steps]
    errors = frozenset(i for i, (_, refused) in enumerate(steps) if refused)
    whole = writes(*calls, errors=errors)
    for cut in range(len(calls) + 1):
        assert writes(*calls[:cut], errors=errors) == tuple(w for w in whole if w.step < cut)
    judge = RequestedWrites(CHECKS, PLAN, TOOLS)
    trace_calls = [
        ToolCall(step=i, tool=t, args=a, error=ToolError(code="x", message="m") if i in errors else None)
        for i, (t, a) in enumerate(calls)
    ]
    assert [c.step for c in trace_calls if judge.is_unrequested(c)] == [w.step for w in whole]


def test_targets_default_to_id_parameters_unless_marked() -> None:
    by_name = {tool.name: tool for tool in TOOLS}
    assert by_name["refuel"].targets() == ("line_id",)
    assert by_name["tag"].targets() == ("label",)
    assert by_name["transfer"].targets() == ()
    sent = by_name["refuel"].openai_schema()["function"]["parameters"]["properties"]
    assert "x-target" not in sent["payment_method_id"]  # mantra's own mark, not sent to providers


def test_grade_is_the_checks_alone_and_grader_version_is_two() -> None:
    verdict = grade(Trace.of(("resume_line", {"line_id": "L1"})), CHECKS)
    assert verdict.checks_passed == verdict.passed and verdict.unrequested_writes is None
    assert GRADER_VERSION == 2
    assert FailureCategory.UNREQUESTED_WRITE == "unrequested_write"


def test_a_verdict_passes_only_with_its_checks_and_no_unrequested_write() -> None:
    checks = grade(Trace.of(("get_line", {"line_id": "L1"}), ("suspend_line", {"line_id": "L1"})), CHECKS).checks
    wrong = (UnrequestedWrite(step=2, tool="resume_line", args={"line_id": "L1"}),)
    assert Verdict.combined(checks, ()).passed
    assert Verdict.combined(checks, None).passed
    failed = Verdict.combined(checks, wrong)
    assert failed.checks_passed and not failed.passed
    with pytest.raises(ValueError, match="contradicts itself"):
        Verdict(True, checks, True, wrong)


def test_verdict_json_round_trips_and_reads_version_one() -> None:
    checks = grade(Trace.of(("get_line", {"line_id": "L1"})), CHECKS).checks
    verdict = Verdict.combined(checks, (UnrequestedWrite(step=0, tool="resume_line", args={"line_id": "L1"}),))
    assert VERDICT_ADAPTER.validate_json(verdict.to_json()) == verdict
    old = VERDICT_ADAPTER.dump_python(grade(Trace(), CHECKS), mode="json")
    del old["checks_passed"], old["unrequested_writes"]
    read = read_verdict(old)
    assert read.checks_passed is False and read.unrequested_writes is None and not read.graded_for_writes


def test_grade_case_is_the_checks_and_the_writes_together() -> None:
    case = Case(id="c", domain="telecom", scenario=Scenario(prompt="p"), checks=CHECKS, oracle_plan=PLAN)
    trace = Trace.of(
        ("get_line", {"line_id": "L1"}), ("suspend_line", {"line_id": "L1"}), ("resume_line", {"line_id": "L1"})
    )
    verdict = grade_case(trace, case, TOOLS)
    assert verdict.checks_passed and not verdict.passed
    assert [write.step for write in verdict.unrequested_writes or ()] == [2]
    unplanned = grade_case(trace, case.model_copy(update={"oracle_plan": None}), TOOLS)
    assert unplanned.passed and unplanned.unrequested_writes is None


def test_the_shipped_domains_mark_payment_methods_as_no_target() -> None:
    # Paying by gift card instead of card is the same write: the payment method is never what a write changes.
    for name in ("retail", "airline", "telecom"):
        for tool in load_domain(name).tool_specs():
            paid = {"payment_method_id", "payment_id"} & set(tool.properties)
            if tool.kind == "write" and paid:
                assert not paid & set(tool.targets()), tool.name
                assert tool.targets(), f"{tool.name} names no record"
