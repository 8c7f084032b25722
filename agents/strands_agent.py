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

from mantra_env.agent import AgentReport, InfrastructureError
from mantra_env.agents.local_server import unescape_html
from mantra_env.agents.models import ModelConfig
from mantra_env.agents.provider_errors import EmptyResponseError, classify
from mantra_env.env import MantraEnv
from mantra_env.stepper import step
from mantra_env.store.records import Usage

DEFAULT_MAX_CYCLES = 20
#: The key under which a tool call's arguments that are not JSON reach the tool handler (as their raw text).
RAW_ARGUMENTS = "\x00raw_arguments"


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


def _checked_arguments(event: Any) -> Any:
    """A tool call's arguments as strands will parse them, except that text which is not JSON is kept: wrapped as
    ``{RAW_ARGUMENTS: text}`` (strands would replace it by ``{}``), so the trace records what the model sent."""
    delta = event.get("contentBlockDelta", {}).get("delta", {}).get("toolUse")
    if delta is None or not delta.get("input", "").strip():
        return event
    try:
        json.loads(delta["input"])
    except (ValueError, RecursionError):
        delta["input"] = json.dumps({RAW_ARGUMENTS: delta["input"]})
    return event


@functools.cache
def plain_text_model_class() -> type[Any]:
    """strands' LiteLLMModel with plain-text message content: the class is built once, on first use (importing
    strands' litellm provider imports litellm, about 2 s here), instead of once per episode."""
    import litellm
    from strands.models.litellm import LiteLLMModel

    litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banner on each provider error

    class PlainTextModel(LiteLLMModel):
        """Sends message content as plain strings (OpenAI-compatible servers such as llama.cpp's reject content
        parts) and, for the bundled server (``local``) whose chat template drops tool results, restates each
        tool result as a user turn so the model sees it.

        It also reads each (non-streamed) response as strands converts it: a response without a choice raises
        :class:`~mantra_env.agents.provider_errors.EmptyResponseError` instead of passing as an empty turn, and tool
        arguments that are not JSON are kept as text (see :func:`_checked_arguments`)."""

        def __init__(self, *, local: bool, **kwargs: Any) -> None:
            self.local = local
            self.answered = False
            super().__init__(**kwargs)

        def format_chunk(self, event: dict[str, Any], **kwargs: Any) -> Any:
            kind = event["chunk_type"]
            if kind == "message_start":
                self.answered = False
            elif kind in ("content_start", "content_delta"):
                self.answered = True
            elif kind == "message_stop" and event.get("data") is None and not self.answered:
                raise EmptyResponseError("the provider's response has no choices")
            chunk = super().format_chunk(event, **kwargs)
            return _checked_arguments(chunk) if kind == "content_delta" else chunk

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
        from strands.hooks import BeforeToolCallEvent, MessageAddedEvent
        from strands.tools.executors import SequentialToolExecutor
        from strands.tools.tools import PythonAgentTool

        observation, _ = env.reset(seed=seed, options={"case": case_id})
        opening = json.loads(observation)
        latencies: list[float] = []

        def make_tool(spec: dict[str, Any]) -> Any:
            # A coroutine function: strands awaits it on the event loop. Under the runner the step itself runs in
            # the episode's one worker thread (mantra_env.stepper), in the order the calls are made, so a domain
            # tool that blocks or raises ends this episode only.
            async def handler(tool_use: Any, **context: Any) -> dict[str, Any]:
                started = time.perf_counter()
                result, _, _, _, _ = await step(env, {"tool": spec["name"], "arguments": _arguments(tool_use)})
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
            # One call after another, as the model listed them: the hooks below step the env on the loop, which
            # must not overlap a call still running in the episode's worker thread.
            tool_executor=SequentialToolExecutor(),
        )
        cache_tool_specs(agent.tool_registry)

        def unknown_tool(event: BeforeToolCallEvent) -> None:
            # strands answers a call to a tool it does not know by itself; the agent made the call, so it goes
            # through the environment too (recorded in the trace as an unknown_tool error).
            if event.selected_tool is None:
                tool_use = event.tool_use
                env.step({"tool": str(tool_use.get("name", "")), "arguments": _arguments(tool_use)})

        def unnamable_tool(event: MessageAddedEvent) -> None:
            # A name outside strands' pattern (e.g. "bad name!") is answered by strands before any tool hook;
            # recorded here, as the model's message arrives, so the trace has every call the model made.
            if event.message.get("role") != "assistant":
                return
            for block in event.message.get("content", []):
                tool_use = block.get("toolUse")
                if tool_use is not None and not _valid_tool_name(tool_use):
                    env.step({"tool": str(tool_use.get("name", "")), "arguments": _arguments(tool_use)})

        agent.hooks.add_callback(BeforeToolCallEvent, unknown_tool)
        agent.hooks.add_callback(MessageAddedEvent, unnamable_tool)
        try:
            result = await agent.invoke_async(opening["prompt"], limits={"turns": self.max_cycles})
        except Exception as error:  # strands wraps a later cycle's error in EventLoopException: see the chain
            answered = any(message.get("role") == "assistant" for message in agent.messages)
            fault = classify(error, after_model_turn=answered)
            if fault is None:
                raise  # not a provider error: the runner stores it as an internal error of this episode
            if not fault.model_fault:
                raise InfrastructureError(fault.kind, fault.reason) from None
            return _report(agent, latencies, "", model_fault=fault.reason)
        answer = str(result)[:4000]
        empty = result.stop_reason == "end_turn" and not answer.strip()
        return _report(agent, latencies, answer, model_fault="the model's final answer was empty" if empty else "")


