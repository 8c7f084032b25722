"""Every shipped suite in gymnasium's vector envs (sync; async with shared memory on and off) and through pickle."""

from __future__ import annotations

import json
import pickle
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import mantra_env  # noqa: F401 - registers the shipped suites
from mantra_env import registration
from mantra_env.domains import load_domain
from mantra_env.env import MantraEnv
from mantra_env.spaces import JsonText, SharedTexts

SUITE_IDS = registration.suite_env_ids()
MODES = [("sync", {}), ("async", {"shared_memory": True}), ("async", {"shared_memory": False})]
FINAL = json.dumps({"final_answer": "done"})


def rollout(env_id: str, mode: str, kwargs: dict[str, Any], steps: int = 3) -> list[Any]:
    """Observations and rewards of two sub-envs over ``steps`` sampled tool calls, then a final answer in the first."""
    vector = gym.make_vec(env_id, num_envs=2, vectorization_mode=mode, vector_kwargs=kwargs)
    try:
        single: JsonText = vector.single_observation_space  # type: ignore[assignment]
        vector.action_space.seed(7)
        observations, _ = vector.reset(seed=3)
        outputs: list[Any] = [tuple(observations)]
        for _ in range(steps):
            observations, rewards, *_ = vector.step(vector.action_space.sample())
            assert all(single.contains(text) for text in observations)
            outputs += [tuple(observations), rewards.tolist()]
        observations, rewards, terminated, *_ = vector.step((FINAL, vector.action_space.sample()[1]))
        outputs += [tuple(observations), rewards.tolist(), terminated.tolist()]
        return outputs
    finally:
        vector.close()


@pytest.mark.parametrize("env_id", SUITE_IDS)
def test_sync_and_async_vector_envs_agree_with_and_without_shared_memory(env_id: str) -> None:
    results = [rollout(env_id, mode, kwargs) for mode, kwargs in MODES]
    assert results[0] == results[1] == results[2]
    opening, after_one_step = results[0][0], results[0][1]
    assert all(json.loads(text).keys() == {"system", "prompt", "tools"} for text in opening)
    assert opening != after_one_step  # the shared memory view follows the steps
    assert results[0][-1] == [True, False]


@pytest.mark.parametrize("env_id", SUITE_IDS)
def test_shared_memory_without_copy_is_a_live_view_and_its_deep_copy_a_snapshot(env_id: str) -> None:
    vector = gym.make_vec(env_id, num_envs=2, vectorization_mode="async", vector_kwargs={"copy": False})
    try:
        observations, _ = vector.reset(seed=0)
        assert isinstance(observations, SharedTexts)
        snapshot = pickle.loads(pickle.dumps(tuple(observations)))
        vector.step((FINAL, FINAL))
        assert observations[0] == '{"done": true}' and snapshot[0] != observations[0]
    finally:
        vector.close()


def test_async_vector_env_with_spawned_workers() -> None:
    """Workers that start fresh (spawn) import mantra_env and find the shared-memory handlers."""
    vector = gym.make_vec(SUITE_IDS[0], num_envs=2, vectorization_mode="async", vector_kwargs={"context": "spawn"})
    try:
        observations, _ = vector.reset(seed=0)
        observations, *_ = vector.step(vector.action_space.sample())
        assert all(isinstance(json.loads(text), dict) for text in observations)
    finally:
        vector.close()


def play(env: MantraEnv, actions: list[str]) -> list[Any]:
    return [env.step(action)[:4] for action in actions]


@pytest.mark.parametrize("env_id", SUITE_IDS)
def test_envs_pickle_before_and_during_an_episode(env_id: str) -> None:
    env = gym.make(env_id).unwrapped
    assert isinstance(env, MantraEnv)
    fresh = pickle.loads(pickle.dumps(env))
    assert fresh.domain is load_domain(env.domain.name)  # a shipped domain travels by name
    assert len(pickle.dumps(env)) < 1_000_000
    env.reset(seed=5)
    env.action_space.seed(5)
    actions = [env.action_space.sample() for _ in range(3)] + [FINAL]
    env.step(actions[0])
    copy = pickle.loads(pickle.dumps(env))
    assert play(copy, actions[1:]) == play(env, actions[1:])
    assert copy.last_trace == env.last_trace
    assert fresh.reset(seed=5)[0] == env.reset(seed=5)[0]


def test_an_env_of_a_domain_that_is_not_shipped_pickles_by_value() -> None:
    from tests.env.test_env import CALL_CHECK, CALL_ORDER, make

    env = make(case=0)
    env.reset()
    env.step(CALL_CHECK)
    env.step(CALL_ORDER)
    copy = pickle.loads(pickle.dumps(env))
    assert copy.domain is not env.domain and copy.domain.name == env.domain.name
    assert copy.step(FINAL)[1] == env.step(FINAL)[1] == 1.0


def test_vector_observation_space_batches_the_text_space() -> None:
    vector = gym.make_vec(SUITE_IDS[0], num_envs=3, vectorization_mode="sync")
    try:
        assert isinstance(vector.single_observation_space, JsonText)
        batch = vector.observation_space.sample()
        assert len(batch) == 3 and all(vector.single_observation_space.contains(text) for text in batch)
        assert np.all([isinstance(json.loads(action), dict) for action in vector.action_space.sample()])
    finally:
        vector.close()
