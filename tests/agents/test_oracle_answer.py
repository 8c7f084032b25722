"""The oracle's final answer (issue 33 item 3): it states the facts its reads returned, so it passes the case's
ANSWER checks; without facts to state it summarises its writes or refuses."""

from __future__ import annotations

import pytest

from mantra_env.agents.base import play
from mantra_env.agents.scripted import DeclinePolicy, OraclePolicy
from mantra_env.answers import REFUSAL_TEXT, final_answer
from mantra_env.case import Case, CaseCheck, Scenario, Suite, SuiteManifest
from mantra_env.checks import evaluate, parse_check
from mantra_env.domains import load_domain
from mantra_env.env import MantraEnv
from mantra_env.errors import DomainError
from mantra_env.trace import ToolCall, Trace

DOMAIN = load_domain("airline")
READ = 'CALL get_reservation_details(reservation_id="BW0ESI")'
ANSWERS = [
    f'ANSWER {READ}.flights[*].date AS date = ["2026-05-24"]',
    f"ANSWER {READ}.flights[0].price AS money = 196",
    f'ANSWER {READ}.flights[0].flight_number AS identifier = "MA716"',
    f'ANSWER {READ}.cabin AS enum = "basic_economy"',
    f'ANSWER {READ}.created_at AS time = "2026-04-07T06:45:00"',
]


def _env(answers: list[str]) -> MantraEnv:
    case = Case(
        id="generated-s000-1",
        domain="airline",
        scenario=Scenario(prompt="When is my flight on reservation BW0ESI, and what did I pay?", internal={}),
        checks=[CaseCheck(id="read", check=READ)]
        + [CaseCheck(id=f"fact{k}", check=text) for k, text in enumerate(answers)],
        world_model="(model (goal true))",
    )
    manifest = SuiteManifest(name="generated", domain="airline", version=0, case_count=1)
    return MantraEnv(Suite(manifest=manifest, cases=[case]), DOMAIN)


def test_the_oracle_states_the_facts_its_reads_returned_and_passes_its_answer_checks() -> None:
    outcome = play(_env(ANSWERS), OraclePolicy(), "generated-s000-1")
    verdict, answer = outcome["verdict"], outcome["trace"].final_answer
    assert verdict is not None and verdict.passed, [c.evidence.explanation for c in verdict.checks]
    assert "May 24, 2026" in answer and "$196.00" in answer and "MA716" in answer and "6:45 am" in answer


def test_decline_answers_an_information_request_as_the_oracle_does() -> None:
    """A plan without a write counts in the refusal share, which decline's Pass@1 must equal: on an information
    request it states the facts its reads returned (it refuses only where there are none)."""
    env = _env(ANSWERS)
    declined, oracle = play(env, DeclinePolicy(), "generated-s000-1"), play(env, OraclePolicy(), "generated-s000-1")
    assert declined["verdict"] is not None and declined["verdict"].passed
    assert declined["trace"].final_answer == oracle["trace"].final_answer != REFUSAL_TEXT


def test_a_stored_fact_the_database_disagrees_with_is_refused_when_the_suite_is_loaded() -> None:
    with pytest.raises(DomainError, match=r"check 'fact0': expects \['197.00'\] at flights\[0\].price.*\['196.00'\]"):
        _env([f"ANSWER {READ}.flights[0].price AS money = 197"])
    with pytest.raises(DomainError, match="without its facts"):
        _env([f"ANSWER {READ}.flights[0].price AS money"])
    with pytest.raises(DomainError, match="no field 'gate'"):
        _env([f'ANSWER {READ}.flights[0].gate AS time = "08:15"'])
    with pytest.raises(DomainError, match="takes no argument 'booking'"):
        _env(['ANSWER CALL get_reservation_details(booking="BW0ESI").cabin AS enum = "x"'])


def test_a_fact_its_reads_do_not_return_fails_the_oracle_replay() -> None:
    """The oracle states what its reads returned, not the stored facts: a check whose read the plan never makes
    (here: another reservation, read with more than its pins would need) is not stated, and fails."""
    calls = [ToolCall(step=0, tool="get_order", args={"id": "W1"}, result={"total": 5}, kind="read")]
    other = parse_check('ANSWER get_order(id="W2").total AS money = 5')
    answer = final_answer([other], calls)
    assert answer == REFUSAL_TEXT
    assert not evaluate(other, Trace(calls=tuple(calls), final_answer=answer).index()).passed


def test_without_answer_checks_the_answer_summarises_writes_or_refuses() -> None:
    read = ToolCall(step=0, tool="get_order", args={"id": "W1"}, result={"total": 5}, kind="read")
    write = ToolCall(step=1, tool="cancel_order", args={"id": "W1"}, result={}, kind="write")
    refused = ToolCall(step=2, tool="refund", args={}, error={"code": "x", "message": "no"}, kind="write")
    assert final_answer([], [read]) == REFUSAL_TEXT
    assert final_answer([], [read, write, refused]) == 'Done: cancel_order({"id": "W1"}).'
    fact = parse_check('ANSWER get_order(id="W1").total AS money = 5')
    assert final_answer([fact], [read, write]) == (
        'Here is what you asked for: total: $5.00. Done: cancel_order({"id": "W1"}).'
    )
    assert final_answer([fact], []) == REFUSAL_TEXT  # no read returned the fact: nothing to state
