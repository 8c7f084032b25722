"""What the runner needs of an agent: drive one episode of a :class:`~mantra_env.env.MantraEnv` and report
what it cost. The environment holds the trace and grades it; the agent only acts.

An agent that cannot finish because its *infrastructure* failed (the provider timed out, rate-limited,
refused the connection, or returned output that is not a tool call or an answer) raises
:class:`InfrastructureError`; the runner retries and, if the failure persists, records the episode as an
error that no metric counts as an agent failure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from agents.scripted import ScriptedPolicy, action_text
from mantra_env.env import MantraEnv
from mantra_env.errors import MantraError
from mantra_env.store.records import Usage
from mantra_env.tools import ToolSpec


class InfrastructureError(MantraError, RuntimeError):
    """The agent's model or transport failed; ``kind`` is timeout, rate_limit, connection or bad_output."""

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        super().__init__(f"{kind}: {message}")


@dataclass
class AgentReport:
    """What an agent tells the runner after an episode (the trace and verdict live in the env)."""

    usage: Usage = field(default_factory=Usage)
    messages: list[Any] = field(default_factory=list)
    step_latencies_s: list[float] = field(default_factory=list)
    final_answer: str = ""


class EpisodeAgent(Protocol):
    """Drives one episode: the env is reset to ``case_id`` by the agent, which acts until it answers."""

    name: str

    async def run(self, env: MantraEnv, case_id: str, seed: int) -> AgentReport: ...


class ScriptedAgent:
    """A :class:`~agents.scripted.ScriptedPolicy` behind the agent interface (no model, no I/O)."""

    def __init__(self, policy: ScriptedPolicy) -> None:
        self.policy = policy
        self.name = f"scripted:{policy.name}"

    async def run(self, env: MantraEnv, case_id: str, seed: int) -> AgentReport:
        _drive(env, self.policy, case_id, seed)
        return AgentReport()


def _drive(env: MantraEnv, policy: ScriptedPolicy, case_id: str, seed: int) -> None:
    observation, _ = env.reset(seed=seed, options={"case": case_id})
    tools = [ToolSpec.model_validate(spec) for spec in json.loads(observation)["tools"]]
    assert env.case is not None
    policy.start(env.case, tools, env.np_random)
    done = False
    while not done:
        observation, _, terminated, truncated, _ = env.step(action_text(policy.act(observation)))
        done = terminated or truncated


def play(env: MantraEnv, policy: ScriptedPolicy, case_id: str, seed: int = 0) -> dict[str, Any]:
    """One episode of ``policy`` on ``case_id``, synchronously; returns its ``trace``, ``verdict`` and
    ``reward``."""
    _drive(env, policy, case_id, seed)
    return {"trace": env.last_trace, "verdict": env.last_verdict, "reward": env.last_reward}
