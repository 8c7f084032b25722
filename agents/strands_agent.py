"""The model-backed agent: a strands-agents ``Agent`` on a litellm model whose tools are thin adapters over
``env.step``, so evaluation and RL share one code path.

One agent per episode: the manual is the system prompt, the scenario the user turn, and each domain tool a
strands tool whose handler sends ``{"tool", "arguments"}`` to the environment and returns its observation.
The environment validates arguments against the schema (strands does not), so a malformed call becomes a
structured tool error the model sees and the trace records. Agent-loop cycles are capped (``max_cycles``).

Quirks of small local models handled here, not by weakening the evaluation: string arguments come back
HTML-escaped (``&#34;``) from the llama.cpp server and are unescaped; message content is flattened to plain
text for OpenAI-compatible servers that reject content parts (see ``agents/local_server.py``).
"""

from __future__ import annotations

import functools
import json
import os
import time
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch the price list at import

from agents.base import AgentReport, InfrastructureError
from agents.local_server import unescape_html
from agents.models import ModelConfig
from mantra_env.env import MantraEnv
from mantra_env.store.records import Usage

DEFAULT_MAX_CYCLES = 20


def _plain(message: dict[str, Any], tool_results_as_user: bool) -> dict[str, Any]:
    content = message.get("content")
    if content is None:  # an assistant turn that only calls tools; chat templates read .content regardless
        message = {**message, "content": ""}
    if isinstance(content, list):
        parts = [part.get("text", "") if isinstance(part, dict) else str(part) for part in content]
        message = {**message, "content": "\n".join(part for part in parts if part)}
    if tool_results_as_user and message.get("role") == "tool":
        return {"role": "user", "content": f"Tool result: {message.get('content', '')}"}
    return message


def classify(error: BaseException) -> str | None:
    """The infrastructure-error kind of a model exception, or None if it is not one."""
    name = type(error).__name__
    text = str(error).lower()
    if "ratelimit" in name.lower() or "429" in text or "rate limit" in text:
        return "rate_limit"
    if "timeout" in name.lower() or "timed out" in text:
        return "timeout"
    if "connection" in name.lower() or "connection refused" in text or "apiconnection" in name.lower():
        return "connection"
    if name in ("ServiceUnavailableError", "InternalServerError", "APIError", "BadRequestError"):
        return "provider"
    if name in ("MaxTokensReachedException", "ContextWindowOverflowException", "JSONDecodeError"):
        return "bad_output"
    return None


