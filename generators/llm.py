"""One LLM client for every generation stage, over litellm.

``LLMClient.generate(stage, subject, messages, answer)`` returns the validated answer that ``answer`` (an
:class:`AnswerCheck`: the output type and the stage's check, rebuildable from its fields) accepts:

* **Structured output.** The JSON schema of ``output`` is in the prompt, and is also sent as
  ``response_format`` where the provider supports it (``json_schema``), or as llama.cpp's grammar-constrained
  ``{"type": "json_object", "schema": ...}`` for the bundled local server (``llama_grammar``).
* **Syntactic repair loop** (paper App. "Syntactic Error Repair Loop"): an answer that is not JSON, does not fit
  the schema, or fails the caller's ``check`` (e.g. a world model that does not type-check; the check raises
  :class:`RepairNeeded` with the diagnostics and their spans) is sent back with the problem, up to
  ``retry.max_repair_attempts`` times.
* **Retries** with exponential backoff on provider failures (429, time-outs, refused connections, 5xx).
* **Disk cache** keyed by the full request (model, messages, parameters, response format): a resumed run
  repeats no request. **Accounting** of requests, cache hits, tokens and cost per stage.
* **Request keys.** Every request also carries a readable key ``<stage>/<subject>#<attempt>``, which the replay
  provider (:mod:`mantra_env.generators.replay`) serves recorded responses by, and the recorder writes them under (with
  the writer's role).
* **Exchange.** A model named ``exchange/<dir>`` is a folder of request and answer files
  (:mod:`mantra_env.generators.exchange`); it needs the role, the schema and the answer check, which a completion
  request does not carry, so the client reads it directly instead of through litellm. A missing answer raises
  :class:`~mantra_env.generators.exchange.AnswerPending`, which is no ``GenerationError``: no stage stores it as a
  failure.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch the price list at import

from mantra_env.agents.local_server import unescape_html
from mantra_env.agents.models import ModelConfig, ModelConfigError, resolve_model
from mantra_env.agents.provider_errors import retryable
from mantra_env.errors import MantraError, error_path
from mantra_env.generators.config import GenerationConfig, StageModel, StructuredOutput
from mantra_env.generators.exchange import EXCHANGE_PROVIDER, ExchangeDir, role_of
from mantra_env.generators.replay import REPLAY_PROVIDER, Recorder, ReplayMissing, install_replay
from mantra_env.generators.rundir import write_text

A = TypeVar("A", bound=BaseModel)
log = logging.getLogger("mantra.generators.llm")
KEY_FIELD = "mantra_request_key"


class GenerationError(MantraError, RuntimeError):
    """A stage could not get a usable answer (the provider kept failing, or repairs ran out)."""


class RepairNeeded(MantraError, ValueError):
    """Raised by an output check: the message (with spans) goes back to the model in the repair loop."""

    @classmethod
    def listing(cls, problems: Sequence[str]) -> RepairNeeded:
        """The problems of one answer, one ``- problem`` line each."""
        return cls("\n".join(f"- {problem}" for problem in problems))


class AnswerCheck(BaseModel, Generic[A]):
    """What a stage's answer must be: its type and the stage's check, rebuilt from this model's fields alone (a
    request file stores them as its ``context``; :mod:`mantra_env.generators.answers` maps each stage to its class), so
    the pipeline and ``mantra exchange check`` run one and the same check."""

    model_config = ConfigDict(frozen=True)

    def output(self) -> type[A]:
        raise NotImplementedError

    def check(self, value: A) -> A:
        """The answer as accepted; raises :class:`RepairNeeded` with every problem at once."""
        return value

    def statement(self) -> str:
        """What the pipeline rejects, in plain words (for the writer of an exchange answer)."""
        return "one JSON object that fits the schema"


class Plain(AnswerCheck[A]):
    """An answer checked by its schema only (tests, ad-hoc requests); cannot be rebuilt from a request file."""

    kind: Any = Field(exclude=True)

    def output(self) -> type[A]:
        return self.kind  # type: ignore[no-any-return]


def accept(answer: AnswerCheck[A], text: str, html_escaped: bool = False) -> tuple[A | None, str]:
    """The accepted answer in ``text`` and "", or None and the problem as the repair loop sends it back."""
    output = answer.output()
    try:
        if html_escaped:  # the llama.cpp server HTML-escapes quotes inside strings
            value = output.model_validate(unescape_html(json.loads(extract_json(text))))
        else:
            value = output.model_validate_json(extract_json(text))
        return answer.check(value), ""
    except (ValidationError, ValueError, RepairNeeded) as error:
        return None, _problem(error)


@dataclass
class StageUsage:
    """What one stage cost."""

    requests: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    repairs: int = 0
    provider_retries: int = 0

    def add(self, other: StageUsage) -> None:
        for name in vars(self):
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class Resolved:
    """A stage's model as litellm calls it."""

    model: str
    kwargs: dict[str, Any]
    structured: StructuredOutput
    local_server: bool = False


