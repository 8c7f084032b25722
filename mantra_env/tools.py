"""Tool specifications: the JSON-schema view of a domain's tools that agents, checks and world models see.

A :class:`ToolSpec` is derived from the tool's Python signature and docstring (see the domain toolkit), never
written by hand. ``parameters`` is a JSON Schema object: ``{"type": "object", "properties": {...},
"required": [...], "additionalProperties": false}``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from mantra_env.errors import did_you_mean
from mantra_env.trace import ToolKind

_NO_PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {},
    "required": [],
    "additionalProperties": False,
}


class ToolSpec(BaseModel):
    """One tool as the agent sees it: name, description, read/write kind and JSON-schema parameters."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    description: str = ""
    kind: ToolKind
    parameters: dict[str, JsonValue] = Field(default_factory=lambda: dict(_NO_PARAMETERS))

    @property
    def properties(self) -> dict[str, Any]:
        props = self.parameters.get("properties", {})
        return props if isinstance(props, dict) else {}

    @property
    def required(self) -> list[str]:
        required = self.parameters.get("required", [])
        return [str(name) for name in required] if isinstance(required, list) else []

    def param_schema(self, name: str) -> dict[str, Any] | None:
        """The JSON schema of parameter ``name``, or None if the tool has no such parameter."""
        schema = self.properties.get(name)
        return schema if isinstance(schema, dict) else None

    def openai_schema(self) -> dict[str, Any]:
        """The tool in OpenAI function-calling format (what litellm sends)."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


def call_problem(tool: str, arguments: Iterable[str], specs: Mapping[str, ToolSpec]) -> str | None:
    """Why a call of ``tool`` with these argument names cannot be made with ``specs`` (None if it can)."""
    spec = specs.get(tool)
    if spec is None:
        hint = did_you_mean(tool, specs)
        return f"calls {tool}, which is not a tool{'; ' + hint if hint else ''}"
    unknown = sorted(set(arguments) - set(spec.properties))
    if unknown:
        return (
            f"pins {', '.join(unknown)}, which {tool} does not take; "
            f"its parameters are: {', '.join(spec.properties) or '(none)'}"
        )
    return None
