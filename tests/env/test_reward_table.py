"""What each scripted agent earns in each reward mode on each shipped suite: asserted, and kept in the README."""

from __future__ import annotations

import statistics
from pathlib import Path

import gymnasium as gym
import pytest

import mantra_env  # noqa: F401 - registers the shipped suites
from agents.base import play
from agents.scripted import SCRIPTED
from mantra_env import registration
from mantra_env.env import MantraEnv
from mantra_env.rewards import REWARD_MODES

README = Path(__file__).parents[2] / "README.md"
BEGIN, END = "<!-- reward-table: written by tests/env/test_reward_table.py -->", "<!-- /reward-table -->"
AGENTS = ("oracle", "noop", "random", "write-first", "decline", "read-all")


def mean_rewards(env_id: str) -> dict[str, dict[str, float]]:
    """agent -> mode -> mean reward over the suite's cases (one episode per case, seed 0)."""
    table: dict[str, dict[str, float]] = {}
    for agent in AGENTS:
        table[agent] = {}
        for mode in REWARD_MODES:
            env = gym.make(env_id, reward_mode=mode).unwrapped
            assert isinstance(env, MantraEnv)
            rewards = [play(env, SCRIPTED[agent](), case.id)["reward"] for case in env.suite.cases]
            table[agent][mode] = statistics.fmean(rewards)
    return table


@pytest.fixture(scope="module")
def tables() -> dict[str, dict[str, dict[str, float]]]:
    return {env_id: mean_rewards(env_id) for env_id in SUITE_IDS}


SUITE_IDS = registration.suite_env_ids()


def render(tables: dict[str, dict[str, dict[str, float]]]) -> str:
    lines = ["| suite | agent | " + " | ".join(REWARD_MODES) + " |", "|---|---|" + "---:|" * len(REWARD_MODES)]
    for env_id, table in tables.items():
        for agent, row in table.items():
            lines.append(f"| `{env_id}` | {agent} | " + " | ".join(f"{row[mode]:.2f}" for mode in REWARD_MODES) + " |")
    return "\n".join(lines)


@pytest.mark.parametrize("env_id", SUITE_IDS)
def test_only_the_oracle_earns_full_reward_and_the_noop_agent_earns_nothing(
    env_id: str, tables: dict[str, dict[str, dict[str, float]]]
) -> None:
    table = tables[env_id]
    for mode in REWARD_MODES:
        assert table["oracle"][mode] == 1.0, mode
        assert table["noop"][mode] == 0.0, mode
        assert all(table[agent][mode] < 1.0 for agent in ("random", "write-first", "decline", "read-all")), mode


def test_the_readme_table_is_current(tables: dict[str, dict[str, dict[str, float]]]) -> None:
    text = README.read_text(encoding="utf-8")
    assert BEGIN in text and END in text, f"README.md lacks the reward table markers {BEGIN!r} ... {END!r}"
    current = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    fresh = render(tables)
    assert current == fresh, f"README.md's reward table is stale; replace it with:\n{fresh}"
