"""The SkyRL-gym adapter driven as SkyRL's generator drives it: a policy behind an OpenAI-compatible endpoint (a
stub server replaying scripted replies), its replies handed to ``step``; the rewards must be the grader's."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest
import skyrl_gym
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mantra_env.agents.scripted import oracle_plan
from mantra_env.domains import find_suite
from mantra_env.grading import grade
from mantra_env.rewards import obligations, reward
from mantra_env.splits import suite_split
from mantra_env.trainers.skyrl import MantraTextEnv, dataset_rows, register_env
from mantra_env.trainers.text import reply_for_call
from tests.browser import serve

SUITE = "operations"
DOMAIN, LOADED = find_suite(SUITE)
assert DOMAIN is not None
TOOLS = DOMAIN.tool_specs()


def _script(kind: str) -> dict[str, list[str]]:
    """Replies per case prompt: the oracle's calls, or them with every write moved before the reads."""
    kinds = {spec.name: spec.kind for spec in TOOLS}
    script = {}
    for case in LOADED.cases:
        plan = oracle_plan(case, TOOLS)
        if kind == "write-first":
            plan = sorted(plan, key=lambda action: kinds[action["tool"]] != "write")
        replies = [reply_for_call(action["tool"], action["arguments"]) for action in plan]
        if kind == "malformed":
            replies = ['<tool_call>{"name": "check_inventory", "arguments": {</tool_call>', *replies]
        script[case.scenario.prompt] = [*replies, "Done: everything the manual asks is handled."]
    return script


def _stub(scripts: dict[str, dict[str, list[str]]]) -> Starlette:
    """OpenAI's chat-completions endpoint: the reply after n assistant turns is the script's n-th for the case
    (recognised by its user prompt); the model name picks the script."""

    async def completions(request: Request) -> JSONResponse:
        body = await request.json()
        messages = body["messages"]
        turn = sum(1 for message in messages if message["role"] == "assistant")
        reply = scripts[body["model"]][messages[1]["content"]][turn]
        return JSONResponse(
            {
                "id": f"stub-{turn}",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])


@pytest.fixture(scope="module")
def client() -> Iterator[openai.OpenAI]:
    scripts = {kind: _script(kind) for kind in ("oracle", "write-first", "malformed")}
    with serve(_stub(scripts)) as url:
        yield openai.OpenAI(base_url=f"{url}/v1", api_key="stub", max_retries=0)


def _rollout(client: openai.OpenAI, row: dict[str, Any], model: str, **config: Any) -> tuple[list[float], Any]:
    register_env()
    env = skyrl_gym.make("mantra", env_config=config, extras=row)
    messages, _ = env.init(row["prompt"])
    rewards = []
    while True:
        completion = client.chat.completions.create(model=model, messages=messages)
        reply = completion.choices[0].message.content or ""
        messages.append({"role": "assistant", "content": reply})
        out = env.step(reply)
        rewards.append(out["reward"])
        if out["done"]:
            return rewards, env
        messages += out["observations"]


def _graded(env: MantraTextEnv, mode: str) -> float:
    """The reward computed straight from the grader on the episode's trace (not through the env)."""
    inner = env.env
    case = inner.case
    trace = inner.last_trace
    errors = sum(call.error is not None for call in trace.calls)
    return reward(mode, grade(trace, case.checks), obligations(case.checks), errors)  # type: ignore[arg-type]


ROWS = dataset_rows(SUITE)


@pytest.mark.parametrize("mode", ["binary", "fraction", "shaped"])
def test_rewards_through_the_adapter_are_the_graders(client: openai.OpenAI, mode: str) -> None:
    by_kind: dict[str, list[float]] = {}
    for model in ("oracle", "write-first", "malformed"):
        for row in ROWS:
            rewards, env = _rollout(client, row, model, reward_mode=mode)
            assert rewards[:-1] == [0.0] * (len(rewards) - 1)  # sparse: the verdict comes at the end
            assert rewards[-1] == _graded(env, mode)
            by_kind.setdefault(model, []).append(rewards[-1])
    assert by_kind["oracle"] == [1.0] * len(ROWS)
    assert sum(by_kind["write-first"]) < len(ROWS)
    if mode == "shaped":  # one unparseable call per episode costs its tool error
        assert all(r < 1.0 for r in by_kind["malformed"])


def test_dense_rewards_sum_to_the_final_reward(client: openai.OpenAI) -> None:
    for row in ROWS[:4]:
        rewards, env = _rollout(client, row, "write-first", reward_mode="fraction", dense=True)
        assert sum(rewards) == pytest.approx(_graded(env, "fraction"))


def test_a_malformed_call_is_a_structured_error_the_model_sees(client: openai.OpenAI) -> None:
    rewards, env = _rollout(client, ROWS[0], "malformed")
    first = env.env.last_trace.calls[0]
    assert first.error is not None and first.error.code == "unparseable_action"
    assert rewards[-1] == 1.0  # the oracle's calls that follow still comply: an error is no violation


def test_rows_carry_the_cases_messages_and_a_missing_case_is_named() -> None:
    assert [row["case"] for row in ROWS] == [case.id for case in LOADED.cases]
    system, user = ROWS[0]["prompt"]
    assert (
        system["role"] == "system"
        and "<tool_call>" in system["content"]
        and '"name": "check_inventory"' in system["content"]
    )
    assert user == {"role": "user", "content": LOADED.cases[0].scenario.prompt}
    with pytest.raises(ValueError, match=r"extras\['case'\]"):
        MantraTextEnv(extras={"suite": SUITE})


def test_rows_of_a_split_are_its_cases() -> None:
    sides = suite_split(LOADED)
    for side in ("train", "test"):
        assert [row["case"] for row in dataset_rows(SUITE, split=side)] == sides.cases(side)  # type: ignore[arg-type]