def _arguments(tool_use: Any) -> Any:
    """What the model sent as a call's arguments: a dict (HTML-unescaped), or the raw text if it was not JSON."""
    arguments = tool_use.get("input") or {}
    if isinstance(arguments, dict) and set(arguments) == {RAW_ARGUMENTS}:
        return str(arguments[RAW_ARGUMENTS])
    return unescape_html(arguments)


def _valid_tool_name(tool_use: Any) -> bool:
    from strands.tools.tools import InvalidToolUseNameException, validate_tool_use_name

    try:
        validate_tool_use_name(tool_use)
    except InvalidToolUseNameException:
        return False
    return True


MAX_MESSAGE_DEPTH = 100  # the record's validation stops far deeper; a model's 900-deep tool call does not


def _storable(message: Any) -> Any:
    """``message`` as JSON values; one nested deeper than :data:`MAX_MESSAGE_DEPTH` (a model's pathological tool
    call) is kept whole as JSON text instead, so the episode can be stored."""
    try:
        text = json.dumps(message, default=str)
        if text.count("[") + text.count("{") <= MAX_MESSAGE_DEPTH or _depth(json.loads(text)) <= MAX_MESSAGE_DEPTH:
            return json.loads(text)
    except (ValueError, RecursionError):
        text = repr(message)
    return {"role": str(message.get("role", "")), "too_deep_json": text}


def _depth(value: Any) -> int:
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, depth = todo.pop()
        deepest = max(deepest, depth)
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        todo.extend((child, depth + 1) for child in children)
    return deepest


def _report(agent: Any, latencies: list[float], answer: str, model_fault: str) -> AgentReport:
    usage = agent.event_loop_metrics.accumulated_usage
    messages = [_storable(message) for message in agent.messages]
    return AgentReport(
        usage=Usage(
            input_tokens=int(usage.get("inputTokens", 0)),
            output_tokens=int(usage.get("outputTokens", 0)),
            model_calls=int(agent.event_loop_metrics.cycle_count),
        ),
        messages=messages,
        step_latencies_s=latencies,
        final_answer=answer,
        model_fault=model_fault,
    )
