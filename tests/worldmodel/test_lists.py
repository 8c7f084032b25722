"""Lists in the world-model DSL: list types from tool schemas, literals and operations through text, JSON and
edits, and every list diagnostic with its place and hint."""

from __future__ import annotations

import pytest

from mantra_env.worldmodel import (
    DslTypeError,
    ListType,
    RecordType,
    check_model,
    format_model,
    model_from_json,
    model_to_json,
    parse_model,
    schema_type,
)
from mantra_env.worldmodel.ast import INT, REAL, STRING, EnumType, FieldDecl
from mantra_env.worldmodel.edits import AddCondition, ChangeConstant, Draft, apply_edit
from tests.list_tools import IDS, PAYMENTS, list_tool

TOOLS = [
    list_tool("return_items", optional=("payments",), order_id={"type": "string"}, item_ids=IDS, payments=PAYMENTS)
]
MODEL = """\
(model
  (const ORDER_ITEMS (List String) ("i1" "i2" "i3"))

  (var returned (Array String))
  (var price    Real)

  (transition return_items
    (params (order_id o) (item_ids items) (payments pays))
    (pre  (not (empty (param items)))
          (<= (length (param items)) 2)
          (subset (param items) ORDER_ITEMS)
          (not (contains (param items) "i3"))
          (subset (list "i1") (param items))
          (= (sum (field (param pays) amount)) price)
          (contains (field (param pays) payment_id) "gift_card"))
    (post (= (next returned) (union returned (param items)))))

  (goal (contains (difference returned (list "i2")) "i1")))
"""


def test_list_types_come_from_the_tool_schema() -> None:
    assert schema_type(IDS) == ListType(STRING)
    assert schema_type({"type": "array", "items": {"type": "integer"}}) == ListType(INT)
    assert schema_type({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}) == ListType(
        EnumType(("a", "b"))
    )
    record = RecordType((FieldDecl("payment_id", STRING), FieldDecl("amount", REAL)))
    assert schema_type(PAYMENTS) == ListType(record)
    # nested lists, objects with object fields and arrays without items are not expressible
    assert schema_type({"type": "array", "items": IDS}) is None
    assert schema_type({"type": "array", "items": {"type": "object", "properties": {"a": IDS}}}) is None
    assert schema_type({"type": "array"}) is None


def test_lists_round_trip_through_text_json_and_the_checker() -> None:
    model = parse_model(MODEL)
    assert format_model(model) == MODEL
    assert parse_model(format_model(model)) == model
    assert model_from_json(model_to_json(model)) == model
    checked = check_model(model, TOOLS)
    assert checked.params["return_items"]["items"].type == ListType(STRING)
    assert isinstance(checked.params["return_items"]["pays"].type, ListType)


def test_list_conditions_and_constants_go_through_edits() -> None:
    draft = Draft(parse_model(MODEL), ())
    added = AddCondition(tool="return_items", section="pre", expr="(< (length (param items)) 3)")
    edited = apply_edit(draft, added, TOOLS)
    assert "(< (length (param items)) 3)" in format_model(edited.model)
    changed = apply_edit(edited, ChangeConstant(name="ORDER_ITEMS", type="(List String)", value='("i1" "i4")'), TOOLS)
    assert '(const ORDER_ITEMS (List String) ("i1" "i4"))' in format_model(changed.model)
    check_model(changed.model, TOOLS)


def _problem(text: str) -> tuple[str, str, int, str]:
    with pytest.raises(DslTypeError) as info:
        check_model(parse_model(text), TOOLS, source=text)
    (diagnostic,) = info.value.diagnostics
    assert diagnostic.span is not None
    return diagnostic.code, diagnostic.message, diagnostic.span.column, diagnostic.hint


def _pre(condition: str) -> str:
    return (
        "(model (var returned (Array String)) (var n Int) (transition return_items "
        f"(params (item_ids items) (payments pays)) (pre {condition})))"
    )


@pytest.mark.parametrize(
    ("text", "code", "at", "hint"),  # ``at``: the text the diagnostic's span starts at (its first occurrence)
    [
        ("(model (var xs (List String)))", "unsupported_type", "(List", "(Array T)"),
        (_pre('(= (param items) (list "a"))'), "type_mismatch", "(= (param", "subset"),
        (_pre("(> (length returned) 0)"), "type_mismatch", "returned) 0", "(list e ...)"),
        (_pre('(contains (union (param items) returned) "a")'), "type_mismatch", "(param items) returned", "arrays"),
        (_pre("(subset (param items) (list 1 2))"), "type_mismatch", "(list 1", ""),
        (_pre("(> (sum (param items)) 0)"), "type_mismatch", "(sum", "numeric"),
        (_pre("(empty (param items) (param items))"), "arity", "(empty", ""),
        (_pre('(contains (field (param pays) method) "x")'), "unknown_field", "(field", "payment_id, amount"),
        (_pre('(subset (list "a" 1) (param items))'), "type_mismatch", "1)", ""),
        ("(model (const C (List (List Int)) ()))", "unsupported_type", "(List (", "flatten"),
    ],
)
def test_list_diagnostics_name_the_place_and_the_fix(text: str, code: str, at: str, hint: str) -> None:
    found_code, _, found_column, found_hint = _problem(text)
    assert (found_code, found_column) == (code, text.index(at) + 1)
    assert hint in found_hint


def test_fields_of_a_list_of_records_are_lists() -> None:
    check_model(parse_model(_pre("(= (length (field (param pays) amount)) n)")), TOOLS)


def test_an_empty_list_literal_is_a_syntax_error_with_a_hint() -> None:
    from mantra_env.worldmodel import DslSyntaxError

    with pytest.raises(DslSyntaxError, match="empty"):
        parse_model(_pre("(subset (param items) (list))"))
