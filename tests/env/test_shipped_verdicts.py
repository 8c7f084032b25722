"""Defaults and free-text matching change no verdict the scripted agents get on the shipped suites: for every
case of every registered suite, the checks graded with the domain's tool schemas (as the env grades) and without
them (the checks alone, as every stored run was graded) give the same outcome and evidence."""

from __future__ import annotations

import gymnasium as gym
import pytest

import mantra_env  # noqa: F401 - registers the shipped suites
from mantra_env import registration
from mantra_env.agents.base import play
from mantra_env.agents.scripted import NoopPolicy, OraclePolicy, RandomPolicy, ScriptedPolicy, WriteFirstPolicy
from mantra_env.env import MantraEnv
from mantra_env.grading import grade

AGENTS: list[type[ScriptedPolicy]] = [OraclePolicy, NoopPolicy, RandomPolicy, WriteFirstPolicy]


@pytest.mark.parametrize("env_id", registration.suite_env_ids())
def test_no_scripted_verdict_changes_on_a_shipped_suite(env_id: str) -> None:
    env = gym.make(env_id).unwrapped
    assert isinstance(env, MantraEnv)
    tools = env.domain.tool_specs()
    changed = []
    for case in env.suite.cases:
        for agent in AGENTS:
            outcome = play(env, agent(), case.id, seed=7)
            trace = outcome["trace"]
            with_schemas = grade(trace, case.checks, tools=tools)
            assert outcome["verdict"].checks_passed == with_schemas.passed  # the env grades with the schemas
            if with_schemas.checks != grade(trace, case.checks).checks:
                changed.append(f"{case.id} {agent.name}")
    assert changed == []
