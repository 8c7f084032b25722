"""The verifiers adapter driven by verifiers' own rollout loop, and by its ``vf-eval`` command, against a stub
OpenAI-compatible server that answers with native tool calls (the oracle's, or them with the writes first); the
rewards must be the grader's."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
import verifiers as vf
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from verifiers.clients.openai_chat_completions_client import OpenAIChatCompletionsClient

from mantra_env.agents.scripted import oracle_plan
from mantra_env.domains import find_suite
from mantra_env.grading import grade
from mantra_env.registration import make_env
from mantra_env.rewards import obligations, reward
from mantra_env.splits import suite_split
from mantra_env.trainers.verifiers_env import MantraVerifiersEnv, load_environment
from tests.browser import serve

SUITE = "operations"
ENV_ID = load_environment.__module__  # what `vf-eval ENV_ID` imports: the module defining load_environment
ROOT = Path(__file__).resolve().parents[2]
DOMAIN, LOADED = find_suite(SUITE)
assert DOMAIN is not None
TOOLS = DOMAIN.tool_specs()
CASES = {case.scenario.prompt: case for case in LOADED.cases}


def _plans(kind: str) -> dict[str, list[dict[str, Any]]]:
    kinds = {spec.name: spec.kind for spec in TOOLS}
    plans = {}
    for prompt, case in CASES.items():
        plan = oracle_plan(case, TOOLS)
        if kind == "write-first":
            plan = sorted(plan, key=lambda action: kinds[action["tool"]] != "write")
        plans[prompt] = plan
    return plans


def _stub(plans: dict[str, dict[str, list[dict[str, Any]]]]) -> Starlette:
    """Chat completions: after n assistant turns, the n-th call of the case's plan as a native tool call (the
    ``malformed`` model first sends arguments that are not JSON), then a final answer."""

    async def completions(request: Request) -> JSONResponse:
        body = await request.json()
        messages = body["messages"]
        turn = sum(1 for message in messages if message["role"] == "assistant")
        user = next(m["content"] for m in messages if m["role"] == "user")
        plan = plans[body["model"]][user]
        assert "tools" in body and {t["function"]["name"] for t in body["tools"]} >= {a["tool"] for a in plan}
        message: dict[str, Any] = {"role": "assistant", "content": "Done: the request is handled."}
        calls = [(a["tool"], json.dumps(a["arguments"])) for a in plan]
        if body["model"] == "malformed":
            calls = [("check_inventory", '{"item_name": '), *calls]
        if turn < len(calls):
            name, arguments = calls[turn]
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": f"call-{turn}", "type": "function", "function": {"name": name, "arguments": arguments}}
                ],
            }
        return JSONResponse(
            {
                "id": f"stub-{turn}",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {"index": 0, "message": message, "finish_reason": "tool_calls" if turn < len(calls) else "stop"}
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])


@pytest.fixture(scope="module")
def stub_url() -> Iterator[str]:
    """The stub server's OpenAI base URL; the model name picks its answers (oracle, write-first, malformed)."""
    plans = {kind: _plans(kind) for kind in ("oracle", "write-first")}
    plans["malformed"] = plans["oracle"]
    with serve(_stub(plans)) as url:
        yield f"{url}/v1"


@pytest.fixture(scope="module")
def client(stub_url: str) -> Callable[[], OpenAIChatCompletionsClient]:
    """A maker of clients of the stub server: each ``asyncio.run`` needs its own (an async client's pooled
    connections belong to the event loop that opened them, and reusing one after that loop closed fails with
    "Event loop is closed" whenever the server kept the connection alive)."""
    return lambda: OpenAIChatCompletionsClient(openai.AsyncOpenAI(base_url=stub_url, api_key="stub", max_retries=0))


def _evaluate(env: MantraVerifiersEnv, client: Callable[[], OpenAIChatCompletionsClient], model: str) -> list[Any]:
    outputs = asyncio.run(env.evaluate(client(), model, num_examples=-1, rollouts_per_example=1, on_progress=[]))
    return list(outputs["outputs"] if isinstance(outputs, dict) else outputs.outputs)


def _graded(calls: list[tuple[str, dict[str, Any]]], prompt: str, mode: str) -> tuple[float, bool]:
    """The reward of the same calls replayed in a fresh env and graded straight from the checks."""
    case = CASES[prompt]
    env = make_env(SUITE, case=case.id)
    env.reset(options={"case": case.id})
    for tool, arguments in calls:
        env.step({"tool": tool, "arguments": arguments})
    env.step({"final_answer": "done"})
    trace = env.last_trace
    verdict = grade(trace, case.checks)
    errors = sum(call.error is not None for call in trace.calls)
    return reward(mode, verdict, obligations(case.checks), errors), verdict.passed  # type: ignore[arg-type]


