"""Retail-like tool specs with list parameters, shared by the list tests and the corpus's ``lists`` tool set."""

from __future__ import annotations

from typing import Any, Literal

from mantra_env.tools import ToolSpec

IDS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
ORDERED_IDS: dict[str, Any] = {**IDS, "x-ordered": True}  # paired position by position with another list
PAYMENTS: dict[str, Any] = {
    "type": "array",
    "items": {"type": "object", "properties": {"payment_id": {"type": "string"}, "amount": {"type": "number"}}},
}


def list_tool(
    name: str, kind: Literal["read", "write"] = "write", optional: tuple[str, ...] = (), **properties: dict[str, Any]
) -> ToolSpec:
    """A tool whose parameters are all required except ``optional``."""
    required = sorted(set(properties) - set(optional))
    return ToolSpec(name=name, kind=kind, parameters={"type": "object", "properties": properties, "required": required})