@functools.cache
def plain_text_model_class() -> type[Any]:
    """strands' LiteLLMModel with plain-text message content: the class is built once, on first use (importing
    strands' litellm provider imports litellm, about 2 s here), instead of once per episode."""
    from strands.models.litellm import LiteLLMModel

    class PlainTextModel(LiteLLMModel):
        """Sends message content as plain strings (OpenAI-compatible servers such as llama.cpp's reject content
        parts) and, for the bundled server (``local``) whose chat template drops tool results, restates each
        tool result as a user turn so the model sees it."""

        def __init__(self, *, local: bool, **kwargs: Any) -> None:
            self.local = local
            super().__init__(**kwargs)

        def format_request(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
            request: dict[str, Any] = super().format_request(*args, **kwargs)
            request["messages"] = [_plain(message, self.local) for message in request["messages"]]
            return request

    return PlainTextModel


class _SharedSpec(dict[str, Any]):
    """A tool spec that deep-copies to itself: strands deep-copies every tool spec before each model call, to
    shield them from middleware, which these agents have none of (~20 nested schemas, per call)."""

    def __deepcopy__(self, memo: dict[int, Any]) -> _SharedSpec:
        return self


def cache_tool_specs(registry: Any) -> None:
    """Make ``registry`` (a strands ``ToolRegistry``) normalize and validate its tool specs once, not on each of
    the ~6 times strands reads them per episode (~1 ms per episode with the 20 tools of a domain). The cache is
    keyed by the registered tool names, so registering a tool invalidates it."""
    compute = registry.get_all_tools_config
    cache: dict[tuple[tuple[str, ...], tuple[str, ...]], dict[str, Any]] = {}

    def get_all_tools_config() -> dict[str, Any]:
        key = (tuple(registry.registry), tuple(registry.dynamic_tools))
        if key not in cache:
            cache.clear()
            cache[key] = {name: _SharedSpec(spec) for name, spec in compute().items()}
        return dict(cache[key])

    registry.get_all_tools_config = get_all_tools_config


class StrandsAgent:
    """Drives one episode with a strands ``Agent`` over litellm."""

    def __init__(
        self,
        model: ModelConfig,
        max_cycles: int = DEFAULT_MAX_CYCLES,
        max_tokens: int = 512,
        request_timeout_s: float | None = None,
        api_base: str | None = None,
    ) -> None:
        self.model = model
        self.name = f"strands:{model.alias}"
        self.max_cycles = max_cycles
        self.max_tokens = max_tokens
        # The bundled CPU model reads its ~3k-token first prompt (manual + tool schemas) in about a minute.
        self.request_timeout_s = request_timeout_s or (300.0 if model.local_server else 60.0)
        self.api_base = api_base or model.api_base

    def strands_model(self) -> Any:
        """The strands ``Model`` this episode's agent talks to: litellm, non-streaming, plain-text content."""
        client_args: dict[str, Any] = {"timeout": self.request_timeout_s, "num_retries": 0}
        if self.api_base:
            client_args["api_base"] = self.api_base
        if self.model.api_key:
            client_args["api_key"] = self.model.api_key
        elif self.model.local_server:
            client_args["api_key"] = "sk-local"  # the bundled server checks none, but the OpenAI client wants one
        params = {"max_tokens": self.max_tokens, "temperature": 0.0, **self.model.params}
        if self.model.local_server:
            params.setdefault("tool_choice", "auto")  # the llama.cpp server calls tools only when asked
        # Non-streaming: the llama.cpp server returns nothing for streamed tool calls, and it is simpler to mock.
        model_class = plain_text_model_class()
        return model_class(
            local=self.model.local_server,
            client_args=client_args,
            model_id=self.model.model,
            params=params,
            stream=False,
        )

    async def run(self, env: MantraEnv, case_id: str, seed: int) -> AgentReport:
        from strands import Agent
        from strands.hooks import BeforeToolCallEvent
        from strands.tools.tools import PythonAgentTool

        observation, _ = env.reset(seed=seed, options={"case": case_id})
        opening = json.loads(observation)
        latencies: list[float] = []

        def make_tool(spec: dict[str, Any]) -> Any:
            # A coroutine function: strands awaits it on the event loop. A plain function would be run in a worker
            # thread (asyncio.to_thread) for a call of tens of microseconds (measured: 0.65 ms per episode with
            # one tool call), and the calls of one model turn would step the environment concurrently.
            async def handler(tool_use: Any, **context: Any) -> dict[str, Any]:
                started = time.perf_counter()
                arguments = unescape_html(tool_use.get("input") or {})
                result, _, _, _, _ = env.step({"tool": spec["name"], "arguments": arguments})
                latencies.append(time.perf_counter() - started)
                payload = json.loads(result)
                status = "error" if "error" in payload else "success"
                return {"toolUseId": tool_use["toolUseId"], "status": status, "content": [{"text": result}]}

            tool_spec = {
                "name": spec["name"],
                "description": spec["description"],
                "inputSchema": {"json": spec["parameters"]},
            }
            return PythonAgentTool(spec["name"], tool_spec, handler)  # type: ignore[arg-type]

        agent = Agent(
            model=self.strands_model(),
            tools=[make_tool(spec) for spec in opening["tools"]],
            system_prompt=opening["system"],
            callback_handler=None,
        )
        cache_tool_specs(agent.tool_registry)

        def unknown_tool(event: BeforeToolCallEvent) -> None:
            # strands answers a call to a tool it does not know by itself; the agent made the call, so it goes
            # through the environment too (recorded in the trace as an unknown_tool error).
            if event.selected_tool is None:
                tool_use = event.tool_use
                arguments = unescape_html(tool_use.get("input") or {})
                env.step({"tool": str(tool_use.get("name", "")), "arguments": arguments})

        agent.hooks.add_callback(BeforeToolCallEvent, unknown_tool)
        try:
            result = await agent.invoke_async(opening["prompt"], limits={"turns": self.max_cycles})
        except Exception as error:  # model errors surface as raw litellm exceptions
            kind = classify(error)
            if kind is None:
                raise
            raise InfrastructureError(kind, f"{type(error).__name__}: {error}") from None
        usage = result.metrics.accumulated_usage
        return AgentReport(
            usage=Usage(
                input_tokens=int(usage.get("inputTokens", 0)),
                output_tokens=int(usage.get("outputTokens", 0)),
                model_calls=int(result.metrics.cycle_count),
            ),
            messages=json.loads(json.dumps(agent.messages, default=str)),
            step_latencies_s=latencies,
            final_answer=str(result)[:4000],
        )
