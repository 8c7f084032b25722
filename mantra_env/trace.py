"""Traces: the ordered tool calls an agent made in one episode, with their results."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from mantra_env.checks.ast import Call, NoCall
from mantra_env.checks.semantics import NO_RULES, ArgRules, TraceIndex

ToolKind = Literal["read", "write"]


class ToolError(BaseModel):
    """A structured tool error returned to the agent instead of raising."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    code: str = Field(description="Machine-readable error code, e.g. 'unknown_tool', 'invalid_arguments'.")
    message: str = Field(description="What went wrong and how to fix it, as shown to the agent.")


class ToolCall(BaseModel):
    """One step of a trace: the call the agent made and what came back.

    ``args`` is exactly what the agent sent when it was a JSON object (even if it failed validation);
    ``raw_arguments`` keeps the original text when it was not, in which case ``args`` is empty.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    step: int = Field(ge=0, description="0-based position in the trace.")
    tool: str
    args: dict[str, JsonValue] = Field(default_factory=dict)
    result: JsonValue = None
    error: ToolError | None = None
    kind: ToolKind | None = Field(default=None, description="read/write kind of the tool; None if unknown.")
    raw_arguments: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class Trace(BaseModel):
    """The ordered tool calls of one episode, and the agent's final answer if it gave one."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    calls: tuple[ToolCall, ...] = ()
    final_answer: str | None = None

    @model_validator(mode="after")
    def _steps_are_positions(self) -> Trace:
        for position, call in enumerate(self.calls):
            if call.step != position:
                raise ValueError(f"calls[{position}] has step {call.step}; steps must be 0, 1, 2, ... in order")
        return self

    @classmethod
    def of(cls, *calls: tuple[str, dict[str, Any]], final_answer: str | None = None) -> Trace:
        """Build a trace from ``(tool, args)`` pairs (handy in tests and scripted agents)."""
        return cls(
            calls=tuple(ToolCall(step=i, tool=tool, args=args) for i, (tool, args) in enumerate(calls)),
            final_answer=final_answer,
        )

    def index(self, atoms: Sequence[Call | NoCall] = (), rules: ArgRules = NO_RULES) -> TraceIndex:
        """The index the check semantics evaluates on; ``atoms`` are matched up front in one pass; ``rules``:
        what the tool schemas add to matching."""
        return TraceIndex(self.calls, atoms, rules, self.final_answer)

    def __len__(self) -> int:
        return len(self.calls)