@dataclass
class LLMClient:
    """The client of one pipeline run. ``cache_dir`` None disables the cache."""

    config: GenerationConfig
    cache_dir: Path | None = None
    local_api_base: str | None = None
    exchange_base: Path = Path(".")
    """What ``exchange/<dir>`` is relative to (the run directory)."""
    usage: dict[str, StageUsage] = field(default_factory=dict)
    _resolved: dict[str, Resolved] = field(default_factory=dict)
    _recorder: Recorder | None = None

    def __post_init__(self) -> None:
        import litellm

        litellm.suppress_debug_info = True  # no "Provider List" banners on stdout for models it cannot price
        replay = self.config.llm.replay
        install_replay(replay.path)
        if replay.record_to is not None:
            self._recorder = Recorder(replay.record_to)

    # --- models ----------------------------------------------------------------------------------------------

    def resolve(self, stage: str) -> Resolved:
        """How ``stage`` reaches its model (cached per stage)."""
        if stage not in self._resolved:
            self._resolved[stage] = self._resolve(stage, self.config.stage_model(stage))
        return self._resolved[stage]

    def _resolve(self, stage: str, settings: StageModel) -> Resolved:
        name = settings.model or "role:generator"
        alias: ModelConfig | None = None
        if settings.provider and "/" not in name and not name.startswith("role:"):
            name = _with_provider(settings.provider, name)
        if not name.startswith((f"{REPLAY_PROVIDER}/", f"{EXCHANGE_PROVIDER}/")):
            try:
                alias = resolve_model(name)
            except ModelConfigError as error:
                raise GenerationError(f"stage {stage}: {error}") from None
            name = alias.model
        llm = self.config.llm
        kwargs: dict[str, Any] = {**(alias.params if alias else {}), **settings.params}
        api_base = settings.api_base or (alias.api_base if alias else None)
        if alias is not None and alias.local_server:
            api_base = self.local_api_base or api_base
        if api_base is None and name.startswith("ollama") and llm.ollama_base_url:
            api_base = llm.ollama_base_url
        if api_base:
            kwargs["api_base"] = api_base
        api_key = settings.api_key or (alias.api_key if alias else None) or _provider_key(name, llm)
        if api_key:
            kwargs["api_key"] = api_key
        elif alias is not None and alias.local_server:
            kwargs["api_key"] = "sk-local"
        structured = settings.structured_output or "auto"
        if structured == "auto":
            structured = _auto_structured(name, alias)
        return Resolved(name, kwargs, structured, bool(alias and alias.local_server))

    def record_to(self, path: Path) -> None:
        """Record every answer from now on to ``path`` (JSONL replay fixture), unless a recorder is set."""
        if self._recorder is None:
            self._recorder = Recorder(path)

    def exchange(self, stage: str) -> ExchangeDir | None:
        """The exchange folder of ``stage``'s model, if it is ``exchange/<dir>``."""
        name = self.resolve(stage).model
        if not name.startswith(f"{EXCHANGE_PROVIDER}/"):
            return None
        return ExchangeDir(self.exchange_base / name.removeprefix(f"{EXCHANGE_PROVIDER}/"))

    def needs_local_server(self, stages: list[str]) -> bool:
        """Whether any of ``stages`` uses the bundled local model (whose server the caller starts)."""
        return any(self.resolve(stage).local_server for stage in stages)

    def use_local_server(self, api_base: str) -> None:
        """Send the bundled model's requests to the server at ``api_base`` (started by the caller)."""
        self.local_api_base = api_base
        self._resolved.clear()

    # --- requests --------------------------------------------------------------------------------------------

    async def generate(
        self, stage: str, subject: str, messages: list[dict[str, str]], answer: AnswerCheck[A] | type[A]
    ) -> A:
        """The answer ``answer`` accepts for ``messages`` (a bare type: checked by its schema only); the repair loop
        and retries as the module says.

        Raises:
            GenerationError: the provider kept failing, or the answer was unusable after every repair.
            AnswerPending: an exchange model has not answered yet.
        """
        spec: AnswerCheck[A] = answer if isinstance(answer, AnswerCheck) else Plain(kind=answer)
        output = spec.output()
        resolved = self.resolve(stage)
        usage = self.usage.setdefault(stage, StageUsage())
        conversation = [_with_schema(messages, output)]
        problem = ""
        for attempt in range(self.config.llm.retry.max_repair_attempts + 1):
            key = f"{stage}/{subject}#{attempt}"
            text = await self._complete(resolved, conversation[-1], key, spec, usage)
            value, problem = accept(spec, text, html_escaped=resolved.local_server)
            if value is not None:
                return value
            log.info("%s: attempt %d unusable: %s", key, attempt, problem.splitlines()[0] if problem else "")
            usage.repairs += 1
            conversation.append(
                [
                    *conversation[-1],
                    {"role": "assistant", "content": text},
                    {"role": "user", "content": _REPAIR.format(problem=problem)},
                ]
            )
        raise GenerationError(
            f"{stage} for {subject}: no usable answer after {self.config.llm.retry.max_repair_attempts + 1} "
            f"attempts; last problem: {problem}"
        )

    async def _complete(
        self, resolved: Resolved, messages: list[dict[str, str]], key: str, spec: AnswerCheck[Any], usage: StageUsage
    ) -> str:
        output = spec.output()
        request = self._request(resolved, messages, output)
        digest = hashlib.sha256(json.dumps(request, sort_keys=True, default=str).encode()).hexdigest()
        cached = self._cache_read(digest)
        if cached is not None:
            usage.cache_hits += 1
            return cached
        stage = key.split("/", 1)[0]
        folder = self.exchange(stage)
        if folder is not None:
            final = key.endswith(f"#{self.config.llm.retry.max_repair_attempts}")
            text = folder.ask(_exchange_request(key, stage, messages, output, spec, final))
            tokens_in = tokens_out = 0
            cost = 0.0
        else:
            text, tokens_in, tokens_out, cost = await self._call(request, resolved.kwargs.get("api_key"), key, usage)
        usage.requests += 1
        usage.input_tokens += tokens_in
        usage.output_tokens += tokens_out
        usage.cost_usd += cost
        if self._recorder is not None:  # before the cache: a kill in between records twice, never not at all
            model = resolved.model if self.config.llm.replay.record_model else None
            self._recorder.record(key, text, role_of(stage), model)
        self._cache_write(digest, request, key, text)
        return text

    def _request(self, resolved: Resolved, messages: list[dict[str, str]], output: type[BaseModel]) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": resolved.model,
            "messages": messages,
            "temperature": 0.0,
            **{k: v for k, v in resolved.kwargs.items() if k != "api_key"},
        }
        schema = output.model_json_schema()
        if resolved.structured == "json_schema":
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": output.__name__, "schema": schema},
            }
        elif resolved.structured == "llama_grammar":
            request["response_format"] = {"type": "json_object", "schema": schema}
        return request

    async def _call(
        self, request: dict[str, Any], api_key: str | None, key: str, usage: StageUsage
    ) -> tuple[str, int, int, float]:
        import litellm

        retry = self.config.llm.retry
        secrets = {"api_key": api_key} if api_key else {}  # kept out of the request, hence out of the cache key
        last = ""
        for trial in range(retry.max_attempts):
            try:
                response = await litellm.acompletion(
                    **request,
                    **secrets,
                    timeout=self.config.llm.request_timeout_s,
                    num_retries=0,
                    metadata={KEY_FIELD: key},
                )
            except ReplayMissing as error:
                raise GenerationError(str(error)) from None
            except Exception as error:  # provider failures surface as litellm exceptions
                if not retryable(error):
                    raise GenerationError(f"{key}: the provider refused the request: {error}") from None
                last = f"{type(error).__name__}: {error}"
                usage.provider_retries += 1
                if trial + 1 < retry.max_attempts:
                    await asyncio.sleep(retry.base_delay_s * 2**trial)
                continue
            text = response.choices[0].message.content or ""
            tool_calls = getattr(response.choices[0].message, "tool_calls", None)
            if not text and tool_calls:  # some servers answer a JSON request as a function call
                text = tool_calls[0].function.arguments or ""
            tokens = getattr(response, "usage", None)
            cost = 0.0
            try:
                cost = float(litellm.completion_cost(completion_response=response) or 0.0)
            except Exception:  # unknown price (local models, replay): no cost
                cost = 0.0
            return (
                str(text),
                int(getattr(tokens, "prompt_tokens", 0) or 0),
                int(getattr(tokens, "completion_tokens", 0) or 0),
                cost,
            )
        raise GenerationError(f"{key}: the provider failed {retry.max_attempts} times; last error: {last}")

    # --- cache -----------------------------------------------------------------------------------------------

    def _cache_path(self, digest: str) -> Path | None:
        if self.cache_dir is None or not self.config.llm.cache.enabled:
            return None
        return self.cache_dir / digest[:2] / f"{digest}.json"

    def _cache_read(self, digest: str) -> str | None:
        path = self._cache_path(digest)
        if path is None:
            return None
        try:
            return str(json.loads(path.read_text(encoding="utf-8"))["response"])
        except (OSError, ValueError, KeyError):
            return None

    def _cache_write(self, digest: str, request: dict[str, Any], key: str, text: str) -> None:
        path = self._cache_path(digest)
        if path is not None:  # written atomically: a killed run leaves no half-written entry
            write_text(path, json.dumps({"key": key, "request": request, "response": text}, default=str))


