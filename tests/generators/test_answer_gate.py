"""ANSWER checks in generation (issue 33 item 3), behind config ``checks.answer_checks``: the checks stage may write
them (and says whether the request asks for information), the export resolves their facts on the case's database
and refuses an information request without one. Off (the default), nothing changes."""

from __future__ import annotations

import pytest

from mantra_env.agents.base import play
from mantra_env.agents.scripted import OraclePolicy
from mantra_env.case import Case, CaseCheck, Scenario
from mantra_env.checks import Answer
from mantra_env.domains import load_domain
from mantra_env.env import MantraEnv
from mantra_env.generators import prompts
from mantra_env.generators.answer_gate import AnswerUnresolved, answer_gate, with_answer_facts
from mantra_env.generators.artifacts import CheckDraft, CheckSet, CheckSetWithFacts, ScenarioChecks
from mantra_env.generators.checkgen import ChecksCheck, parse_check_set
from mantra_env.generators.config import GenerationConfig
from mantra_env.generators.export import export_suite
from mantra_env.generators.llm import RepairNeeded

DOMAIN = load_domain("airline")
TOOLS = DOMAIN.tool_specs()
READ = 'CALL get_reservation_details(reservation_id="BW0ESI")'
DATES = f"ANSWER {READ}.flights[*].date AS date"


def _case(*answers: str, case_id: str = "generated-s000-1") -> Case:
    return Case(
        id=case_id,
        domain="airline",
        scenario=Scenario(prompt="When do I fly on reservation BW0ESI?", internal={}),
        checks=[CaseCheck(id="read", check=READ)] + [CaseCheck(id=f"fact{k}", check=a) for k, a in enumerate(answers)],
        world_model="(model (goal true))",
    )


def test_the_export_resolves_each_answer_checks_facts_from_the_oracles_read() -> None:
    resolved = with_answer_facts(_case(DATES, f"ANSWER {READ}.flights[0].price AS money"), DOMAIN)
    facts = [entry.check for entry in resolved.checks if isinstance(entry.check, Answer)]
    assert [check.expected for check in facts] == [("2026-05-24",), ("196.00",)]
    assert facts[0].text == f'{DATES} = ["2026-05-24"]'


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (f"ANSWER {READ}.flights[*].gate AS time", "no field 'gate'"),
        (f"ANSWER {READ}.flights[0].price AS date", "not an ISO date"),
        ('ANSWER CALL get_reservation_details(reservation_id="NOPE00").status AS enum', "NOPE00"),
    ],
)
def test_a_fact_the_database_does_not_hold_is_refused_naming_the_check(answer: str, message: str) -> None:
    with pytest.raises(AnswerUnresolved, match=message):
        with_answer_facts(_case(answer), DOMAIN)


def test_the_gate_refuses_an_information_request_without_an_answer_check() -> None:
    told, silent = _case(DATES, case_id="generated-s000-1"), _case(case_id="generated-s000-2")
    kept, refused = answer_gate([told, silent], DOMAIN, information={told.id, silent.id})
    assert [case.id for case in kept] == [told.id]
    assert refused == {silent.id: ("missing_answer_check", "the request asks for information but no check grades it")}
    suite, why = export_suite("generated", DOMAIN, 0, "", [told, silent], {}, information={told.id, silent.id})
    assert [case.id for case in suite.cases] == [told.id]
    assert suite.manifest.screening == {"missing_answer_check": 1}
    assert suite.manifest.stage_counts["answer_refused"] == 1
    assert suite.manifest.stage_counts["trivially_passed"] == 0
    assert why[silent.id].startswith("missing_answer_check: ")
    (shipped,) = suite.cases
    assert play(MantraEnv(suite, DOMAIN), OraclePolicy(), shipped.id)["verdict"].passed


def test_gate_off_exports_as_before() -> None:
    silent = _case()
    suite, _ = export_suite("generated", DOMAIN, 0, "", [silent], {})
    assert [case.id for case in suite.cases] == [silent.id]
    assert "answer_refused" not in suite.manifest.stage_counts
    assert GenerationConfig.model_fields["checks"].default_factory().answer_checks is False  # type: ignore[misc]
    assert ScenarioChecks(scenario_id="s000-1").model_dump_json() == '{"scenario_id":"s000-1","checks":[],"error":""}'


def test_the_checks_stage_accepts_answer_checks_on_read_tools_only() -> None:
    answer = CheckSet(checks=[CheckDraft(id="read", check=READ), CheckDraft(id="dates", check=DATES)])
    entries = parse_check_set(answer, TOOLS)
    assert isinstance(entries[1].check, Answer) and entries[1].check.expected is None
    for bad, message in [
        ('ANSWER CALL cancel_reservation(reservation_id="BW0ESI").status AS enum', "is a write"),
        ('ANSWER CALL get_reservation_details(booking="BW0ESI").status AS enum', "does not take"),
    ]:
        with pytest.raises(RepairNeeded, match=message):
            parse_check_set(CheckSet(checks=[CheckDraft(id="x", check=bad)]), TOOLS)


def test_the_checks_prompt_and_answer_format_change_only_with_the_key() -> None:
    off = prompts.checks("excerpt", TOOLS, "scenario")
    on = prompts.checks("excerpt", TOOLS, "scenario", answer_checks=True)
    assert off == prompts.checks("excerpt", TOOLS, "scenario", answer_checks=False)
    assert "ANSWER" not in off[0]["content"] and prompts.CHECK_LANGUAGE in off[0]["content"]
    assert "ANSWER CALL read" in on[0]["content"] and "asks_for_information" in on[0]["content"]
    assert ChecksCheck(tools=TOOLS).output() is CheckSet
    assert ChecksCheck(tools=TOOLS, answer_checks=True).output() is CheckSetWithFacts


def test_resolving_an_answer_checks_facts_keeps_who_wrote_the_check() -> None:
    case = _case(DATES)
    stamped = [entry.model_copy(update={"written_by": "locus_reassessment round 2"}) for entry in case.checks]
    resolved = with_answer_facts(case.model_copy(update={"checks": stamped}), DOMAIN)
    assert [entry.written_by for entry in resolved.checks] == ["locus_reassessment round 2"] * 2
