"""Runner overhead: what the harness costs per episode when the model answers instantly.

Run: ``.venv/bin/python benchmarks/runner.py [--episodes N]``. Every line runs N episodes (the 14 cases of the
operations starter suite, N/14 attempts each) through ``run_suite`` into a scratch DuckDB file (each episode
committed atomically by the writer process while the next episodes run), first one at a time
(ms per episode, and its ratio to the 5 ms target), then with 64 in flight (episodes per second). Per episode
means the marginal cost (see :func:`marginal`); what a run pays once is printed apart:

* **strands agent, instant strands model** -- the harness overhead, the figure compared with the target: a
  real strands ``Agent`` with the domain's 20 tools on ``InstantModel``, a strands ``Model`` that answers at
  once (no litellm, no HTTP). Its first answer in an episode is one ``check_inventory`` call, which goes
  through the tool adapter and ``env.step``; once a tool result is in the conversation it answers with a final
  text. So an episode is two model calls, one tool call, the environment, grading and the store write.
* **strands agent, litellm mock_response** -- the same episode shape (the same tool call, then the same text)
  answered by litellm's own mock (``mock_response``) behind the agent's litellm model: what litellm's request
  path (request building, response objects, logging and cost bookkeeping) adds to the line above.
* **scripted oracle, no model** -- the SMT-proven plan of each case replayed without any model.

Each line is warmed up once (imports, first calls) before it is timed; afterwards the benchmark checks that every
episode was stored, none as an error, and (model lines) each with exactly its one tool call.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1]))

from strands.models.model import Model

from mantra_env.agents.base import ScriptedAgent
from mantra_env.agents.models import ModelConfig
from mantra_env.agents.scripted import OraclePolicy
from mantra_env.agents.strands_agent import StrandsAgent, plain_text_model_class
from mantra_env.domains import find_suite
from mantra_env.runner import RunSettings, run_suite
from mantra_env.store import RolloutStore
from mantra_env.store.records import RunRecord

TARGET_MS = 5.0
TOOL = "check_inventory"
ARGUMENTS = {"item_name": "Dell UltraSharp U2723QE"}
ANSWER = "Done."


def _tool_result_seen(messages: Any) -> bool:
    return any("toolResult" in block for message in messages for block in message["content"])


class InstantModel(Model):
    """A strands model that answers at once: one tool call while the conversation has no tool result, then a
    final text; 10 input and 5 output tokens per call."""

    def __init__(self) -> None:
        self.config: dict[str, Any] = {"model_id": "instant"}

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        return self.config

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the benchmark asks for no structured output")

    async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        yield {"messageStart": {"role": "assistant"}}
        if _tool_result_seen(messages):
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": ANSWER}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
        else:
            yield {"contentBlockStart": {"start": {"toolUse": {"name": TOOL, "toolUseId": "call_1"}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(ARGUMENTS)}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        yield {"metadata": {"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}, "metrics": {}}}


class InstantAgent(StrandsAgent):
    """The strands agent on :class:`InstantModel`."""

    def strands_model(self) -> Any:
        return InstantModel()


class LitellmMockAgent(StrandsAgent):
    """The strands agent on its litellm model, answered by litellm's ``mock_response``: the tool call while no
    tool result is in the conversation, then the final text."""

    def strands_model(self) -> Any:
        model = super().strands_model()  # the agent's own client arguments and parameters (~0.03 ms to build)
        return _litellm_mock_class()(local=False, client_args=model.client_args, **model.config)


@functools.cache
def _litellm_mock_class() -> type[Any]:
    class OneToolCallMock(plain_text_model_class()):  # type: ignore[misc]
        """Sets litellm's ``mock_response`` per request: the tool call, or (from the params) the final text."""

        def format_request(self, messages: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
            request: dict[str, Any] = super().format_request(messages, *args, **kwargs)
            if not _tool_result_seen(messages):
                function = {"name": TOOL, "arguments": json.dumps(ARGUMENTS)}
                message = {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "call_1", "type": "function", "function": function}],
                }
                request["mock_response"] = {"choices": [{"message": message, "finish_reason": "tool_calls"}]}
            return request

    return OneToolCallMock