_REPAIR = (
    "Your answer could not be used:\n{problem}\n\n"
    "Reply again with the corrected answer: one JSON object that fits the schema, nothing else."
)


def _exchange_request(
    key: str,
    stage: str,
    messages: list[dict[str, str]],
    output: type[BaseModel],
    spec: AnswerCheck[Any],
    final: bool,
) -> dict[str, Any]:
    """What an exchange request file holds (see :mod:`mantra_env.generators.exchange`)."""
    subject, attempt = key.split("/", 1)[1].rsplit("#", 1)
    after = (
        "This is the last attempt: a rejected answer fails the request."
        if final
        else f"A rejected answer comes back as request {stage}/{subject}#{int(attempt) + 1} with the problems."
    )
    return {
        "key": key,
        "role": role_of(stage),
        "stage": stage,
        "subject": subject,
        "attempt": int(attempt),
        "answer_check": f"The pipeline rejects an answer that is not {spec.statement()}. {after}",
        "messages": messages,
        "schema": output.model_json_schema(),
        "context": spec.model_dump(mode="json"),
    }


def _with_schema(messages: list[dict[str, str]], output: type[BaseModel]) -> list[dict[str, str]]:
    schema = json.dumps(output.model_json_schema(), separators=(",", ":"))
    note = f"\n\nAnswer with one JSON object that fits this JSON schema, and nothing else:\n{schema}"
    first = messages[0]
    return [{**first, "content": first["content"] + note}, *messages[1:]]


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def extract_json(text: str) -> str:
    """The JSON object in an answer: the whole text, a fenced block, or the outermost ``{...}``."""
    stripped = text.strip()
    if stripped.startswith("{"):
        return stripped
    fenced = _FENCE.search(stripped)
    if fenced:
        return fenced.group(1).strip()
    start, end = stripped.find("{"), stripped.rfind("}")
    if start >= 0 and end > start:
        return stripped[start : end + 1]
    raise ValueError("the answer holds no JSON object")