def _messages(output: Any) -> list[dict[str, Any]]:
    """The rollout's completion as plain dicts (verifiers' outputs mix models and dicts, tool calls as JSON)."""
    plain = []
    for message in output["completion"]:
        data = message if isinstance(message, dict) else message.model_dump()
        calls = [json.loads(c) if isinstance(c, str) else dict(c) for c in data.get("tool_calls") or []]
        plain.append({**data, "tool_calls": calls})
    return plain


def _calls(output: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(c["name"], json.loads(c["arguments"])) for m in _messages(output) for c in m["tool_calls"]]


def _prompt(output: Any) -> str:
    users = [m for m in output["prompt"] if (m["role"] if isinstance(m, dict) else m.role) == "user"]
    return str(users[0]["content"] if isinstance(users[0], dict) else users[0].content)


@pytest.mark.parametrize("mode", ["binary", "fraction", "shaped"])
def test_rewards_through_verifiers_are_the_graders(
    client: Callable[[], OpenAIChatCompletionsClient], mode: str
) -> None:
    env = load_environment(suite=SUITE, reward=mode)
    totals = {}
    for model in ("oracle", "write-first"):
        outputs = _evaluate(env, client, model)
        assert len(outputs) == len(CASES)
        for output in outputs:
            expected, passed = _graded(_calls(output), _prompt(output), mode)
            assert output["reward"] == pytest.approx(expected)
            assert output["metrics"]["passed"] == (1.0 if passed else 0.0)
        totals[model] = sum(output["reward"] for output in outputs)
    assert totals["oracle"] == len(CASES)
    assert totals["write-first"] < len(CASES)


def test_a_malformed_call_is_a_tool_error_the_model_sees(client: Callable[[], OpenAIChatCompletionsClient]) -> None:
    env = load_environment(suite=SUITE, reward="shaped")
    (output, *_) = _evaluate(env, client, "malformed")
    first = next(m for m in _messages(output) if m["role"] == "tool")
    assert "unparseable_action" in first["content"]
    assert 0.0 < output["reward"] < 1.0  # the oracle's calls still comply; the tool error costs under shaped


def test_rows_are_the_cases_and_the_tools_are_native() -> None:
    env = load_environment(suite=SUITE)
    rows = env.get_dataset()
    assert [row["info"]["case"] for row in rows] == [case.id for case in LOADED.cases]
    assert {tool.name for tool in env.tool_defs} == {spec.name for spec in TOOLS}
    with pytest.raises(ValueError, match="unknown reward"):
        load_environment(suite=SUITE, reward="generous")


def test_split_trains_on_train_and_evaluates_on_test() -> None:
    env = load_environment(suite=SUITE, split=True)
    sides = suite_split(LOADED)
    assert [row["info"]["case"] for row in env.get_dataset()] == sides.train
    assert [row["info"]["case"] for row in env.get_eval_dataset()] == sides.test


def test_verifiers_loads_the_env_by_its_module_name() -> None:
    """``vf-eval ENV_ID`` imports ENV_ID and calls its ``load_environment``: our module's dotted name is the id, and
    verifiers' loader (which needs its own dependencies, openai-agents among them) finds it."""
    env = vf.load_environment(ENV_ID, suite=SUITE, reward="fraction")
    assert isinstance(env, MantraVerifiersEnv)
    assert (env.env_id, env.reward_mode) == (ENV_ID, "fraction")


@pytest.mark.slow
@pytest.mark.parametrize("where", ["repository root", "another directory"])
def test_vf_eval_scores_a_suite_with_the_graders_rewards(stub_url: str, tmp_path: Path, where: str) -> None:
    """verifiers' own command on a shipped suite, against the stub: from the repository root as ``python -m``
    (the root first on the path, beside openai-agents' ``agents``) and as the ``vf-eval`` script from elsewhere."""
    command = [str(Path(sys.executable).with_name("vf-eval"))]
    if where == "repository root":
        command = [sys.executable, "-m", "verifiers.scripts.eval"]
    out = tmp_path / "out"
    arguments = ["--env-args", json.dumps({"suite": SUITE, "reward": "fraction"}), "--model", "write-first"]
    arguments += ["--api-base-url", stub_url, "--api-key-var", "STUB_API_KEY", "--num-examples", str(len(CASES))]
    arguments += ["--rollouts-per-example", "1", "--disable-tui", "--save-results", "--output-dir", str(out)]
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"} | {"STUB_API_KEY": "stub"}
    result = subprocess.run(
        [*command, ENV_ID, *arguments],
        cwd=ROOT if where == "repository root" else tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    (results,) = out.glob("evals/*/*/results.jsonl")
    rows = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]
    assert sorted(row["info"]["case"] for row in rows) == sorted(case.id for case in CASES.values())
    for row in rows:
        expected, passed = _graded(_calls(row), _prompt(row), "fraction")
        assert row["reward"] == pytest.approx(expected)
        assert row["passed"] == (1.0 if passed else 0.0)
    assert sum(row["reward"] for row in rows) < len(rows)  # the writes come first: not every case passes
