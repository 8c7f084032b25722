"""Every registered suite: gymnasium's env checker, same-seed determinism, oracle replay and the no-op floor."""

from __future__ import annotations

import functools

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import mantra_env  # noqa: F401 - registers the shipped suites
from mantra_env import registration
from mantra_env.agents.base import play
from mantra_env.agents.scripted import NoopPolicy, OraclePolicy, RandomPolicy, WriteFirstPolicy
from mantra_env.checks import Call, Follows, Precedes, TraceIndex, evaluate
from mantra_env.env import MantraEnv
from mantra_env.rewards import expected_misses

SUITE_IDS = registration.suite_env_ids()


@functools.cache
def make(env_id: str) -> MantraEnv:
    """One env per suite and worker, shared by the per-case tests (each episode starts at reset; building an env
    reads and checks its suite: a fifth of a second, which the 1,500 tests of this file paid each time)."""
    env = gym.make(env_id).unwrapped
    assert isinstance(env, MantraEnv)
    return env


CASES = [(env_id, case.id) for env_id in SUITE_IDS for case in make(env_id).suite.cases]


def test_the_operations_starter_suite_is_registered_with_at_least_12_cases() -> None:
    assert "mantra/operations-v2" in SUITE_IDS
    ids = [case for env_id, case in CASES if env_id == "mantra/operations-v2"]
    assert len(ids) >= 12 and {"fig1-case1", "fig1-case2"} <= set(ids)


@pytest.mark.parametrize("env_id", SUITE_IDS)
def test_check_env(env_id: str) -> None:
    check_env(gym.make(env_id).unwrapped, skip_render_check=True)


@pytest.mark.parametrize("env_id", SUITE_IDS)
def test_same_seed_same_rollout(env_id: str) -> None:
    def rollout() -> list[object]:
        env = gym.make(env_id).unwrapped  # a fresh env each time
        assert isinstance(env, MantraEnv)
        observation, _ = env.reset(seed=123)
        outcome = play(env, RandomPolicy(), env.case.id, seed=123)  # type: ignore[union-attr]
        return [observation, outcome["reward"], outcome["trace"].model_dump(mode="json")]

    assert rollout() == rollout()


@pytest.mark.parametrize(("env_id", "case_id"), CASES)
def test_oracle_replay_passes_with_no_tool_errors(env_id: str, case_id: str) -> None:
    env = make(env_id)
    outcome = play(env, OraclePolicy(), case_id)
    calls = outcome["trace"].calls
    tried = expected_misses(env.suite.case(case_id).checks, calls)  # a required lookup that finds nothing
    errors = [(call.tool, call.error.message) for call in calls if call.error is not None and call.step not in tried]
    assert errors == []
    failed = [check.check_id for check in outcome["verdict"].checks if not check.evidence.passed]
    assert failed == [] and outcome["verdict"].passed and outcome["reward"] == 1.0


@pytest.mark.parametrize(("env_id", "case_id"), CASES)
def test_noop_fails_every_case_with_a_required_call(env_id: str, case_id: str) -> None:
    env = make(env_id)
    case = env.suite.case(case_id)
    empty = TraceIndex([])
    requires_a_call = any(not evaluate(entry.check, empty).passed for entry in case.checks)
    outcome = play(env, NoopPolicy(), case_id)
    assert outcome["verdict"].passed is (not requires_a_call)
    assert requires_a_call  # every starter case asks for something to be done


@pytest.mark.parametrize(("env_id", "case_id"), CASES)
def test_write_first_fails_when_a_check_orders_a_read_before_a_write(env_id: str, case_id: str) -> None:
    env = make(env_id)
    case = env.suite.case(case_id)
    kinds = env.domain.episode_constants.kinds
    read_before_write = any(
        isinstance(entry.check, Precedes | Follows) and kinds[first.tool] == "read" and kinds[then.tool] == "write"
        for entry in case.checks
        for first, then in [_order(entry.check)]
    )
    outcome = play(env, WriteFirstPolicy(), case_id)
    if read_before_write:
        assert not outcome["verdict"].passed


def _order(check: object) -> tuple[Call, Call]:
    """(earlier, later) atoms of an ordering check; a dummy pair for other checks."""
    if isinstance(check, Precedes):
        return check.call, check.anchor
    if isinstance(check, Follows):
        return check.anchor, check.call
    dummy = Call(tool="x")
    return dummy, dummy
