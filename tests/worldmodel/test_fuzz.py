"""Fuzzing: whatever text or JSON comes in, the DSL either accepts it or says why with a DslSyntaxError or
DslTypeError, never with another exception (RecursionError, IndexError, KeyError, AttributeError, ...).

What it accepts also survives the round trips: a parsed model prints back to itself, and a model from JSON that
type-checks prints to text that parses back to it.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mantra_env.tools import ToolSpec
from mantra_env.worldmodel import (
    DslSyntaxError,
    DslTypeError,
    WorldModel,
    check_model,
    format_expr,
    format_model,
    model_from_json,
    model_to_json,
    parse_expr,
    parse_model,
)
from tests.worldmodel.paper import PAPER_TOOLS
from tests.worldmodel.strategies import dsl_texts, json_values, mutated_json, mutated_texts

tool_sets = st.sampled_from([None, PAPER_TOOLS])


def _check(model: WorldModel, tools: list[ToolSpec] | None, source: str | None = None) -> bool:
    """Type-check; True if well-typed. The error message must render (it is built eagerly)."""
    try:
        check_model(model, tools, source=source)
    except DslTypeError as error:
        assert error.diagnostics and str(error)
        return False
    return True


def _text_pipeline(text: str, tools: list[ToolSpec] | None) -> None:
    try:
        model = parse_model(text)
    except DslSyntaxError as error:
        assert len(error.diagnostics) == 1 and str(error)
        return
    _check(model, tools, text)
    printed = format_model(model)
    assert parse_model(printed) == model  # everything the parser accepts prints back to itself
    assert format_model(parse_model(printed)) == printed


@settings(max_examples=600, deadline=None)
@given(dsl_texts, tool_sets)
def test_random_text(text: str, tools: list[ToolSpec] | None) -> None:
    _text_pipeline(text, tools)


@settings(max_examples=300, deadline=None)
@given(mutated_texts(), tool_sets)
def test_mutated_model_text(text: str, tools: list[ToolSpec] | None) -> None:
    _text_pipeline(text, tools)


@settings(max_examples=300, deadline=None)
@given(st.one_of(dsl_texts, mutated_texts().map(lambda text: text[text.find("(pre") :])))
def test_random_expression_text(text: str) -> None:
    try:
        expr = parse_expr(text)
    except DslSyntaxError:
        return
    assert parse_expr(format_expr(expr)) == expr


def _json_pipeline(data: Any, tools: list[ToolSpec] | None) -> None:
    try:
        model = model_from_json(data)
    except DslSyntaxError as error:
        assert error.code == "bad_json" and str(error)
        return
    well_typed = _check(model, tools)
    printed = format_model(model)  # the printer takes any model, well-typed or not
    if well_typed:
        assert parse_model(printed) == model
        assert model_from_json(model_to_json(model)) == model


@settings(max_examples=600, deadline=None)
@given(json_values, tool_sets)
def test_random_json(data: Any, tools: list[ToolSpec] | None) -> None:
    _json_pipeline(data, tools)


@settings(max_examples=250, deadline=None)
@given(mutated_json(), tool_sets, st.booleans())
def test_mutated_model_json(data: dict[str, Any], tools: list[ToolSpec] | None, as_text: bool) -> None:
    _json_pipeline(json.dumps(data) if as_text else data, tools)
