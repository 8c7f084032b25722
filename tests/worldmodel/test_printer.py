"""The printer and the JSON form: round trips, idempotence, the JSON schema, and spans."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings

from mantra_env.worldmodel import (
    ConstDecl,
    Lit,
    OpApp,
    Span,
    VarDecl,
    VarRef,
    WorldModel,
    format_expr,
    format_model,
    model_from_json,
    model_json_schema,
    model_to_json,
    parse_expr,
    parse_model,
)
from mantra_env.worldmodel.ast import INT, REAL, ArrayType
from tests.worldmodel.paper import PAPER_MODEL
from tests.worldmodel.strategies import models

try:
    import jsonschema  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover - jsonschema comes with nbformat (a dev dependency); optional here
    jsonschema = None


def test_paper_example_prints_back_character_for_character() -> None:
    assert format_model(parse_model(PAPER_MODEL)) == PAPER_MODEL


def test_canonical_layout() -> None:
    text = """\
(model
  (const limit Real 2000.5)
  (const tags  (Array String) ("a" "b\\"c"))

  (var status (Enum "NONE" "BOOKED"))
  (var n      Int)

  (transition book
    (params (item_id item))
    (pre  (= status "NONE")
          (< n limit))
    (post (= (next status) "BOOKED")))

  (transition noop
    (params)
    (pre)
    (post))

  (goal (= status "BOOKED")
        (contains tags "a")))
"""
    assert format_model(parse_model(text)) == text
    assert format_model(WorldModel()) == "(model)\n"


@pytest.mark.parametrize(
    "text",
    [
        "(+ 1 -2 3.5 -0.0 1e+16 5e-324)",
        '(= "say \\"hi\\"\\n\\\\" "ünï")',
        "(and (param a) (not (next b)) (contains xs (field (field r s) t)))",
        "(=> (<= a b) (>= (- a) (/ a b)))",
        "true",
    ],
)
def test_format_expr_round_trips(text: str) -> None:
    assert format_expr(parse_expr(text)) == text


def test_reals_keep_their_type() -> None:
    assert format_expr(Lit(2.0)) == "2.0"
    assert format_expr(Lit(1e16)) == "1e+16"
    assert parse_expr(format_expr(Lit(1e-7))) == Lit(1e-7)
    assert format_expr(Lit(2)) == "2"


@settings(max_examples=150, deadline=None)
@given(models)
def test_print_parse_round_trip_and_idempotence(model: WorldModel) -> None:
    text = format_model(model)
    parsed = parse_model(text)
    assert parsed == model
    assert format_model(parsed) == text


@settings(max_examples=150, deadline=None)
@given(models)
def test_json_round_trip(model: WorldModel) -> None:
    data = model_to_json(model)
    assert model_from_json(data) == model
    text = json.dumps(data)
    assert json.loads(text) == data  # the JSON form is plain JSON
    assert model_from_json(text) == model
    assert model_from_json(text.encode()) == model


SCHEMA = model_json_schema()


@pytest.mark.skipif(jsonschema is None, reason="jsonschema is not installed")
@settings(max_examples=60, deadline=None)
@given(models)
def test_json_schema_validates_the_json_form(model: WorldModel) -> None:
    jsonschema.Draft202012Validator(SCHEMA).validate(model_to_json(model))


@pytest.mark.skipif(jsonschema is None, reason="jsonschema is not installed")
@pytest.mark.parametrize(
    "bad",
    [
        {"goal": [{"node": "bogus"}]},
        {"goal": [{"node": "op", "symbol": "xor", "args": []}]},
        {"vars": [{"name": "x", "var_type": {"type": "Integer"}}]},
        {"vars": [{"name": "x"}]},
    ],
)
def test_json_schema_rejects_malformed_json(bad: dict[str, Any]) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(SCHEMA).validate(bad)


def test_json_schema_has_the_discriminators() -> None:
    discriminators = {
        (value["propertyName"], tuple(sorted(value["mapping"])))
        for key, value in _walk_json(SCHEMA)
        if key == "discriminator"
    }
    assert discriminators == {
        ("node", ("collection", "contains", "field", "list", "literal", "next_ref", "op", "param_ref", "var_ref")),
        ("type", ("Array", "Bool", "Enum", "Int", "List", "Real", "Record", "String")),
    }
    assert not any(key == "span" for key, _ in _walk_json(SCHEMA))


def _walk_json(data: Any) -> Iterator[tuple[str, Any]]:
    todo = [data]
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            yield from item.items()
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)


def _nodes(node: Any) -> Iterator[Any]:
    """Every AST node under ``node`` (constant values are not nodes)."""
    todo = [node]
    while todo:
        item = todo.pop()
        if isinstance(item, tuple):
            todo.extend(item)
        elif dataclasses.is_dataclass(item) and not isinstance(item, Span):
            yield item
            todo.extend(getattr(item, f.name) for f in dataclasses.fields(item) if f.name != "span")


@settings(max_examples=60, deadline=None)
@given(models)
def test_parsed_nodes_have_spans_and_json_has_none(model: WorldModel) -> None:
    text = format_model(model)
    parsed = parse_model(text)
    lines = text.split("\n")  # the parser breaks lines at \n only (not at \u2028 like str.splitlines)
    for node in _nodes(parsed):
        span = node.span
        assert isinstance(span, Span), node
        assert 0 <= span.start < span.end <= len(text)
        assert text[: span.start].count("\n") + 1 == span.line
        assert lines[span.line - 1][span.column - 1] == text[span.start]
    assert all(node.span is None for node in _nodes(model))  # built in code
    data = model_to_json(parsed)
    assert not any(key == "span" for key, _ in _walk_json(data))
    assert model_to_json(model) == data
    assert all(node.span is None for node in _nodes(model_from_json(data)))


def test_spans_do_not_take_part_in_equality() -> None:
    parsed = parse_expr("(= x 1)")
    assert parsed.span is not None
    assert parsed == OpApp("=", (VarRef("x"), Lit(1)))
    assert hash(parse_expr("1")) == hash(Lit(1))


def test_integers_too_long_for_decimal_conversion_still_print() -> None:
    huge = 7 * 10**5000 + 3
    text = format_model(WorldModel(consts=(ConstDecl("c", INT, -huge),), goal=(OpApp("<", (VarRef("c"), Lit(huge))),)))
    digits = "7" + "0" * 4999 + "3"
    assert f"(const c Int -{digits})" in text
    assert f"(goal (< c {digits}))" in text


def test_deeply_nested_constant_values_print() -> None:
    value: Any = 1
    for _ in range(5000):  # deeper than Python's recursion limit; JSON values are not bounded by their type
        value = [value]
    const = {"name": "c", "const_type": {"type": "Array", "element": {"type": "Int"}}, "value": value}
    model = model_from_json({"consts": [const]})
    assert format_model(model) == "(model\n  (const c (Array Int) " + "(" * 5000 + "1" + ")" * 5000 + "))\n"


def test_reals_given_as_integers_and_empty_arrays() -> None:
    model = WorldModel(
        consts=(
            ConstDecl("r", REAL, 3),
            ConstDecl("xs", ArrayType(INT), []),
        ),
        vars=(VarDecl("v", INT),),
    )
    text = format_model(model)
    assert "(const r  Real 3)" in text and "(const xs (Array Int) ())" in text
    assert parse_model(text) == model
