"""The oracle's plans on every shipped suite: the canonical compliant witness reads before it writes."""

from __future__ import annotations

import gymnasium as gym
import pytest

import mantra_env  # noqa: F401 - registers the shipped suites
from agents.scripted import oracle_plan
from mantra_env import registration
from mantra_env.env import MantraEnv

SUITES = registration.suite_env_ids()  # not suite-less domains


@pytest.mark.parametrize("env_id", SUITES)
def test_the_oracle_never_writes_before_its_first_read(env_id: str) -> None:
    env = gym.make(env_id).unwrapped
    assert isinstance(env, MantraEnv)
    specs = env.domain.tool_specs()
    kinds = {spec.name: spec.kind for spec in specs}
    premature = []
    for case in env.suite.cases:
        tools = [action["tool"] for action in oracle_plan(case, specs)]
        reads = [i for i, tool in enumerate(tools) if kinds[tool] == "read"]
        writes = [i for i, tool in enumerate(tools) if kinds[tool] == "write"]
        if writes and (not reads or writes[0] < reads[0]):
            premature.append((case.id, tools))
    assert premature == []
