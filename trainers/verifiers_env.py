"""A MANTRA suite as a verifiers environment (``verifiers`` 0.1's ``MultiTurnEnv``, native tool calling).

``load_environment(suite=..., reward=...)`` is the entry point verifiers' trainers and ``vf-eval`` look for.
Each dataset row is one case: the manual as the system message, the customer's request as the user message,
``info["case"]`` naming the case. The domain's tools are the env's ``tool_defs``, so the policy calls them
natively; every call is one :class:`MantraEnv` step, whose observation comes back as the tool message. The episode
ends at the first assistant message without a tool call (the final answer) or when the env ends it (step limit).
The rubric is the grader: the reward is :class:`MantraEnv`'s under ``reward`` (binary, fraction, shaped), the same
number the benchmark scores, and the metric ``passed`` is the verdict. With ``split=True`` the env trains on the
suite's train cases and evaluates on its test cases (:mod:`mantra_env.splits`); otherwise both are every case.
"""

from __future__ import annotations

import json
from typing import Any

import verifiers as vf
from datasets import Dataset  # type: ignore[import-untyped]

from mantra_env.env import MantraEnv
from mantra_env.registration import make_env
from mantra_env.rewards import REWARD_MODES
from mantra_env.splits import suite_split


class MantraVerifiersEnv(vf.MultiTurnEnv):  # type: ignore[misc]  # verifiers ships no type information
    """The cases of ``suite``; one :class:`MantraEnv` per rollout, kept out of the (serialisable) state."""

    def __init__(
        self, suite: str, reward: str = "binary", max_steps: int = 30, split: bool = False, **kwargs: Any
    ) -> None:
        if reward not in REWARD_MODES:
            raise ValueError(f"unknown reward {reward!r}: use one of {', '.join(REWARD_MODES)}")
        self.suite, self.reward_mode, self.max_steps = suite, reward, max_steps
        self._envs: dict[str, MantraEnv] = {}
        probe = make_env(suite)
        rows: list[dict[str, Any]] = []
        tools: list[dict[str, Any]] = []
        for case in probe.suite.cases:
            opening, _ = probe.reset(options={"case": case.id})
            data = json.loads(opening)
            tools = data["tools"]
            messages = [{"role": "system", "content": data["system"]}, {"role": "user", "content": data["prompt"]}]
            rows.append({"prompt": messages, "answer": "", "info": {"case": case.id}})
        probe.close()
        tool_defs = [
            vf.Tool(name=f["name"], description=f.get("description", ""), parameters=f.get("parameters", {}))
            for f in (tool.get("function", tool) for tool in tools)
        ]
        rubric = vf.Rubric(funcs=[self.mantra_reward], weights=[1.0])
        rubric.add_metric(self.passed)
        dataset = eval_dataset = Dataset.from_list(rows)
        if split:
            test = set(suite_split(probe.suite).test)
            dataset = Dataset.from_list([row for row in rows if row["info"]["case"] not in test])
            eval_dataset = Dataset.from_list([row for row in rows if row["info"]["case"] in test])
        super().__init__(
            dataset=dataset,
            eval_dataset=eval_dataset,
            tool_defs=tool_defs,
            rubric=rubric,
            max_turns=max_steps + 1,
            **kwargs,
        )

    # --- episode --------------------------------------------------------------------------------------------

    async def setup_state(self, state: vf.State) -> None:
        case = state["info"]["case"]
        env = make_env(self.suite, case=case, reward_mode=self.reward_mode, max_steps=self.max_steps)
        env.reset(options={"case": case})
        self._envs[state["trajectory_id"]] = env
        state["mantra_reward"] = 0.0
        state["mantra_passed"] = False

    def _step(self, state: vf.State, action: dict[str, Any] | str) -> tuple[str, bool]:
        """One env step; at the end, the reward and verdict go into the state."""
        env = self._envs[state["trajectory_id"]]
        observation, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            state["mantra_reward"] = float(reward)
            state["mantra_passed"] = bool(info["verdict"].passed)
            state["mantra_verdict"] = info["verdict_json"]
        return observation, terminated or truncated

    async def env_response(self, messages: vf.Messages, state: vf.State, **kwargs: Any) -> vf.Messages:
        replies: list[vf.ToolMessage] = []
        for call in messages[-1].tool_calls or []:
            try:
                action: dict[str, Any] | str = {"tool": call.name, "arguments": json.loads(call.arguments)}
            except json.JSONDecodeError:
                action = call.arguments  # the env answers with the structured error unparseable_action
            observation, done = self._step(state, action)
            replies.append(vf.ToolMessage(role="tool", content=observation, tool_call_id=call.id))
            if done:  # the step limit: no more model turns
                state["final_env_response"] = replies
                break
        return replies

    @vf.stop  # type: ignore[untyped-decorator]
    async def final_answer_given(self, state: vf.State) -> bool:
        """An assistant message without tool calls is the final answer: it ends the episode and is graded."""
        if not state["trajectory"] or state.get("mantra_verdict") is not None:
            return False
        last = state["trajectory"][-1]["completion"][-1]
        if last.role != "assistant" or getattr(last, "tool_calls", None):
            return False
        content = last.content if isinstance(last.content, str) else json.dumps(last.content, default=str)
        self._step(state, {"final_answer": content or ""})
        return True

    @vf.cleanup  # type: ignore[untyped-decorator]
    async def close_env(self, state: vf.State) -> None:
        env = self._envs.pop(state["trajectory_id"], None)
        if env is not None:
            env.close()

    # --- rubric ---------------------------------------------------------------------------------------------

    async def mantra_reward(self, state: vf.State, **kwargs: Any) -> float:
        """The env's reward: the grader's verdict under the reward mode (0 for an episode cut short unjudged)."""
        return float(state.get("mantra_reward", 0.0))

    async def passed(self, state: vf.State, **kwargs: Any) -> float:
        return 1.0 if state.get("mantra_passed") else 0.0


def load_environment(
    suite: str = "operations", reward: str = "binary", max_steps: int = 30, split: bool = False
) -> MantraVerifiersEnv:
    """The verifiers entry point: the cases of ``suite`` (a suite name such as ``retail``, or a path); ``split``
    trains on the suite's train cases and evaluates on its test cases."""
    return MantraVerifiersEnv(suite, reward=reward, max_steps=max_steps, split=split)
