"""Stage ``tool_relevance``: the subset of the domain's tools that a sample's excerpt needs.

The answer's schema lists the tool names as an enum and asks for at least one, so constrained decoding (the
local llama.cpp server's grammar) can only produce real tool names; other providers are held to the same by the
repair loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from mantra_env.generators import prompts
from mantra_env.generators.artifacts import ToolRelevance
from mantra_env.generators.llm import AnswerCheck, LLMClient
from mantra_env.tools import ToolSpec


def answer_model(names: Sequence[str]) -> type[BaseModel]:
    """``ToolRelevance`` with ``tools`` restricted to ``names`` (at least one)."""
    choice = Literal[tuple(names)]  # type: ignore[valid-type]
    return create_model(
        "ToolRelevance",
        __config__=ConfigDict(extra="forbid"),
        tools=(list[choice], Field(min_length=1, description="Names of the tools the excerpt needs.")),  # type: ignore[valid-type]
        reason=(str, ""),
    )


class RelevanceCheck(AnswerCheck[BaseModel]):
    """Stage ``tool_relevance``: at least one tool, each a tool of the domain (the schema's enum)."""

    names: list[str]

    def output(self) -> type[BaseModel]:
        return answer_model(self.names)

    def statement(self) -> str:
        return "one JSON object fitting the schema, naming at least one tool, each one of the schema's enum"


async def relevant_tools(client: LLMClient, sample_id: str, excerpt: str, tools: Sequence[ToolSpec]) -> ToolRelevance:
    """The tools an agent needs for ``excerpt``, in the domain's tool order, without duplicates."""
    names = [spec.name for spec in tools]
    answer = await client.generate(
        "tool_relevance", sample_id, prompts.tool_relevance(excerpt, tools), RelevanceCheck(names=names)
    )
    data = answer.model_dump()
    return ToolRelevance(tools=[name for name in names if name in set(data["tools"])], reason=data["reason"])
