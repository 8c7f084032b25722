"""The LLM client: structured-output requests, the syntactic repair loop, retries, the disk cache, accounting,
the replay provider and the recorder."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from mantra_env.generators.config import GenerationConfig, parse_config
from mantra_env.generators.llm import AnswerCheck, GenerationError, LLMClient, RepairNeeded, extract_json
from mantra_env.generators.replay import PROVIDER, load_fixture


class Answer(BaseModel):
    tools: list[str]


def _config(tmp_path: Path, responses: dict[str, Any], extra: str = "") -> GenerationConfig:
    fixture = tmp_path / "responses.yaml"
    fixture.write_text(json.dumps({"responses": responses}))  # JSON is YAML
    text = f"""
document_path: manual.md
domain: operations
llm:
  default_model: replay/test
  judge_model: replay/test
  replay: {{path: {fixture}}}
  retry: {{max_attempts: 3, base_delay_s: 0, max_repair_attempts: 2}}
{extra}
"""
    return parse_config(text, "test config", tmp_path)


def _ask(client: LLMClient, check: AnswerCheck[Answer] | None = None, subject: str = "s0") -> Answer:
    messages = [{"role": "system", "content": "Pick tools."}, {"role": "user", "content": "manual"}]
    return asyncio.run(client.generate("tool_relevance", subject, messages, check or Answer))


class NoTeleport(AnswerCheck[Answer]):
    def output(self) -> type[Answer]:
        return Answer

    def check(self, value: Answer) -> Answer:
        if "teleport" in value.tools:
            raise RepairNeeded("- 'teleport' is not a tool")
        return value


def test_repair_loop_sends_the_problem_back_until_the_answer_fits(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        {
            "tool_relevance/s0#0": "Sure! Here are the tools.",  # no JSON at all
            "tool_relevance/s0#1": {"tools": "check_inventory"},  # wrong type
            "tool_relevance/s0#2": {"tools": ["check_inventory"]},
        },
    )
    client = LLMClient(config, tmp_path / "cache")
    PROVIDER.served.clear()
    assert _ask(client).tools == ["check_inventory"]
    assert PROVIDER.served == ["tool_relevance/s0#0", "tool_relevance/s0#1", "tool_relevance/s0#2"]
    usage = client.usage["tool_relevance"]
    assert (usage.requests, usage.repairs, usage.cache_hits) == (3, 2, 0)


def test_check_failures_are_repaired_and_exhaustion_is_a_clear_error(tmp_path: Path) -> None:
    answers = {f"tool_relevance/s0#{n}": {"tools": ["teleport"]} for n in range(3)}
    client = LLMClient(_config(tmp_path, answers), None)
    with pytest.raises(GenerationError, match=r"tool_relevance for s0: no usable answer after 3 attempts.*teleport"):
        _ask(client, NoTeleport())


def test_repair_turns_carry_the_previous_answer_and_the_problem(tmp_path: Path, monkeypatch: Any) -> None:
    seen: list[list[dict[str, str]]] = []
    import litellm

    original = litellm.acompletion

    async def spy(**kwargs: Any) -> Any:
        seen.append(kwargs["messages"])
        return await original(**kwargs)

    monkeypatch.setattr(litellm, "acompletion", spy)
    config = _config(tmp_path, {"tool_relevance/s0#0": "{oops", "tool_relevance/s0#1": {"tools": ["a"]}})
    _ask(LLMClient(config, None))
    assert len(seen) == 2 and len(seen[1]) == len(seen[0]) + 2
    assert seen[1][-2] == {"role": "assistant", "content": "{oops"}
    assert "could not be used" in seen[1][-1]["content"] and "JSON" in seen[1][-1]["content"]
    assert '"tools"' in seen[0][0]["content"]  # the schema is in the system prompt


def test_cache_hits_repeat_no_request(tmp_path: Path) -> None:
    config = _config(tmp_path, {"tool_relevance/s0#0": {"tools": ["x"]}})
    PROVIDER.served.clear()
    first = LLMClient(config, tmp_path / "cache")
    _ask(first)
    second = LLMClient(config, tmp_path / "cache")
    assert _ask(second).tools == ["x"]
    assert PROVIDER.served == ["tool_relevance/s0#0"]
    assert second.usage["tool_relevance"].cache_hits == 1 and second.usage["tool_relevance"].requests == 0
    entry = json.loads(next((tmp_path / "cache").rglob("*.json")).read_text())
    assert entry["key"] == "tool_relevance/s0#0" and "api_key" not in json.dumps(entry["request"])


def test_transient_provider_failures_are_retried(tmp_path: Path, monkeypatch: Any) -> None:
    import litellm
    from litellm.exceptions import RateLimitError

    calls = {"n": 0}
    original = litellm.acompletion

    async def flaky(**kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] < 3:
            raise RateLimitError("slow down", llm_provider="replay", model="replay/test")
        return await original(**kwargs)

    monkeypatch.setattr(litellm, "acompletion", flaky)
    client = LLMClient(_config(tmp_path, {"tool_relevance/s0#0": {"tools": ["x"]}}), None)
    assert _ask(client).tools == ["x"]
    assert client.usage["tool_relevance"].provider_retries == 2


def test_persistent_provider_failure_is_a_generation_error(tmp_path: Path, monkeypatch: Any) -> None:
    import litellm
    from litellm.exceptions import Timeout

    async def down(**kwargs: Any) -> Any:
        raise Timeout("no answer", model="replay/test", llm_provider="replay")

    monkeypatch.setattr(litellm, "acompletion", down)
    client = LLMClient(_config(tmp_path, {}), None)
    with pytest.raises(GenerationError, match=r"tool_relevance/s0#0: the provider failed 3 times; last error: Timeout"):
        _ask(client)


def test_missing_recording_names_the_key(tmp_path: Path) -> None:
    client = LLMClient(_config(tmp_path, {"tool_relevance/s0#0": {"tools": ["x"]}}), None)
    with pytest.raises(GenerationError, match=r"no recorded response for request 'tool_relevance/s9#0'"):
        _ask(client, subject="s9")


def test_structured_output_modes(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        {},
        """  stage_overrides:
    tool_relevance: {model: openai/gpt-4o-mini}
    scenario_generation: {model: local}
    check_generation: {provider: ollama, model: "qwen3:8b"}""",
    )
    client = LLMClient(config, None)
    messages = [{"role": "system", "content": "x"}]
    schema = Answer.model_json_schema()
    openai = client._request(client.resolve("tool_relevance"), messages, Answer)
    assert openai["response_format"] == {"type": "json_schema", "json_schema": {"name": "Answer", "schema": schema}}
    local = client.resolve("scenario_generation")
    assert local.local_server and local.structured == "llama_grammar"
    assert client._request(local, messages, Answer)["response_format"] == {"type": "json_object", "schema": schema}
    ollama = client.resolve("check_generation")
    assert ollama.model == "ollama_chat/qwen3:8b" and ollama.structured == "none"
    assert "response_format" not in client._request(ollama, messages, Answer)
    assert client.resolve("backward_audit").model == "replay/test"


def test_codex_provider_is_refused_with_a_hint(tmp_path: Path) -> None:
    config = _config(tmp_path, {}, "  stage_overrides:\n    tool_relevance: {provider: codex, model: gpt-5.4}")
    with pytest.raises(GenerationError, match=r"provider 'codex'.*use provider: openai"):
        LLMClient(config, None).resolve("tool_relevance")


def test_recorder_round_trip(tmp_path: Path) -> None:
    recording = tmp_path / "recorded.jsonl"
    fixture = tmp_path / "responses.yaml"
    fixture.write_text(json.dumps({"responses": {"tool_relevance/s0#0": {"tools": ["x"]}}}))
    config = parse_config(
        f"document_path: m.md\ndomain: operations\nllm:\n  default_model: replay/t\n"
        f"  replay: {{path: {fixture}, record_to: {recording}}}\n",
        "cfg",
        tmp_path,
    )
    _ask(LLMClient(config, None))
    assert load_fixture(recording) == {"tool_relevance/s0#0": '{"tools": ["x"]}'}
    assert json.loads(recording.read_text())["role"] == "relevance"  # the writer's role, for the record


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', '{"a": 1}'),
        ('Here:\n```json\n{"a": 1}\n```\nDone.', '{"a": 1}'),
        ('The answer is {"a": {"b": 2}} as asked', '{"a": {"b": 2}}'),
    ],
)
def test_extract_json(text: str, expected: str) -> None:
    assert extract_json(text) == expected


def test_extract_json_without_an_object() -> None:
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json("nothing here")


def test_local_server_answers_are_html_unescaped(tmp_path: Path, monkeypatch: Any) -> None:
    import litellm

    async def escaped(**kwargs: Any) -> Any:
        assert kwargs["response_format"]["type"] == "json_object"  # the grammar-constrained mode
        content = '{"tools": ["say &#34;hi&#34;", "a &amp; b"]}'
        return litellm.ModelResponse(choices=[{"message": {"role": "assistant", "content": content}}])

    monkeypatch.setattr(litellm, "acompletion", escaped)
    config = _config(tmp_path, {}, "  stage_overrides:\n    tool_relevance: {model: local}")
    assert _ask(LLMClient(config, None)).tools == ['say "hi"', "a & b"]


@pytest.mark.parametrize("declared", [False, True])
def test_a_recording_names_the_declared_model_only_with_the_key_on(tmp_path: Path, declared: bool) -> None:
    recording = tmp_path / "recorded.jsonl"
    config = _config(tmp_path, {"tool_relevance/s0#0": {"tools": ["x"]}})
    replay = config.llm.replay.model_copy(update={"record_to": recording, "record_model": declared})
    config = config.model_copy(update={"llm": config.llm.model_copy(update={"replay": replay})})
    _ask(LLMClient(config, None))
    (line,) = [json.loads(text) for text in recording.read_text().splitlines()]
    assert line["role"] == "relevance"
    assert line.get("model") == ("replay/test" if declared else None)
    assert load_fixture(recording) == {"tool_relevance/s0#0": '{"tools": ["x"]}'}  # read as before
