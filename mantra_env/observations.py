"""What the environment shows the agent after a tool call, as text: the one serializer of observations.

:class:`mantra_env.env.MantraEnv` answers each call with :func:`tool_observation`, and the training export
(``mantra_env.graders.export``) writes each ``tool`` message with the same function over the stored trace, so a model
trained on exported conversations reads exactly the bytes the env produces: ``{"result": ...}`` with the result as
compact JSON (no spaces, keys in the order the tool returned them), or ``{"error": {"code": ..., "message": ...}}``.
"""

from __future__ import annotations

import json
from typing import Any

import pydantic_core

from mantra_env.limits import bounded
from mantra_env.trace import ToolCall, ToolError

RESULT_PREFIX = '{"result": '
"""What precedes a result's JSON text in its observation (the env's bytes since v0: one space after the colon)."""


def result_json(value: Any) -> str:
    """``value`` (JSON values, pydantic models, tuples, dates...) as compact JSON text, keys in their order.

    Raises:
        pydantic_core.PydanticSerializationError: a value with no JSON form (an object, a circular value).
    """
    return pydantic_core.to_json(value).decode("utf-8")


def safe_text(text: str) -> str:
    """``text`` with lone surrogates escaped (``\\ud800``), so that it can be stored and sent as UTF-8."""
    return text if text.isascii() else text.encode("utf-8", "backslashreplace").decode("utf-8")


def error_observation(error: ToolError, room: int) -> str:
    """``{"error": ...}`` as valid UTF-8 (a message may quote a lone surrogate the agent sent: escaped) of at most
    about ``room`` bytes (a message quoting megabytes of the action is cut; the trace keeps it)."""
    text = safe_text(json.dumps({"error": error.model_dump()}, ensure_ascii=False))
    if len(text) * 4 > room and len(text.encode("utf-8")) > room:  # a character is at most 4 bytes of UTF-8
        cut = {"code": error.code, "message": bounded(error.message, room // 8)}  # <= 6 bytes per character
        text = safe_text(json.dumps({"error": cut}, ensure_ascii=False))
    return text


def tool_observation(call: ToolCall, room: int, result_text: str | None = None) -> str:
    """The observation of ``call``: ``{"result": ...}`` (``result_text``, the result's :func:`result_json`, when
    the caller has it already) or :func:`error_observation` within ``room`` bytes (the env's observation size)."""
    if call.error is not None:
        return error_observation(call.error, room)
    return RESULT_PREFIX + (result_json(call.result) if result_text is None else result_text) + "}"
