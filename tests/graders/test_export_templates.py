"""Every exported record renders through real chat templates (Qwen2.5, Qwen3, Llama 3.1: tests/chat_templates.py),
with each tool call's arguments coming out as the JSON object the model should write (issue 35 item 2)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from mantra_env.domains import find_suite
from mantra_env.graders.export import ExportRecord, export_records
from mantra_env.limits import MAX_RESULT_BYTES
from mantra_env.observations import tool_observation
from tests import chat_templates
from tests.chat_templates import TEMPLATES, render
from tests.graders.test_export import SUITE, _model_db, _oracle_episode

_QWEN_CALL = re.compile(r"<tool_call>\n(.*?)\n</tool_call>", re.DOTALL)
_LLAMA_TURN = re.compile(r"<\|start_header_id\|>assistant<\|end_header_id\|>\n\n(.*?)<\|eot_id\|>", re.DOTALL)


def _single_call_history(prompt: str, calls: list[Any], answer: str) -> list[Any]:
    """A strands agent's stored history with one call per assistant turn (Llama 3.1's template allows no more)."""
    history: list[Any] = [{"role": "user", "content": [{"text": prompt}]}]
    for call in calls:
        use = {"toolUse": {"toolUseId": f"tooluse_{call.step}", "name": call.tool, "input": call.args}}
        history.append({"role": "assistant", "content": [use]})  # no text beside the call
        text = tool_observation(call, MAX_RESULT_BYTES)  # what the strands agent's tool returns: the observation
        result = {"toolUseId": f"tooluse_{call.step}", "status": "success", "content": [{"text": text}]}
        history.append({"role": "user", "content": [{"toolResult": result}]})
    history.append({"role": "assistant", "content": [{"text": answer}]})
    return history


@pytest.fixture(scope="module")
def exported(scripted_db: Path, tmp_path_factory: pytest.TempPathFactory) -> list[ExportRecord]:
    """A shipped suite's export: the oracle's demonstrations, and a model's episode from its own messages."""
    case_id, played = _oracle_episode()
    prompt = find_suite(SUITE)[1].case(case_id).scenario.prompt
    db = tmp_path_factory.mktemp("model") / "m.duckdb"
    _model_db(db, messages=_single_call_history(prompt, list(played["trace"].calls), "All set."))
    model = list(export_records(db))
    assert [record.messages_source for record in model] == ["model"]
    return [*export_records(scripted_db, include_oracle=True), *model]


def _rendered_calls(template: str, text: str) -> list[Any]:
    """The tool calls in a rendered conversation, as ``{"name", "arguments"}`` read back as JSON."""
    if template.startswith("qwen"):
        turns = text.split("<|im_end|>", 1)[1]  # after the system turn, whose instructions show a call's shape
        return [json.loads(body) for body in _QWEN_CALL.findall(turns)]
    calls = [json.loads(body) for body in _LLAMA_TURN.findall(text) if body.startswith('{"name"')]
    return [{"name": call["name"], "arguments": call["parameters"]} for call in calls]


@pytest.mark.parametrize("template", TEMPLATES)
def test_every_exported_record_renders_with_its_arguments_as_objects(
    template: str, exported: list[ExportRecord]
) -> None:
    assert len(exported) > 10
    for record in exported:
        text = render(template, record.messages, record.tools)  # raises on a template's refusal or a crash
        calls = [call["function"] for m in record.messages for call in m.get("tool_calls") or []]  # type: ignore[union-attr]
        expected = [{"name": call["name"], "arguments": call["arguments"]} for call in calls]  # type: ignore[index,call-overload]
        assert _rendered_calls(template, text) == expected, record.case_id
        assert all(isinstance(call["arguments"], dict) for call in expected)
        assert str(record.messages[-1]["content"]).strip() in text
        if template.startswith("qwen"):  # Llama 3.1's template JSON-quotes every tool message (as Meta ships it)
            for message in record.messages:
                if message["role"] == "tool":
                    assert f"<tool_response>\n{message['content']}\n</tool_response>" in text


def test_json_text_arguments_are_the_openai_convention_that_qwen25_double_encodes(scripted_db: Path) -> None:
    """Why objects are the default: Qwen2.5's template writes ``arguments`` with ``tojson``, so JSON text comes out
    as a quoted string; Qwen3's writes a string as is."""
    record = next(iter(export_records(scripted_db, include_oracle=True, arguments="json-text")))
    (call, *_) = _rendered_calls("qwen2.5", render("qwen2.5", record.messages, record.tools))
    assert isinstance(call["arguments"], str) and isinstance(json.loads(call["arguments"]), dict)
    (call, *_) = _rendered_calls("qwen3", render("qwen3", record.messages, record.tools))
    assert isinstance(call["arguments"], dict)


def test_a_missing_template_archive_fails_under_make_test_and_skips_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chat_templates, "CACHE", tmp_path)
    chat_templates._templates.cache_clear()
    monkeypatch.setenv("MANTRA_REQUIRE_TEMPLATES", "1")
    with pytest.raises(pytest.fail.Exception, match="run `make templates`"):
        chat_templates.template_text("qwen3")
    monkeypatch.delenv("MANTRA_REQUIRE_TEMPLATES")
    with pytest.raises(pytest.skip.Exception, match="run `make templates`"):
        chat_templates.template_text("qwen3")
