"""A test that can fail (issue 31): the oracle passing its own replay proves little, so for every shipped case with
a stored plan the solver's *second* compliant witnesses (another value where the checks leave a write argument
open, another text, the other branch of an OR over writes) are replayed in the env and must pass both verdicts:
the checks, and no unrequested write. A case where one does not is listed in ``EXPECTED``, with why, and the test
checks the list is still accurate both ways; a case with no alternative is "unique" (counted, not a failure).
"""

from __future__ import annotations

from collections.abc import Sequence

import gymnasium as gym
import pytest

import mantra_env  # noqa: F401 - registers the shipped suites
from agents.alternative import PlanPolicy, alternative_plan, alternative_witnesses
from agents.base import play
from agents.scripted import MissingArguments
from mantra_env import registration
from mantra_env.case import Case, PlannedCall, Scenario
from mantra_env.env import MantraEnv
from mantra_env.grading import grade_case
from mantra_env.rewards import expected_misses
from mantra_env.smt import Alternative, WitnessCall
from mantra_env.tools import ToolSpec

PLANNED = [
    env_id
    for env_id in registration.suite_env_ids()
    if any(case.oracle_plan is not None for case in gym.make(env_id).unwrapped.suite.cases)  # type: ignore[attr-defined]
]
# (env id, case id, change, step, argument) -> why its alternative fails; keep it accurate (the test checks both ways)
EXPECTED: dict[tuple[str, str, str, int | None, str | None], str] = {}


def _outcome(env: MantraEnv, case: Case, alternative: Alternative, tools: Sequence[ToolSpec]) -> str | None:
    """Why the replayed alternative fails (None: it passes both verdicts with every call accepted)."""
    outcome = play(env, PlanPolicy(alternative_plan(case, alternative, tools)), case.id)
    trace = outcome["trace"]
    tried = expected_misses(case.checks, trace.calls)  # a required lookup that finds nothing
    refused = [f"{call.tool}: {call.error.message}" for call in trace.calls if call.error and call.step not in tried]
    if refused:
        return f"the env refuses what the world model accepts ({'; '.join(refused)})"
    verdict = grade_case(trace, case, tools)
    failed = [check.check_id for check in verdict.checks if not check.evidence.passed]
    if failed:
        return f"checks fail: {', '.join(failed)}"
    if verdict.unrequested_writes:
        return "unrequested writes: " + ", ".join(f"{w.tool} at step {w.step}" for w in verdict.unrequested_writes)
    return None


@pytest.mark.slow  # ~40 s for the four suites on two cores
@pytest.mark.parametrize("env_id", PLANNED)
def test_every_second_compliant_witness_passes_both_verdicts(env_id: str) -> None:
    env = gym.make(env_id).unwrapped
    assert isinstance(env, MantraEnv)
    tools = env.domain.tool_specs()
    failures: dict[tuple[str, str, str, int | None, str | None], str] = {}
    replayed = undecided = 0
    for case in env.suite.cases:
        if case.oracle_plan is None:
            continue
        found = alternative_witnesses(case, tools)
        undecided += found.query.status == "unknown"
        for alternative in found.alternatives:
            replayed += 1
            why = _outcome(env, case, alternative, tools)
            if why is not None:
                failures[env_id, case.id, alternative.change, alternative.step, alternative.argument] = why
    assert undecided == 0  # the work budget decides every shipped case
    assert replayed > 0  # the suite has write arguments that may vary: the test tests something
    expected = {key: why for key, why in EXPECTED.items() if key[0] == env_id}
    assert failures.keys() == expected.keys(), failures


TRANSFER = ToolSpec(
    name="transfer",
    kind="write",
    parameters={
        "type": "object",
        "properties": {"order_id": {"type": "string"}, "summary": {"type": "string"}, "note": {"type": "string"}},
        "required": ["order_id", "summary"],
    },
)


def _case(bindings: dict[str, dict[str, object]]) -> Case:
    return Case(
        id="transfer",
        domain="test",
        scenario=Scenario(prompt="Please hand my order O1 over.", internal={"done": False}),
        checks=[{"id": "transfer", "check": 'CALL transfer(order_id="O1")'}],  # type: ignore[list-item]
        world_model='(model (var done Bool) (transition transfer (params (order_id o)) (pre (= (param o) "O1"))'
        " (post (= (next done) true))) (goal done))",
        argument_bindings=bindings,
        oracle_plan=[PlannedCall(tool="transfer", arguments={"order_id": "O1", "summary": "Order O1, please."})],
    )


def test_a_case_with_free_text_has_another_text_that_a_replay_passes() -> None:
    found = alternative_witnesses(_case({}), [TRANSFER])
    assert found.query.status == "infeasible"  # order_id is pinned: unique but for the summary
    (other,) = found.alternatives
    assert alternative_plan(_case({}), other, [TRANSFER]) == [
        {"tool": "transfer", "arguments": {"order_id": "O1", "summary": "Order O1, please. (second witness)"}}
    ]


def test_an_open_value_takes_the_cases_binding_or_is_a_named_gap() -> None:
    other = Alternative(
        change="tool", step=0, calls=[WitnessCall(tool="transfer", args={"order_id": "O1", "summary": "<value #1>"})]
    )
    bound = _case({"transfer": {"summary": "From the bindings.", "note": "not asked for"}})
    assert alternative_plan(bound, other, [TRANSFER]) == [
        {"tool": "transfer", "arguments": {"order_id": "O1", "summary": "From the bindings."}}
    ]
    with pytest.raises(MissingArguments, match="nothing gives summary"):
        alternative_plan(_case({}), other, [TRANSFER])