def _cpu_seconds() -> float:
    """CPU time of this process and of its waited-for children (the writer processes of finished runs)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def timed(make_agent: Callable[[], Any], episodes: int, concurrency: int, steps: int | None) -> tuple[float, float]:
    """(wall seconds, CPU seconds of both processes) of a run of ``episodes`` episodes (attempts of the starter
    cases) at ``concurrency``; checks afterwards that every episode was stored, none as an error, each with
    ``steps`` tool calls if given."""
    domain, suite = find_suite("operations")
    assert domain is not None
    attempts = max(1, episodes // len(suite.cases))
    with tempfile.TemporaryDirectory() as scratch, RolloutStore(Path(scratch) / "bench.duckdb") as store:
        record = RunRecord(run_id="bench", suite="operations/starter", model="mock", agent="bench")
        settings = RunSettings(attempts=attempts, concurrency=concurrency, retries=0)
        started, cpu = time.perf_counter(), _cpu_seconds()
        progress = asyncio.run(run_suite(store, record, suite, domain, make_agent, settings))
        elapsed, cpu = time.perf_counter() - started, _cpu_seconds() - cpu
        stored = store.query("SELECT count(*) FILTER (WHERE status <> 'error'), min(steps), max(steps) FROM episodes")
    expected = (attempts * len(suite.cases),) + ((steps, steps) if steps is not None else stored[0][1:])
    assert progress.done == expected[0] and stored[0] == expected, f"unexpected episodes: {stored[0]} != {expected}"
    return elapsed, cpu


def marginal(
    make_agent: Callable[[], Any], episodes: int, concurrency: int, steps: int | None, repeats: int = 3
) -> tuple[float, float, float]:
    """(wall seconds per episode, wall seconds per run, CPU seconds per episode): slopes and intercept of a run's
    times over its episodes, from runs of ``episodes`` and three times as many (the median of ``repeats`` such
    pairs; this machine's speed drifts), so that what a run pays once (the writer process starting, the last
    commit, reopening the database) is not spread over its episodes."""
    fits = []
    for _ in range(repeats):
        small, small_cpu = timed(make_agent, episodes, concurrency, steps)
        large, large_cpu = timed(make_agent, 3 * episodes, concurrency, steps)
        per_episode = (large - small) / (2 * episodes)
        fits.append((per_episode, small - per_episode * episodes, (large_cpu - small_cpu) / (2 * episodes)))
    return sorted(fits)[repeats // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=140)
    args = parser.parse_args()
    instant = lambda: InstantAgent(ModelConfig(alias="instant", model="instant"))  # noqa: E731
    mock = ModelConfig(alias="mock", model="openai/mock", api_key="none", params={"mock_response": ANSWER})
    litellm_mock = lambda: LitellmMockAgent(mock)  # noqa: E731
    oracle = lambda: ScriptedAgent(OraclePolicy())  # noqa: E731
    lines = (
        ("strands agent, instant strands model (the harness overhead)", instant, 1),
        ("strands agent, litellm mock_response (adds litellm's request path)", litellm_mock, 1),
        ("scripted oracle, no model", oracle, None),
    )
    for _, factory, steps in lines:
        timed(factory, 14, 1, steps)  # warm-up: imports, first calls
    for name, factory, steps in lines:
        sequential, fixed, cpu = marginal(factory, args.episodes, 1, steps)
        parallel, _, _ = marginal(factory, args.episodes, 64, steps)
        print(f"{name}:")
        ms = sequential * 1000
        print(f"  sequential: {ms:.1f} ms per episode ({ms / TARGET_MS:.2f}x the {TARGET_MS:g} ms target)")
        print(f"    CPU per episode, runner and writer process together: {cpu * 1000:.1f} ms")
        print(f"    once per run (writer start, last commit, reopening): {fixed * 1000:.0f} ms")
        print(f"  64 in flight: {1 / parallel:,.0f} episodes/s")


if __name__ == "__main__":
    main()
