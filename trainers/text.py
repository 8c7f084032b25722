"""The text protocol between a chat model and a MANTRA case, for trainers that exchange plain text.

A trainer without native tool calling (SkyRL-gym's text envs, a TRL rollout over a chat template) gives the model
the case as messages and hands the env the model's reply as one string. The system message holds the manual and
the tools, and asks for one call per reply in the Hermes convention that Qwen, Llama 3 and most open chat
templates emit: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``. A reply with no tool call is the
final answer. Observations go back to the model as ``tool``-free user messages (any chat template renders them).
"""

from __future__ import annotations

import json
import re
from typing import Any

from mantra_env.tools import ToolSpec

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)

INSTRUCTIONS = """\
You are the agent described by the manual below. Follow it exactly: it decides which tools you may call, in
which order, and when you must refuse or escalate. Act only through the tools.

To call a tool, reply with exactly one call and nothing after it:
<tool_call>{"name": "TOOL_NAME", "arguments": {...}}</tool_call>
The tool's result comes back in the next message. When you are done, reply with your final answer to the
request and no tool call.

# Tools (JSON schemas)
"""


def system_message(manual: str, tools: list[ToolSpec] | list[dict[str, Any]]) -> str:
    """The system message: how to act, the tools' schemas, then the manual."""
    schemas = [tool.openai_schema()["function"] if isinstance(tool, ToolSpec) else tool for tool in tools]
    listed = "\n".join(json.dumps(schema, ensure_ascii=False) for schema in schemas)
    return f"{INSTRUCTIONS}{listed}\n\n# Manual\n{manual}"


def opening_messages(opening: str) -> list[dict[str, str]]:
    """The chat messages of an episode's opening observation (``{"system", "prompt", "tools"}`` as JSON)."""
    data = json.loads(opening)
    return [
        {"role": "system", "content": system_message(data["system"], data["tools"])},
        {"role": "user", "content": data["prompt"]},
    ]


def action_from_reply(reply: str) -> dict[str, Any] | str:
    """The env action a model's reply means: a tool call (the first ``<tool_call>`` block, or a reply that is
    itself an action object), else the final answer. A malformed call is passed on as text, so the env records
    it as the structured error ``unparseable_action`` and the model sees that error."""
    match = _TOOL_CALL.search(reply)
    if match is None:
        stripped = reply.strip()
        if stripped.startswith("{"):
            try:
                data = json.loads(stripped)
            except json.JSONDecodeError:
                data = None
            if isinstance(data, dict) and ("tool" in data or "final_answer" in data):
                return data
        return {"final_answer": reply.strip()}
    body = match.group(1)
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        return body  # the env answers unparseable_action
    if isinstance(data, dict) and isinstance(data.get("name"), str):
        return {"tool": data["name"], "arguments": data.get("arguments", {})}
    return body if not isinstance(data, dict) else data


def reply_for_call(tool: str, arguments: dict[str, Any]) -> str:
    """The reply text of one tool call in this protocol (what a demonstration or a stub model writes)."""
    return "<tool_call>" + json.dumps({"name": tool, "arguments": arguments}, ensure_ascii=False) + "</tool_call>"