def _problem(error: Exception) -> str:
    if isinstance(error, ValidationError):
        return "\n".join(f"- {error_path(item['loc'], '(root)')}: {item['msg']}" for item in error.errors()[:10])
    return str(error)


def _with_provider(provider: str, model: str) -> str:
    if provider == "codex":
        raise GenerationError(
            "provider 'codex' (the Codex CLI) is not reachable through litellm; use provider: openai with the same "
            "model, or any litellm model string"
        )
    return f"{'ollama_chat' if provider == 'ollama' else provider}/{model}"


def _provider_key(model: str, llm: Any) -> str | None:
    if model.startswith("openai/") and llm.openai_api_key:
        return str(llm.openai_api_key)
    if model.startswith("anthropic/") and llm.anthropic_api_key:
        return str(llm.anthropic_api_key)
    return None


def _auto_structured(model: str, alias: ModelConfig | None) -> StructuredOutput:
    if alias is not None and alias.local_server:
        return "llama_grammar"
    if model.startswith((f"{REPLAY_PROVIDER}/", f"{EXCHANGE_PROVIDER}/")):  # the schema is in the prompt
        return "none"
    try:
        import litellm

        return "json_schema" if litellm.supports_response_schema(model=model) else "none"
    except Exception:  # a model litellm does not know: rely on the prompt and the repair loop
        return "none"


def usage_report(usage: Mapping[str, StageUsage]) -> dict[str, dict[str, float]]:
    """Usage per stage as JSON-ready numbers, stages sorted."""
    return {stage: dict(vars(numbers)) for stage, numbers in sorted(usage.items())}


def usage_totals(usage: Mapping[str, StageUsage]) -> StageUsage:
    total = StageUsage()
    for stage in usage.values():
        total.add(stage)
    return total
