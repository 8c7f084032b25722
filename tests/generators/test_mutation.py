"""The mutation audit's measurement (mantra_env.generators.mutation) on the first case of the shipped operations suite,
whose world model reads every argument of book_travel, and the judge stage (mantra_env.generators.mutation_audit) with
scripted judges."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from mantra_env.case import Case, PlannedCall, Suite, SuiteManifest, load_suite
from mantra_env.domains import load_domain
from mantra_env.env import MantraEnv
from mantra_env.generators.answers import rebuild_check
from mantra_env.generators.artifacts import Repair
from mantra_env.generators.exchange import AnswerPending
from mantra_env.generators.llm import RepairNeeded
from mantra_env.generators.mutation import CaseAuditor, MutationReport, audit_case, main, mutation_report, replay
from mantra_env.generators.mutation_audit import AuditContext, MutationAuditCheck, audit_cases, survivors_text
from mantra_env.grading import grade_case
from mantra_env.mutants import Mutant, derive_mutants
from mantra_env.worldmodel.edits import AddCheck, RemoveCheck, ReplaceCheck

SUITE = Path(__file__).parents[2] / "mantra_env" / "domains" / "operations" / "suites" / "generated"
DOMAIN = load_domain("operations")
TOOLS = DOMAIN.tool_specs()


@pytest.fixture(scope="module")
def case() -> Case:
    found = load_suite(SUITE).cases[0]
    assert found.id == "generated-s000-1" and found.oracle_plan is not None
    return found


def env_of(*cases: Case) -> MantraEnv:
    manifest = SuiteManifest(name="t", domain="operations", case_count=len(cases))
    return MantraEnv(Suite(manifest=manifest, cases=list(cases)), DOMAIN)


def classify(case: Case, calls: list[PlannedCall], **fields: Any) -> tuple[str, str, bool]:
    mutant = Mutant(kind=fields.pop("kind", "drop_read"), detail="t", calls=tuple(calls), **fields)
    auditor = CaseAuditor(case, TOOLS, 8)
    trace = replay(env_of(case), case.id, mutant)
    verdict_passed = audit_verdict(case, trace)
    return (*auditor.classify(mutant, trace), verdict_passed)


def audit_verdict(case: Case, trace: Any) -> bool:
    return grade_case(trace, case, TOOLS).passed


def test_the_plan_itself_is_right_and_passes(case: Case) -> None:
    assert classify(case, list(case.oracle_plan or [])) == ("right", "the world model admits it", True)


def test_a_dropped_read_is_wrong_by_the_world_model_and_the_checks_fail_it(case: Case) -> None:
    plan = list(case.oracle_plan or [])
    assert classify(case, plan[1:]) == ("wrong", "the world model refuses it", False)


def test_a_skipped_write_of_the_plan_is_wrong_whatever_the_model_says(case: Case) -> None:
    plan = list(case.oracle_plan or [])
    kind, reason, _ = classify(case, plan[:3])
    assert (kind, reason) == ("wrong", "skips the plan's write update_request_status")


def test_an_added_call_the_env_refuses_is_not_counted(case: Case) -> None:
    plan = list(case.oracle_plan or [])
    again = PlannedCall(tool="book_travel", arguments=plan[2].arguments)  # booked already: the env refuses
    kind, _, _ = classify(case, [*plan, again], kind="insert_write", added=len(plan))
    assert kind == "refused"


def test_an_accepted_write_nobody_asked_for_is_wrong(case: Case) -> None:
    plan = list(case.oracle_plan or [])
    other = PlannedCall(tool="update_request_status", arguments={"request_id": "TR-5502", "status": "booked"})
    found = classify(case, [*plan, other], kind="insert_write", added=len(plan))
    assert found == ("wrong", "unrequested write: step 4 update_request_status", False)


def test_a_swap_of_an_argument_the_model_never_reads_is_left_unknown(case: Case) -> None:
    plan = list(case.oracle_plan or [])
    moved = PlannedCall(tool="book_travel", arguments={**plan[2].arguments, "destination": "Paris, France"})
    found = classify(case, [*plan[:2], moved, plan[3]], kind="swap_argument", swapped=("book_travel", "destination"))
    assert found[:2] == ("unknown", "the world model does not read destination of book_travel")
    dated = PlannedCall(tool="book_travel", arguments={**plan[2].arguments, "depart_date": "2026-12-04"})
    found = classify(case, [*plan[:2], dated, plan[3]], kind="swap_argument", swapped=("book_travel", "depart_date"))
    assert found == ("wrong", "the world model refuses it", False)


def test_a_model_that_refuses_the_plan_classifies_nothing(case: Case) -> None:
    broken = case.model_copy(update={"world_model": case.world_model.replace("(pre  policy_verified", "(pre  false")})
    kind, reason, _ = classify(broken, list(case.oracle_plan or [])[1:])
    assert (kind, reason) == ("unknown", "the world model does not admit the case's own plan")


def test_the_report_scores_each_kind_and_the_cli_prints_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = mutation_report(SUITE, limit=1)
    drop = report.kinds["drop_read"]
    assert (drop.derived, drop.wrong, drop.wrong_failed_by_checks, drop.wrong_failed) == (2, 2, 2, 2)
    assert report.kinds["extra_read"].right == report.kinds["extra_read"].right_passed == 1
    assert "| drop_read | 2 | 0 | 0 | 2 | 100 % (2/2) | 100 % (2/2) | 0 | - |" in report.table()
    out = tmp_path / "scores.json"
    assert main([str(SUITE), "--cases", "1", "--json", str(out)]) == 0
    assert "| kind | derived |" in capsys.readouterr().out
    assert json.loads(out.read_text())["kinds"]["drop_read"]["wrong"] == 2


def test_the_cli_names_a_missing_suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "nowhere")]) == 2
    assert "no such suite folder" in capsys.readouterr().err


# --- the judge stage --------------------------------------------------------------------------------------------


def survivor_case(case: Case) -> Case:
    """The case with its depart-date pin dropped from the world model: a swapped date then passes the model (and
    is left unknown: the model reads no date), while a removed PRECEDES check lets a dropped read pass."""
    checks = [entry for entry in case.checks if not entry.text.startswith("CALL get_regional_override")]
    return case.model_copy(update={"checks": checks, "oracle_plan": None})


class Judge:
    def __init__(self, repair: Repair | None) -> None:
        self.repair = repair
        self.asked: list[tuple[str, str, Any]] = []

    async def generate(self, stage: str, subject: str, messages: Any, answer: MutationAuditCheck) -> Repair:
        self.asked.append((stage, subject, messages))
        if self.repair is None:
            raise AnswerPending([f"{stage}/{subject}#0"])
        return answer.check(self.repair)


def run_audit(
    case: Case, repair: Repair | None, judge_scope_rules: bool = False
) -> tuple[list[Case], dict[str, str], Judge]:
    judge = Judge(repair)
    context = {case.id: AuditContext("s000-1", "(excerpt)", "(scenario)")}
    kept, invalid = asyncio.run(
        audit_cases(judge, [case], DOMAIN, TOOLS, context, 16, 20_000, judge_scope_rules=judge_scope_rules)  # type: ignore[arg-type]
    )
    return kept, invalid, judge


def test_surviving_mutants_go_to_one_judge_request_per_case(case: Case) -> None:
    weak = survivor_case(case)
    kept, invalid, judge = run_audit(weak, Repair(locus="none", reason="the manual allows it"))
    (asked,) = judge.asked
    assert asked[:2] == ("mutation_audit", "s000-1")
    assert "[drop_read] step 1 get_regional_override" in asked[2][1]["content"]
    assert invalid == {} and [c.id for c in kept] == [case.id]
    entry = kept[0].validation.history[-1]
    assert entry["stage"] == "mutation_audit" and entry["outcome"] == "verdict declared right"
    assert kept[0].checks == weak.checks


@pytest.mark.parametrize("scoped", [False, True])
def test_the_judge_gets_the_scope_rules_only_with_the_key_on(case: Case, scoped: bool) -> None:
    _, _, judge = run_audit(survivor_case(case), Repair(locus="none", reason="fine"), judge_scope_rules=scoped)
    (asked,) = judge.asked
    system = asked[2][0]["content"]
    assert ("Scope of your edits" in system) is scoped
    assert all((f"- {spec.name}(" in system) is scoped for spec in TOOLS)


def test_a_case_without_survivors_asks_nothing(case: Case) -> None:
    kept, _, judge = run_audit(case.model_copy(update={"oracle_plan": None}), Repair(locus="none"))
    mutants = len(derive_mutants(case, TOOLS))
    assert judge.asked == [] and kept[0].validation.history[-1] == {
        "stage": "mutation_audit",
        "mutants": mutants,
        "survivors": 0,
    }


def test_a_pending_judge_stops_the_stage_and_an_invalid_scenario_drops_the_case(case: Case) -> None:
    with pytest.raises(AnswerPending):
        run_audit(survivor_case(case), None)
    kept, invalid, _ = run_audit(survivor_case(case), Repair(locus="scenario_invalid", reason="ambiguous"))
    assert kept == [] and invalid == {case.id: "ambiguous"}


def test_edits_that_break_the_case_are_dropped_and_recorded(case: Case) -> None:
    # removing the booking check lets a trace pass on calls the world model refuses: a forward conflict
    remove = Repair(locus="checks", edits=[RemoveCheck(id=case.checks[2].id)])
    kept, _, _ = run_audit(survivor_case(case), remove)
    assert kept[0].validation.history[-1]["outcome"] == "edits dropped: forward conflict"
    assert kept[0].checks == survivor_case(case).checks


def test_edits_that_fix_the_verdict_are_applied_once_the_case_validates_again(case: Case) -> None:
    read_first = 'CALL get_regional_override(region="EMEA") PRECEDES CALL book_travel()'
    kept, _, _ = run_audit(survivor_case(case), Repair(locus="checks", edits=[AddCheck(check=read_first)]))
    entry = kept[0].validation.history[-1]
    assert entry["outcome"] == "applied and revalidated" and entry["survivors"] == 1
    assert kept[0].checks[-1].text == read_first
    # audited again, the dropped read no longer survives
    planned = kept[0].model_copy(update={"oracle_plan": case.oracle_plan})
    assert not any(r.survives for r in audit_case(env_of(planned), planned, TOOLS))


def test_the_answer_check_refuses_edits_that_do_not_apply_and_rebuilds_from_its_context(case: Case) -> None:
    check = MutationAuditCheck(model=case.world_model, checks=list(case.checks), scenario="s000-1", tools=TOOLS)
    with pytest.raises(RepairNeeded, match=r"not_applicable|no check"):
        check.check(Repair(locus="checks", edits=[RemoveCheck(id="nope")]))
    with pytest.raises(RepairNeeded, match="needs the edits"):
        check.check(Repair(locus="checks"))
    tightened = ReplaceCheck(
        id=case.checks[0].id, check='CALL get_regional_override(region="EMEA") PRECEDES CALL book_travel()'
    )
    assert check.check(Repair(locus="checks", edits=[tightened])).locus == "checks"
    assert rebuild_check("mutation_audit", check.model_dump(mode="json")) == check


def test_survivors_text_lists_each_trace_and_who_says_what(case: Case) -> None:
    results = audit_case(env_of(case), case, TOOLS)[:1]
    text = survivors_text(results)
    assert text.startswith("1. [drop_read] step 0 verify_travel_policy")
    assert "judged wrong: the world model refuses it; the verdict fails it" in text


def test_the_report_counts_survivors(case: Case) -> None:
    planned = survivor_case(case).model_copy(update={"oracle_plan": case.oracle_plan})
    report = MutationReport(suite="t")
    report.add(planned.id, audit_case(env_of(planned), planned, TOOLS))
    assert [r.mutant.kind for r in report.survivors[planned.id]] == ["drop_read"]
