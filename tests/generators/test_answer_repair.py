"""Stage ``answer_repair`` (config ``checks.repair_answer_checks``): an ANSWER check whose path the read's result
does not have, or an information request with no ANSWER check, goes back to the checks writer with the reads' real
results, and the writer's checks replace the old ones, instead of the export refusing the case."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest

from mantra_env.case import Case, CaseCheck, Scenario
from mantra_env.checks import Answer
from mantra_env.domains import load_domain
from mantra_env.generators.answer_gate import answer_gate
from mantra_env.generators.answer_repair import (
    DECLINED,
    STAGE,
    AnswerChecks,
    AnswerRepairCheck,
    needs_repair,
    repair_answers,
)
from mantra_env.generators.config import STAGES, CheckSettings, GenerationConfig
from mantra_env.generators.exchange import ROLES
from mantra_env.generators.llm import AnswerCheck, RepairNeeded

DOMAIN = load_domain("airline")
READ = 'CALL get_reservation_details(reservation_id="BW0ESI")'
GUESSED = f"ANSWER {READ}.flight_dates[*] AS date"  # the writer's guess at the result's shape
RIGHT = f"ANSWER {READ}.flights[*].date AS date"


def _case(*answers: str) -> Case:
    return Case(
        id="generated-s000-1",
        domain="airline",
        scenario=Scenario(prompt="When do I fly on reservation BW0ESI?", internal={}),
        checks=[CaseCheck(id="read", check=READ)] + [CaseCheck(id=f"fact{k}", check=a) for k, a in enumerate(answers)],
        world_model="(model (goal true))",
    )


class Writer:
    """A checks writer that answers each request with the next of ``answers`` (checked as the pipeline checks)."""

    def __init__(self, *answers: list[str]) -> None:
        self.answers, self.asked = list(answers), []  # type: list[list[str]], list[tuple[str, str, Any]]

    async def generate(self, stage: str, subject: str, messages: Any, answer: AnswerCheck[Any]) -> Any:
        self.asked.append((stage, subject, messages))
        return answer.check(AnswerChecks(answers=self.answers.pop(0)))


def test_a_guessed_path_goes_back_with_the_reads_result_and_the_rewritten_check_resolves() -> None:
    case = _case(GUESSED)
    problems = needs_repair(case, DOMAIN, asks_for_information=True)
    assert len(problems) == 1 and "no field 'flight_dates'" in problems[0]
    assert answer_gate([case], DOMAIN, {case.id})[1][case.id][0] == "answer_unresolved"  # refused without repair

    writer = Writer([RIGHT])
    repaired = asyncio.run(repair_answers(writer, case, "s000-1", DOMAIN, problems, "answer_repair"))  # type: ignore[arg-type]
    ((stage, subject, messages),) = writer.asked
    assert (stage, subject) == (STAGE, "s000-1")
    shown = messages[1]["content"]
    assert GUESSED in shown and "no field 'flight_dates'" in shown
    assert '"flights": [' in shown and '"date": "2026-05-24"' in shown  # the read's real result
    assert [entry.id for entry in repaired.checks] == ["read", "answer_1"]
    assert repaired.checks[1].written_by == "answer_repair" and repaired.checks[0] == case.checks[0]
    kept, refused = answer_gate([repaired], DOMAIN, {case.id})
    assert not refused
    (fact,) = [entry.check for entry in kept[0].checks if isinstance(entry.check, Answer)]
    assert fact.expected == ("2026-05-24",)
    assert not needs_repair(repaired, DOMAIN, asks_for_information=True)


def test_an_information_request_without_an_answer_check_asks_for_one() -> None:
    case = _case()
    assert needs_repair(case, DOMAIN, asks_for_information=True) == [
        "the request asks to be told facts, but no ANSWER check grades them"
    ]
    assert needs_repair(case, DOMAIN, asks_for_information=False) == []
    repaired = asyncio.run(repair_answers(Writer([RIGHT]), case, "s000-1", DOMAIN, ["none"], None))  # type: ignore[arg-type]
    assert [entry.id for entry in repaired.checks] == ["read", "answer_1"]
    assert repaired.checks[1].written_by is None  # no provenance without export.check_provenance


@pytest.mark.parametrize(
    ("answers", "problem"),
    [
        ([], "give at least one ANSWER check"),
        ([GUESSED], "no field 'flight_dates'"),
        ([READ], "is not an ANSWER check"),
        (['ANSWER CALL cancel_reservation(reservation_id="BW0ESI").status AS enum'], "not a read tool"),
        (["ANSWER CALL get_reservation_details("], "answers[0]: check text, line 1"),
    ],
)
def test_the_answer_check_names_each_problem(answers: list[str], problem: str) -> None:
    check = AnswerRepairCheck(case=_case(GUESSED), domain="airline")
    with pytest.raises(RepairNeeded, match=re.escape(problem)):
        check.check(AnswerChecks(answers=answers))
    assert check.check(AnswerChecks(answers=[RIGHT])).answers == [RIGHT]


def test_the_request_context_round_trips_and_the_stage_is_gated() -> None:
    check = AnswerRepairCheck(case=_case(GUESSED), domain="airline")
    again = AnswerRepairCheck.model_validate(json.loads(check.model_dump_json()))
    assert again.check(AnswerChecks(answers=[RIGHT])).answers == [RIGHT]
    assert STAGE in STAGES and ROLES[STAGE] == "checks"
    assert GenerationConfig.model_fields["checks"].default_factory().repair_answer_checks is False  # type: ignore[misc]


def test_the_mutation_audit_grades_cases_whose_answer_facts_the_export_resolves_later() -> None:
    """The audit runs before the export resolves ANSWER facts: it grades a copy with them (a case whose facts
    the database does not hold loses its ANSWER checks in that copy only) instead of the env refusing the suite."""
    from mantra_env.generators.mutation_audit import audit_cases

    cases = [_case(RIGHT), _case(GUESSED).model_copy(update={"id": "generated-s000-2"})]
    kept, invalid = asyncio.run(
        audit_cases(None, cases, DOMAIN, DOMAIN.tool_specs(), {}, 16, 20_000)  # type: ignore[arg-type]
    )
    assert not invalid and [case.id for case in kept] == [case.id for case in cases]
    assert [entry.check for entry in kept[0].checks] == [entry.check for entry in cases[0].checks]  # facts: export's
    assert all(case.validation.history[-1]["stage"] == "mutation_audit" for case in kept)


def test_a_mutant_answers_from_its_own_reads() -> None:
    """A replayed mutant answers as a compliant agent would over what its calls returned: a variant that makes the
    read passes the ANSWER check, a mutant that dropped it fails it (with "done" every mutant failed)."""
    from mantra_env.case import PlannedCall, Suite, SuiteManifest
    from mantra_env.env import MantraEnv
    from mantra_env.generators.answer_gate import with_answer_facts
    from mantra_env.generators.mutation import replay
    from mantra_env.grading import grade_case
    from mantra_env.mutants import Mutant

    case = with_answer_facts(_case(RIGHT), DOMAIN)
    env = MantraEnv(Suite(manifest=SuiteManifest(name="t", domain="airline", case_count=1), cases=[case]), DOMAIN)
    read = PlannedCall(tool="get_reservation_details", arguments={"reservation_id": "BW0ESI"})
    twice = replay(env, case.id, Mutant(kind="extra_read", detail="the read twice", calls=(read, read)))
    dropped = replay(env, case.id, Mutant(kind="drop_read", detail="no read", calls=()))
    assert "May 24, 2026" in (twice.final_answer or "")
    assert grade_case(twice, case, DOMAIN.tool_specs()).passed
    verdict = grade_case(dropped, case, DOMAIN.tool_specs())
    assert not verdict.passed and "fact0" in [failure.check_id for failure in verdict.failures()]


ECHOED = "When do I fly on reservation BW0ESI? I believe it is May 24, 2026."
FLIGHT = f"ANSWER {READ}.flights[*].flight_number AS identifier"


def test_with_refuse_echoed_facts_a_fact_the_request_states_goes_back_and_may_not_come_back() -> None:
    """The customer typed the date: an agent that repeats the request would pass a check on it without a read."""
    case = _case(RIGHT).model_copy(update={"scenario": Scenario(prompt=ECHOED, internal={})})
    assert needs_repair(case, DOMAIN, asks_for_information=True) == []  # the key off: as before
    (problem,) = needs_repair(case, DOMAIN, asks_for_information=True, refuse_echoes=True)
    assert problem.startswith("check fact0: the customer's request already states 2026-05-24")
    assert not needs_repair(_case(RIGHT), DOMAIN, asks_for_information=True, refuse_echoes=True)  # not stated

    check = AnswerRepairCheck(case=case, domain="airline", refuse_echoes=True)
    with pytest.raises(RepairNeeded, match=re.escape("answers[0]: the customer's request already states")):
        check.check(AnswerChecks(answers=[RIGHT]))
    with pytest.raises(RepairNeeded, match=re.escape("answers[0]")):  # beside a fact it lacks: still an echo
        check.check(AnswerChecks(answers=[RIGHT, FLIGHT]))
    assert check.check(AnswerChecks(answers=[FLIGHT])).answers == [FLIGHT]
    writer = Writer([FLIGHT])
    repaired = asyncio.run(
        repair_answers(writer, case, "s000-1", DOMAIN, [problem], None, refuse_echoes=True)  # type: ignore[arg-type]
    )
    assert [entry.text for entry in repaired.checks if isinstance(entry.check, Answer)] == [FLIGHT]
    again = AnswerRepairCheck.model_validate(json.loads(check.model_dump_json()))
    assert again.refuse_echoes and "refuse_echoes" not in AnswerRepairCheck(case=case, domain="airline").model_dump()


STATUS = f"ANSWER {READ}.cabin AS enum"


def _declined() -> Case:
    return Case(
        id="generated-s000-2",
        domain="airline",
        scenario=Scenario(prompt="Please upgrade reservation BW0ESI to business for free.", internal={}),
        checks=[
            CaseCheck(id="read", check=READ),
            CaseCheck(id="no_change", check="NO-CALL update_reservation_flights()"),
        ],
        world_model="(model (goal true))",
    )


def test_with_answer_on_refusals_a_declined_case_is_asked_once_for_the_deciding_fact_and_may_have_none() -> None:
    case = _declined()
    assert needs_repair(case, DOMAIN, asks_for_information=False) == []  # the key off: as before
    assert needs_repair(case, DOMAIN, asks_for_information=False, answer_refusals=True) == [DECLINED]
    acting = case.model_copy(
        update={
            "checks": [
                *case.checks[:1],
                CaseCheck(id="cancel", check='CALL cancel_reservation(reservation_id="BW0ESI")'),
            ]
        }
    )
    assert needs_repair(acting, DOMAIN, asks_for_information=False, answer_refusals=True) == []  # its oracle writes

    writer = Writer([STATUS])
    repaired = asyncio.run(repair_answers(writer, case, "s000-2", DOMAIN, [DECLINED], "answer_repair"))  # type: ignore[arg-type]
    ((_, _, messages),) = writer.asked
    assert "declines" in messages[0]["content"] and "empty list" in messages[0]["content"]
    assert '"cabin": "basic_economy"' in messages[1]["content"]  # the compliant run's read, as it sees it
    assert [entry.id for entry in repaired.checks] == ["read", "no_change", "answer_1"]
    kept, refused = answer_gate([repaired], DOMAIN, set())
    assert not refused and kept[0].checks[2].check.expected == ("basic economy",)  # type: ignore[union-attr]
    assert not needs_repair(repaired, DOMAIN, asks_for_information=False, answer_refusals=True)

    none = asyncio.run(repair_answers(Writer([]), case, "s000-2", DOMAIN, [DECLINED], None))  # type: ignore[arg-type]
    assert none.checks == case.checks  # the manual forbids it whatever the records say: nothing to state
    with pytest.raises(RepairNeeded, match="at least one ANSWER check"):  # an information request needs one
        AnswerRepairCheck(case=case, domain="airline").check(AnswerChecks(answers=[]))


@pytest.mark.parametrize("key", ["refuse_echoed_facts", "answer_on_refusals"])
def test_the_answer_repair_keys_need_the_stage(key: str) -> None:
    with pytest.raises(ValueError, match=f"checks.{key} works through the answer_repair stage"):
        CheckSettings.model_validate({key: True})
    on = {"answer_checks": True, "repair_answer_checks": True, key: True}
    assert getattr(CheckSettings.model_validate(on), key) is True


def test_a_declined_case_names_no_internal_id_as_its_deciding_fact() -> None:
    """Retail's first v6 answers named credit_card_1386897 where a compliant agent says "your Visa"."""
    check = AnswerRepairCheck(case=_declined(), domain="airline", may_be_empty=True)
    paid = f"ANSWER {READ}.payment_history[0].payment_id AS identifier"
    with pytest.raises(
        RepairNeeded, match=re.escape("answers[0]: payment_history[0].payment_id is a record's internal id")
    ):
        check.check(AnswerChecks(answers=[paid]))
    assert check.check(AnswerChecks(answers=[STATUS])).answers == [STATUS]
    flight = f"ANSWER {READ}.flights[0].flight_number AS identifier"  # an identifier the customer knows
    assert check.check(AnswerChecks(answers=[flight])).answers == [flight]
    info = AnswerRepairCheck(case=_case(), domain="airline")  # an information request may ask for an id
    assert info.check(AnswerChecks(answers=[paid])).answers == [paid]
