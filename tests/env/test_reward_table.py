"""What each scripted agent earns in each reward mode on each shipped suite: asserted, and kept in the README."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import gymnasium as gym
import pytest

import mantra_env  # noqa: F401 - registers the shipped suites
from mantra_env import registration
from mantra_env.agents.base import play
from mantra_env.agents.scripted import SCRIPTED
from mantra_env.env import MantraEnv
from mantra_env.rewards import REWARD_MODES

README = Path(__file__).parents[2] / "README.md"
BEGIN, END = "<!-- reward-table: written by tests/env/test_reward_table.py -->", "<!-- /reward-table -->"
AGENTS = ("oracle", "noop", "random", "write-first", "decline", "claim-done", "read-all")


# Besides the modes: the share of episodes passing the checks alone, and the share with no unrequested write (nan:
# the suite stores no oracle plans, so it is not graded for writes); binary is both together.
VERDICT_COLUMNS = ("checks", "writes")


def mean_rewards(env_id: str) -> dict[str, dict[str, float]]:
    """agent -> column -> mean over the suite's cases (one episode per case, seed 0, scored in every mode:
    `MantraEnv.last_reward_in`, which tests/env/test_rewards.py holds to an env made in each mode)."""
    table: dict[str, dict[str, float]] = {}
    env = gym.make(env_id).unwrapped
    assert isinstance(env, MantraEnv)
    for agent in AGENTS:
        rewards: dict[str, list[float]] = {mode: [] for mode in REWARD_MODES}
        verdicts = []
        for case in env.suite.cases:
            episode = play(env, SCRIPTED[agent](), case.id)
            verdicts.append(episode["verdict"])
            for mode in REWARD_MODES:
                rewards[mode].append(env.last_reward_in(mode))
        table[agent] = {mode: statistics.fmean(values) for mode, values in rewards.items()}
        table[agent]["checks"] = statistics.fmean(verdict.checks_passed for verdict in verdicts)
        graded = [not verdict.unrequested_writes for verdict in verdicts if verdict.graded_for_writes]
        table[agent]["writes"] = statistics.fmean(graded) if graded else float("nan")
    return table


@pytest.fixture(scope="module")
def tables() -> dict[str, dict[str, dict[str, float]]]:
    return {env_id: mean_rewards(env_id) for env_id in SUITE_IDS}


SUITE_IDS = registration.suite_env_ids()


def render(tables: dict[str, dict[str, dict[str, float]]]) -> str:
    columns = (*VERDICT_COLUMNS, *REWARD_MODES)
    lines = ["| suite | agent | " + " | ".join(columns) + " |", "|---|---|" + "---:|" * len(columns)]
    for env_id, table in tables.items():
        for agent, row in table.items():
            cells = ["-" if math.isnan(row[column]) else f"{row[column]:.2f}" for column in columns]
            lines.append(f"| `{env_id}` | {agent} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


@pytest.mark.slow  # each suite played by six agents: seconds for the larger ones
@pytest.mark.parametrize("env_id", SUITE_IDS)
def test_only_the_oracle_earns_full_reward_and_the_noop_agent_earns_nothing(
    env_id: str, tables: dict[str, dict[str, dict[str, float]]]
) -> None:
    table = tables[env_id]
    for mode in REWARD_MODES:
        assert table["oracle"][mode] == 1.0, mode
        assert table["oracle"]["writes"] == 1.0 or math.isnan(table["oracle"]["writes"]), "the oracle wrote unasked"
        assert table["noop"][mode] == 0.0, mode
        assert all(table[agent][mode] < 1.0 for agent in ("random", "write-first", "decline", "read-all")), mode


def test_the_readme_table_is_current(tables: dict[str, dict[str, dict[str, float]]]) -> None:
    text = README.read_text(encoding="utf-8")
    assert BEGIN in text and END in text, f"README.md lacks the reward table markers {BEGIN!r} ... {END!r}"
    current = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    fresh = render(tables)
    assert current == fresh, f"README.md's reward table is stale; replace it with:\n{fresh}"
