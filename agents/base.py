"""Agents the runner can drive: the contract itself (:class:`AgentReport`, :class:`EpisodeAgent`,
:class:`InfrastructureError`) lives in the core (:mod:`mantra_env.agent`) and is re-exported here; this module adds
:class:`ScriptedAgent` and :func:`play` (a scripted policy, no model).
"""

from __future__ import annotations

import json
from typing import Any

from mantra_env.agent import AgentReport, EpisodeAgent, InfrastructureError
from mantra_env.agents.scripted import ScriptedPolicy, action_text
from mantra_env.env import MantraEnv
from mantra_env.stepper import step
from mantra_env.tools import ToolSpec

__all__ = ["AgentReport", "EpisodeAgent", "InfrastructureError", "ScriptedAgent", "play"]


class ScriptedAgent:
    """A :class:`~mantra_env.agents.scripted.ScriptedPolicy` behind the agent interface (no model, no I/O)."""

    def __init__(self, policy: ScriptedPolicy) -> None:
        self.policy = policy
        self.name = f"scripted:{policy.name}"

    async def run(self, env: MantraEnv, case_id: str, seed: int) -> AgentReport:
        # Each step through the runner's worker thread (mantra_env.stepper): a domain tool that blocks or raises
        # ends this episode only.
        observation = _start(env, self.policy, case_id, seed)
        done = False
        while not done:
            observation, _, terminated, truncated, _ = await step(env, action_text(self.policy.act(observation)))
            done = terminated or truncated
        return AgentReport()


def _start(env: MantraEnv, policy: ScriptedPolicy, case_id: str, seed: int) -> str:
    observation, _ = env.reset(seed=seed, options={"case": case_id})
    tools = [ToolSpec.model_validate(spec) for spec in json.loads(observation)["tools"]]
    assert env.case is not None
    policy.start(env.case, tools, env.np_random)
    return observation


def _drive(env: MantraEnv, policy: ScriptedPolicy, case_id: str, seed: int) -> None:
    observation = _start(env, policy, case_id, seed)
    done = False
    while not done:
        observation, _, terminated, truncated, _ = env.step(action_text(policy.act(observation)))
        done = terminated or truncated


def play(env: MantraEnv, policy: ScriptedPolicy, case_id: str, seed: int = 0) -> dict[str, Any]:
    """One episode of ``policy`` on ``case_id``, synchronously; returns its ``trace``, ``verdict`` and
    ``reward``."""
    _drive(env, policy, case_id, seed)
    return {"trace": env.last_trace, "verdict": env.last_verdict, "reward": env.last_reward}
