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
from mantra_env import registration
from mantra_env.agents.alternative import PlanPolicy, alternative_plan, alternative_witnesses
from mantra_env.agents.base import play
from mantra_env.agents.scripted import MissingArguments
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
# The second witnesses that fail, by (suite, case id, plan step, argument), with the verdict they fail ("refused":
# the env refuses a call the world model accepts; "checks"; "unrequested": an unrequested write); the test checks
# the list both ways. None is the rule being too strict: each is a world model and checks that admit what the case
# should not. The operations world models never read the ticket a purchase order or a delivery serves
# (``request_id``, optional in both tools; no check pins it), and the env takes any ticket there, so a purchase
# order for another ticket passes every check; the unrequested-write rule rightly fails it (a record the plan
# never touches).
OPEN_TICKET = [
    *[("s001-3", 2), ("s001-3", 4), ("s003-2", 4), ("s003-3", 3), ("s003-3", 4), ("s006-1", 2), ("s006-2", 1)],
    *[("s007-1", 2), ("s007-1", 3), ("s007-3", 3), ("s007-3", 4), ("s010-1", 3), ("s010-1", 4), ("s010-2", 2)],
    *[("s010-2", 3), ("s010-3", 4), ("s010-4", 4), ("s012-3", 2), ("s012-3", 3), ("s012-4", 4)],
]
EXPECTED: dict[tuple[str, str, int | None, str | None], str] = {
    ("operations/generated", f"generated-{case}", step, "request_id"): "unrequested" for case, step in OPEN_TICKET
}


def _outcome(env: MantraEnv, case: Case, alternative: Alternative, tools: Sequence[ToolSpec]) -> tuple[str, str] | None:
    """The verdict the replayed alternative fails and why (None: it passes both, every call accepted)."""
    outcome = play(env, PlanPolicy(alternative_plan(case, alternative, tools)), case.id)
    trace = outcome["trace"]
    tried = expected_misses(case.checks, trace.calls)  # a required lookup that finds nothing
    refused = [f"{call.tool}: {call.error.message}" for call in trace.calls if call.error and call.step not in tried]
    if refused:
        return "refused", "; ".join(refused)
    verdict = grade_case(trace, case, tools)
    failed = [check.check_id for check in verdict.checks if not check.evidence.passed]
    if failed:
        return "checks", ", ".join(failed)
    if verdict.unrequested_writes:
        return "unrequested", ", ".join(f"{w.tool} at step {w.step}" for w in verdict.unrequested_writes)
    return None


@pytest.mark.slow  # ~40 s for the four suites on two cores
@pytest.mark.parametrize("env_id", PLANNED)
def test_every_second_compliant_witness_passes_both_verdicts(env_id: str) -> None:
    env = gym.make(env_id).unwrapped
    assert isinstance(env, MantraEnv)
    tools = env.domain.tool_specs()
    suite = env_id.rsplit("-v", 1)[0]  # the list outlives version bumps
    failures: dict[tuple[str, str, int | None, str | None], tuple[str, str]] = {}
    replayed = undecided = 0
    for case in env.suite.cases:
        if case.oracle_plan is None:
            continue
        found = alternative_witnesses(case, tools)
        undecided += found.query.status == "unknown"
        for alternative in found.alternatives:
            replayed += 1
            failed = _outcome(env, case, alternative, tools)
            if failed is not None:
                failures[suite, case.id, alternative.step, alternative.argument] = failed
    assert undecided == 0  # the work budget decides every shipped case
    assert replayed > 0  # the suite has write arguments that may vary: the test tests something
    expected = {key: why for key, why in EXPECTED.items() if key[0] == suite}
    assert {key: verdict for key, (verdict, _) in failures.items()} == expected, failures


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
