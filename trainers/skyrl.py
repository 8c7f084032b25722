"""A MANTRA case as a SkyRL-gym text environment (``skyrl_gym.envs.base_text_env.BaseTextEnv``).

SkyRL's trainer builds one env per dataset row with ``skyrl_gym.make("mantra", env_config=..., extras=row)``,
sends ``init(row["prompt"])``'s messages to the policy and each reply to ``step``; :func:`dataset_rows` writes
the rows of a suite (``prompt``, ``env_class``, ``suite``, ``case``). Rewards are :class:`MantraEnv`'s (the grader's
verdict under ``reward_mode``; ``dense`` pays per step), so a trainer optimises exactly what the benchmark scores.
"""

from __future__ import annotations

from typing import Any

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput, ConversationType
from skyrl_gym.envs.registration import register, registry

from mantra_env.env import MantraEnv
from mantra_env.registration import make_env
from mantra_env.trainers.text import action_from_reply, opening_messages

ENV_CLASS = "mantra"


class MantraTextEnv(BaseTextEnv):  # type: ignore[misc]  # skyrl_gym ships no type information
    """One MANTRA case: ``extras`` (the dataset row) names ``suite`` and ``case``; ``env_config`` may set
    ``reward_mode`` (binary, fraction, shaped), ``dense`` and ``max_steps`` (a row's own values win)."""

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None) -> None:
        super().__init__()
        settings = {**dict(env_config or {}), **(extras or {})}
        for key in ("suite", "case"):
            if key not in settings:
                raise ValueError(f"a mantra env needs extras[{key!r}] (dataset_rows writes it)")
        self.case = settings["case"]
        self.env: MantraEnv = make_env(
            str(settings["suite"]),
            case=self.case,
            reward_mode=settings.get("reward_mode", "binary"),
            dense=bool(settings.get("dense", False)),
            max_steps=int(settings.get("max_steps", 30)),
        )
        self.max_turns = self.env.max_steps + 1  # every tool call, then the final answer

    def init(self, prompt: ConversationType) -> tuple[ConversationType, dict[str, Any]]:
        """Start the episode; the messages are the case's own (``prompt`` is the dataset row's copy of them)."""
        opening, info = self.env.reset(options={"case": self.case})
        return opening_messages(opening), {"case_id": info["case_id"]}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        self.turns += 1
        observation, reward, terminated, truncated, info = self.env.step(action_from_reply(action))
        done = terminated or truncated
        metadata: dict[str, Any] = {"case_id": info["case_id"], "step": info["step"]}
        if done:
            metadata["verdict"] = info["verdict_json"]
            metadata["passed"] = info["verdict"].passed
        observations = [] if done else [{"role": "user", "content": observation}]
        return BaseTextEnvStepOutput(observations=observations, reward=float(reward), done=done, metadata=metadata)

    def close(self) -> None:
        self.env.close()


def dataset_rows(suite: str, split: str | None = None) -> list[dict[str, Any]]:
    """One SkyRL dataset row per case of ``suite`` (of its ``split``, ``"train"`` or ``"test"``, if given:
    :mod:`mantra_env.splits`): the opening messages, the env class and the case (the reward mode is the trainer's
    ``env_config``, the same for every row)."""
    env = make_env(suite, split=split)
    rows = []
    for case in env.suite.cases:
        opening, _ = env.reset(options={"case": case.id})
        rows.append(
            {
                "prompt": opening_messages(opening),
                "env_class": ENV_CLASS,
                "suite": suite,
                "case": case.id,
            }
        )
    return rows


def register_env() -> None:
    """Register :class:`MantraTextEnv` with skyrl_gym as ``mantra`` (idempotent)."""
    if ENV_CLASS not in registry:
        register(id=ENV_CLASS, entry_point="mantra_env.trainers.skyrl:MantraTextEnv")
