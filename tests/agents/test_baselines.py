"""The floor baselines (issue 31, item 3): decline is the oracle on a refusal case and fails every case whose
oracle writes; read-all calls only read tools, with the identifiers the scenario states."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import mantra_env  # noqa: F401 - registers the shipped suites
from mantra_env import registration
from mantra_env.agents.base import play
from mantra_env.agents.scripted import (
    CLAIM_DONE,
    REFUSAL,
    SCRIPTED,
    ClaimDonePolicy,
    DeclinePolicy,
    OraclePolicy,
    ReadAllPolicy,
    stated_reads,
)
from mantra_env.case import Case, CaseCheck, PlannedCall, Scenario
from mantra_env.checks import Answer
from mantra_env.env import MantraEnv
from mantra_env.generators.screening import trivial_policies
from mantra_env.graders.refusals import is_refusal
from mantra_env.tools import ToolSpec

MALFORMED = {"invalid_arguments", "unparseable_action", "unknown_tool"}  # the env refuses the call
GENERATED = [env_id for env_id in registration.suite_env_ids() if env_id != "mantra/operations-v2"]


def make(env_id: str) -> MantraEnv:
    env = gym.make(env_id).unwrapped
    assert isinstance(env, MantraEnv)
    return env


def calls(outcome: dict[str, object]) -> list[tuple[str, object]]:
    trace = outcome["trace"]
    return [(call.tool, call.args) for call in trace.calls]  # type: ignore[attr-defined]


@pytest.mark.parametrize("env_id", GENERATED)
def test_decline_is_the_oracle_on_refusal_cases_and_fails_every_action_case(env_id: str) -> None:
    env = make(env_id)
    kinds = env.domain.episode_constants.kinds
    differs, passes_action = [], []
    for case in env.suite.cases:
        refusal = is_refusal(case, kinds)
        assert refusal is not None, f"{case.id}: a generated case stores its oracle plan"
        declined = play(env, DeclinePolicy(), case.id)
        if refusal:
            oracle = play(env, OraclePolicy(), case.id)
            if calls(declined) != calls(oracle) or not declined["verdict"].passed:
                differs.append(case.id)
        elif declined["verdict"].passed:
            passes_action.append(case.id)
        assert all(kinds[tool] == "read" for tool, _ in calls(declined)), case.id
        if not any(isinstance(entry.check, Answer) for entry in case.checks):  # else it states the facts asked for
            assert declined["trace"].final_answer == REFUSAL["final_answer"]
    assert differs == [] and passes_action == []


@pytest.mark.parametrize("env_id", GENERATED)
def test_claim_done_passes_only_refusals_whose_answer_nothing_grades(env_id: str) -> None:
    """The false "done" makes decline's reads, so it fails what decline fails; it passes a refusal only where no
    ANSWER check grades what the agent says (retail v6 asked for one on every refusal whose records decide it)."""
    env = make(env_id)
    passed = []
    for case in env.suite.cases:
        claimed = play(env, ClaimDonePolicy(), case.id)
        assert claimed["trace"].final_answer == CLAIM_DONE["final_answer"]
        assert calls(claimed) == calls(play(env, DeclinePolicy(), case.id)), case.id
        if claimed["verdict"].passed:
            assert not any(isinstance(entry.check, Answer) for entry in case.checks), case.id
            passed.append(case.id)
    if env_id.startswith("mantra/retail-"):
        assert len(passed) == 15  # of 90 refusals (v5: 42)


def test_decline_on_a_case_without_a_stored_plan_makes_the_solved_plans_reads() -> None:
    env = make("mantra/operations-v2")
    case = env.suite.case("fig1-case1")
    assert case.oracle_plan is None
    kinds = env.domain.episode_constants.kinds
    oracle = calls(play(env, OraclePolicy(), case.id))
    declined = play(env, DeclinePolicy(), case.id)
    assert calls(declined) == [call for call in oracle if kinds[call[0]] == "read"] != []
    assert any(kinds[tool] == "write" for tool, _ in oracle) and not declined["verdict"].passed


@pytest.mark.parametrize("env_id", registration.suite_env_ids())
def test_read_all_calls_read_tools_with_the_stated_identifiers_only(env_id: str) -> None:
    env = make(env_id)
    specs = {spec.name: spec for spec in env.domain.tool_specs()}
    bad, called, refused = [], 0, 0
    for case in env.suite.cases:
        outcome = play(env, ReadAllPolicy(), case.id)
        stated = case.scenario.external
        for call in outcome["trace"].calls:
            called += 1
            spec = specs[call.tool]
            wrong = {name: value for name, value in call.args.items() if stated.get(name, object()) != value}
            malformed = call.error is not None and call.error.code in MALFORMED
            if spec.kind != "read" or wrong or not set(spec.required) <= set(call.args) or malformed:
                bad.append((case.id, call.tool, call.args, call.error))
            refused += call.error is not None
    assert bad == [] and called > 0
    assert refused < called / 10  # the domain may refuse a stated read (a closed line has no handset), rarely


def _spec(name: str, kind: str, properties: dict[str, object], required: list[str]) -> ToolSpec:
    return ToolSpec.model_validate(
        {
            "name": name,
            "kind": kind,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        }
    )


def test_stated_reads_binds_every_matching_parameter_and_skips_what_cannot_be_called() -> None:
    string, integer = {"type": "string"}, {"type": "integer"}
    tools = [
        _spec("get_order", "read", {"order_id": string, "verbose": {"type": "boolean"}}, ["order_id"]),
        _spec("cancel_order", "write", {"order_id": string}, ["order_id"]),  # a write: never
        _spec("find_user", "read", {"first_name": string, "zip": string}, ["first_name", "zip"]),  # needs a name
        _spec("list_airports", "read", {}, []),  # states nothing
        _spec("get_line", "read", {"line_id": integer}, ["line_id"]),  # the stated value is not an integer
        _spec("get_user", "read", {"user_id": string, "zip": string}, []),  # both bound, in schema order
    ]
    case = Case(
        id="c",
        domain="d",
        scenario=Scenario(
            prompt="p", external={"zip": "19166", "order_id": "#W1", "line_id": "L5", "user_id": "u1"}, internal={}
        ),
        checks=[CaseCheck(id="k", check="CALL get_order()")],
    )
    assert stated_reads(case, tools) == [
        {"tool": "get_order", "arguments": {"order_id": "#W1"}},
        {"tool": "get_user", "arguments": {"user_id": "u1", "zip": "19166"}},
    ]
    policy = ReadAllPolicy()
    policy.start(case, tools, np.random.default_rng(0))
    assert [policy.act("") for _ in range(3)][2] == {"final_answer": "done"}


def test_decline_keeps_the_stored_plans_reads_in_order() -> None:
    tools = [_spec("look", "read", {"x": {"type": "string"}}, []), _spec("act", "write", {}, [])]
    plan = [PlannedCall(tool="look", arguments={"x": "1"}), PlannedCall(tool="act"), PlannedCall(tool="look")]
    case = Case(
        id="c",
        domain="d",
        scenario=Scenario(prompt="p"),
        checks=[CaseCheck(id="k", check="CALL act()")],
        oracle_plan=plan,
    )
    policy = DeclinePolicy()
    policy.start(case, tools, np.random.default_rng(0))
    assert [policy.act("") for _ in range(3)] == [
        {"tool": "look", "arguments": {"x": "1"}},
        {"tool": "look", "arguments": {}},
        REFUSAL,
    ]


def test_both_are_scripted_agents_and_neither_screens_an_export() -> None:
    assert SCRIPTED["decline"] is DeclinePolicy and SCRIPTED["read-all"] is ReadAllPolicy
    assert SCRIPTED["claim-done"] is ClaimDonePolicy
    screened = {policy.name for policy, _ in trivial_policies()}
    assert screened.isdisjoint({"decline", "read-all"})
