"""The type checker: one test per diagnostic code, several problems at once, parameter types from the tool schema
and by inference, and random well-typed models."""

from __future__ import annotations

import inspect
import math
import re
from typing import Any

import pytest
from hypothesis import given, settings

from mantra_env.errors import MantraError
from mantra_env.tools import ToolSpec
from mantra_env.worldmodel import (
    DslType,
    DslTypeError,
    EnumType,
    WorldModel,
    check_model,
    model_from_json,
    parse_model,
    schema_type,
)
from mantra_env.worldmodel import typecheck as typecheck_module
from mantra_env.worldmodel.ast import BOOL, INT, REAL, STRING, ArrayType, ConstDecl, Lit, subexpressions
from tests.worldmodel.paper import PAPER_MODEL, PAPER_TOOLS
from tests.worldmodel.strategies import typed_models

BOOK = ToolSpec(
    name="book_item",
    kind="write",
    parameters={
        "type": "object",
        "properties": {
            "item": {"type": "string"},
            "status": {"type": "string", "enum": ["NONE", "BOOKED"]},
            "qty": {"type": "integer"},
            "price": {"type": "number"},
            "urgent": {"type": "boolean"},
            "notes": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
            "meta": {"type": "object"},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        },
        "required": [],
        "additionalProperties": False,
    },
)
TOOLS = [*PAPER_TOOLS, BOOK]


def _problems(text: str, tools: list[ToolSpec] | None = None) -> DslTypeError:
    model = parse_model(text)
    with pytest.raises(DslTypeError) as info:
        check_model(model, tools, source=text, origin="m.wm")
    error = info.value
    assert isinstance(error, MantraError) and isinstance(error, TypeError)
    return error


def test_paper_example_type_checks() -> None:
    checked = check_model(parse_model(PAPER_MODEL), PAPER_TOOLS)
    assert checked.var_types == {"in_stock": BOOL, "legacy_checked": BOOL, "picker_assigned": BOOL, "po_created": BOOL}
    assert {
        tool: {local: bound.type for local, bound in params.items()} for tool, params in checked.params.items()
    } == {
        "check_inventory": {"itm": STRING},
        "check_legacy_portal": {"itm": STRING},
        "assign_warehouse_picker": {"itm": STRING},
        "create_purchase_order": {"itm": STRING},
    }


# --- one test per diagnostic code ----------------------------------------------------------------------------------

DIAGNOSTICS = [
    # (model text, with tools?, code, column of the reported node, words of the message, words of the hint)
    (
        "(model (const x Int 1) (var x Bool))",
        False,
        "duplicate_name",
        24,
        "x is already declared as a constant",
        "rename",
    ),
    ("(model (transition t (params (a x) (b x))))", False, "duplicate_name", 36, "local name x is bound twice", ""),
    ("(model (transition t (params (a x) (a y))))", False, "duplicate_name", 36, "parameter a is bound twice", ""),
    ('(model (var s (Enum "a" "a")))', False, "bad_enum", 15, "enum values must be distinct", ""),
    ("(model (var r (Record (a Int) (a Bool))))", False, "bad_record", 15, "field names must be distinct", ""),
    ("(model (var xs (Array (Record (a Int)))))", False, "unsupported_type", 16, "arrays of records", "scalars"),
    ("(model (var xs (Array (Array Int))))", False, "unsupported_type", 16, "arrays of arrays", "scalars"),
    ("(model (const c Int 1.5))", False, "bad_value", 8, "constant c: 1.5 is not a Int", "type Int"),
    ("(model (const c Real true))", False, "bad_value", 8, "True is not a Real", "type Real"),
    ('(model (const c Bool "true"))', False, "bad_value", 8, "'true' is not a Bool", "type Bool"),
    ('(model (const c (Enum "a") "b"))', False, "bad_value", 8, "'b' is not an enum value", '(Enum "a")'),
    ("(model (const c (Record (a Int)) ((b 1))))", False, "bad_value", 8, "record fields ['b'] differ", "Record"),
    ("(model (const c (Record (a Int)) 1))", False, "bad_value", 8, "1 is not a record", "Record"),
    ("(model (const c (Array Int) 1))", False, "bad_value", 8, "1 is not a list", "(Array Int)"),
    ('(model (const c (Array Int) (1 "2")))', False, "bad_value", 8, "'2' is not a Int", "(Array Int)"),
    ("(model (transition t) (transition t))", False, "duplicate_transition", 23, "a second transition", "merge"),
    ("(model (transition check_inventroy))", True, "unknown_tool", 8, "no tool named", "did you mean check_inventory?"),
    ("(model (transition foo))", True, "unknown_tool", 8, "no tool named foo", "one transition per tool"),
    ("(model (transition check_inventory (params (itme i))))", True, "unknown_param", 44, "no parameter itme", "item?"),
    ("(model (transition book_item (params (notes n))))", True, "unsupported_param_type", 38, "notes", "string"),
    ("(model (transition book_item (params (meta n))))", True, "unsupported_param_type", 38, "meta", "boolean"),
    ("(model (transition book_item (params (either n))))", True, "unsupported_param_type", 38, "either", "enum"),
    ("(model (var in_stock_count Int) (transition t (pre in_stock_count)))", False, "not_bool", 52, "pre of t", "(="),
    ("(model (var n Real) (transition t (post (+ n 1))))", False, "not_bool", 41, "not a Real value", "compare"),
    ('(model (goal "done"))', False, "not_bool", 14, "every goal entry must be a Bool", "compare"),
    (
        "(model (var in_stock Bool) (goal in_stok))",
        False,
        "unknown_name",
        34,
        "in_stok is not",
        "did you mean in_stock?",
    ),
    ("(model (goal (= x 1)))", False, "unknown_name", 17, "x is not a declared", "(var NAME TYPE)"),
    ("(model (var x Bool) (transition t (post (next y))))", False, "unknown_name", 41, "y is not", "declare"),
    ("(model (var x Bool) (transition t (pre (next x))))", False, "next_outside_post", 40, "(next x) in a pre", "post"),
    ("(model (var x Bool) (goal (next x)))", False, "next_outside_post", 27, "(next x) in a goal", "bare name"),
    ("(model (const c Bool true) (transition t (post (next c))))", False, "next_of_constant", 48, "constant", ""),
    ("(model (goal (= (param p) 1)))", False, "param_outside_transition", 17, "in the goal", "state only"),
    ("(model (transition check_inventory (pre (= (param item) 1))))", True, "unknown_param", 44, "not bound", "(item"),
    ("(model (var x Int) (goal (field x a)))", False, "not_a_record", 26, "(field ...) of a Int value", ""),
    ("(model (var r (Record (a Bool))) (goal (field r b)))", False, "unknown_field", 40, "no field b", "fields: a"),
    ("(model (var x Int) (goal (contains x 1)))", False, "not_an_array", 36, "(contains ...) on a Int", ""),
    ("(model (var b Bool) (goal (not b b)))", False, "arity", 27, "(not ...) takes exactly 1 operand(s), got 2", ""),
    ("(model (var b Bool) (goal (= b)))", False, "arity", 27, "(= ...) takes exactly 2", ""),
    ("(model (var b Bool) (goal (=> b b b)))", False, "arity", 27, "(=> ...) takes exactly 2", ""),
    ("(model (var n Int) (goal (< (/ n) 1)))", False, "arity", 29, "(/ ...) takes exactly 2", ""),
    ("(model (var n Int) (goal (and n true)))", False, "type_mismatch", 31, "`and` needs Bool operands, not Int", ""),
    ("(model (var s String) (goal (= s 1)))", False, "type_mismatch", 29, "cannot compare String with Int", "one type"),
    ('(model (var s String) (goal (< s "a")))', False, "type_mismatch", 32, "needs Int or Real", "only `=`"),
    ('(model (var s (Enum "A")) (goal (= s 1)))', False, "type_mismatch", 33, 'compare (Enum "A") with Int', ""),
    ('(model (var xs (Array Int)) (goal (contains xs "a")))', False, "type_mismatch", 35, "Int with String", ""),
    ('(model (var s (Enum "A")) (var t (Enum "B")) (goal (= s t)))', False, "type_mismatch", 52, '(Enum "B")', ""),
    (
        '(model (var s (Enum "NONE" "BOOKED")) (goal (= s "BOOKD")))',
        False,
        "unknown_enum_value",
        50,
        "'BOOKD'",
        "BOOKED?",
    ),
    (
        '(model (var xs (Array (Enum "NONE"))) (goal (contains xs "nONE")))',
        False,
        "unknown_enum_value",
        58,
        "nONE",
        "NONE",
    ),
    (
        '(model (transition book_item (params (status s)) (pre (= (param s) "DONE"))))',
        True,
        "unknown_enum_value",
        68,
        """'DONE' is not a value of (Enum "NONE" "BOOKED")""",
        "did you mean NONE?",
    ),
]


@pytest.mark.parametrize(("text", "with_tools", "code", "column", "message", "hint"), DIAGNOSTICS)
def test_diagnostic(text: str, with_tools: bool, code: str, column: int, message: str, hint: str) -> None:
    error = _problems(text, TOOLS if with_tools else None)
    assert [d.code for d in error.diagnostics] == [code]
    diagnostic = error.diagnostics[0]
    assert diagnostic.span is not None and (diagnostic.span.line, diagnostic.span.column) == (1, column)
    assert message in diagnostic.message
    assert hint in diagnostic.hint
    rendered = str(error).splitlines()
    assert rendered[0] == f"m.wm:1:{column}: error[{code}]: {diagnostic.message}"
    assert rendered[1] == f"  {text}"
    assert rendered[2] == "  " + " " * (column - 1) + "^" * (diagnostic.span.end - diagnostic.span.start)


def test_every_type_checker_code_is_covered() -> None:
    source = inspect.getsource(typecheck_module)
    produced = set(re.findall(r'report\(\s*"([a-z_]+)"', source))
    covered = {case[2] for case in DIAGNOSTICS} | {"bad_literal", "bad_name"}  # those two: JSON-only, tested below
    assert produced == covered, produced ^ covered


def test_a_parameter_used_as_a_bare_name() -> None:
    error = _problems('(model (transition check_inventory (params (item itm)) (pre (= itm "x"))))', TOOLS)
    assert error.code == "unknown_name"
    assert error.diagnostics[0].hint == "itm is a parameter here: write (param itm)"


def test_bare_value_typed_condition_is_not_bool() -> None:
    """The paper's `(pre (var_ref booking_status) (literal "NONE"))`: entries that are values, not conditions."""
    error = _problems('(model (var booking_status String) (transition t (pre booking_status "NONE")))')
    assert [d.code for d in error.diagnostics] == ["not_bool", "not_bool"]
    assert "not a String value" in error.diagnostics[0].message


def test_all_problems_are_reported_at_once() -> None:
    text = """(model
  (const limit Int 2.5)
  (var status (Enum "NONE" "BOOKED"))
  (var status Bool)
  (transition check_inventory
    (params (item itm) (colour c))
    (pre  (= stauts "NONE")
          (+ 1 2))
    (post (= (next status) "BOOKD")))
  (transition no_such_tool)
  (goal (next status)))
"""
    error = _problems(text, TOOLS)
    codes = [(d.code, d.span.line if d.span else None) for d in error.diagnostics]
    assert codes == [
        ("bad_value", 2),
        ("duplicate_name", 4),
        ("unknown_param", 6),
        ("unknown_tool", 10),
        ("unknown_name", 7),
        ("not_bool", 8),
        ("unknown_enum_value", 9),
        ("next_outside_post", 11),
    ]
    assert str(error).endswith("(8 problems)")
    assert error.code == "bad_value" and error.span is not None and error.span.line == 2


def test_a_duplicate_transition_is_not_checked_against_the_first_ones_params() -> None:
    text = """(model
  (transition t (params (a x)) (pre (= (param x) 1)))
  (transition t (params (b y)) (pre (= (param y) 1))))"""
    assert [d.code for d in _problems(text).diagnostics] == ["duplicate_transition"]


# --- parameter types ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string"}, STRING),
        ({"type": "string", "enum": ["NONE", "BOOKED"]}, EnumType(("NONE", "BOOKED"))),
        ({"type": "string", "enum": []}, STRING),
        ({"type": "integer"}, INT),
        ({"type": "number"}, REAL),
        ({"type": "boolean"}, BOOL),
        ({"type": "array"}, None),
        ({"type": "object"}, None),
        ({"type": ["string", "null"]}, None),
        ({"enum": ["a"]}, None),
        ({}, None),
        (None, None),
    ],
)
def test_schema_type(schema: dict[str, Any] | None, expected: DslType | None) -> None:
    assert schema_type(schema) == expected


def test_parameter_types_come_from_the_schema() -> None:
    text = """(model
  (transition book_item
    (params (item i) (status s) (qty q) (price p) (urgent u))
    (pre (= (param i) "HWM2741") (= (param s) "NONE") (< (param q) 3) (< (param p) 2.5) (param u))))"""
    checked = check_model(parse_model(text), TOOLS)
    types = {local: bound.type for local, bound in checked.params["book_item"].items()}
    assert types == {"i": STRING, "s": EnumType(("NONE", "BOOKED")), "q": INT, "p": REAL, "u": BOOL}
    assert checked.params["book_item"]["q"].tool_param == "qty"


def test_schema_types_are_enforced() -> None:
    text = '(model (transition book_item (params (qty q) (urgent u)) (pre (= (param q) "3") (and (param u) 1))))'
    error = _problems(text, TOOLS)
    assert [d.message for d in error.diagnostics] == [
        "cannot compare Int with String",
        "`and` needs Bool operands, not Int",
    ]


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ("(= (param p) 5)", INT),
        ("(= 5 (param p))", INT),
        ("(< (param p) 2.5)", REAL),
        ("(> (+ (param p) 1) 0)", INT),
        ('(= (param p) "x")', STRING),
        ("(= (param p) status)", EnumType(("NONE", "BOOKED"))),
        ("(contains tags (param p))", STRING),
        ("(contains counts (param p))", INT),
        ("(and (param p) true)", BOOL),
        ("(not (param p))", BOOL),
        ("(param p)", BOOL),
        ("(= (param p) (param p))", STRING),
    ],
)
def test_parameter_types_are_inferred_without_a_schema(condition: str, expected: DslType) -> None:
    text = f"""(model
  (var status (Enum "NONE" "BOOKED"))
  (var tags (Array String))
  (var counts (Array Int))
  (transition t (params (arg p)) (pre {condition})))"""
    checked = check_model(parse_model(text))
    assert checked.params["t"]["p"].type == expected


def test_an_inferred_parameter_type_holds_for_later_uses() -> None:
    assert check_model(parse_model("(model (transition t (params (a p)) (pre (= (param p) 1) (< (param p) 2.5))))"))
    error = _problems('(model (transition t (params (a p)) (pre (= (param p) 1) (= (param p) "x"))))')
    assert [d.message for d in error.diagnostics] == ["cannot compare Int with String"]
    unused = check_model(parse_model("(model (transition t (params (a p))))"))
    assert unused.params["t"]["p"].type == STRING


# --- models from JSON or code: what only the text form rules out ---------------------------------------------------


def _json_problems(data: Any) -> list[tuple[str, str]]:
    with pytest.raises(DslTypeError) as info:
        check_model(model_from_json(data))
    return [(d.code, d.message) for d in info.value.diagnostics]


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_non_finite_literal_from_json(value: float) -> None:
    goal = {"node": "op", "symbol": "<", "args": [{"node": "literal", "value": value}, {"node": "literal", "value": 1}]}
    [(code, message)] = _json_problems({"goal": [goal]})
    assert code == "bad_literal" and "not a number the DSL can hold" in message


@pytest.mark.parametrize("number", ["Infinity", "-Infinity", "NaN", "1e400"])
def test_non_finite_literal_from_json_text(number: str) -> None:
    text = f'{{"goal": [{{"node": "op", "symbol": "=", "args": [{{"node": "literal", "value": {number}}}, 1.5]}}]}}'
    text = text.replace("1.5]", '{"node": "literal", "value": 1.5}]')
    assert [code for code, _ in _json_problems(text)] == ["bad_literal"]


def test_non_finite_constant_value_from_json() -> None:
    const = {"name": "c", "const_type": {"type": "Real"}, "value": math.inf}
    assert _json_problems({"consts": [const]}) == [("bad_value", "constant c: inf is not a Real")]


def test_integers_too_long_to_print_are_rejected() -> None:
    huge = 10**5000
    literal = {
        "node": "op",
        "symbol": "<",
        "args": [{"node": "literal", "value": huge}, {"node": "literal", "value": 1}],
    }
    const = {"name": "c", "const_type": {"type": "Int"}, "value": -huge}
    problems = _json_problems({"consts": [const], "goal": [literal]})
    assert [code for code, _ in problems] == ["bad_value", "bad_literal"]
    assert problems[0][1] == "constant c: <an integer of 16610 bits> is not a Int"
    assert check_model(WorldModel(consts=(ConstDecl("c", INT, 10**4000),)))  # long, but printable and parseable


def test_deeply_nested_constant_values_are_reported_not_crashed_on() -> None:
    value: Any = 1
    for _ in range(5000):
        value = [value]
    const = {"name": "c", "const_type": {"type": "Array", "element": {"type": "Int"}}, "value": value}
    [(code, message)] = _json_problems({"consts": [const]})
    assert (code, message) == ("bad_value", "constant c: [[[[...]]]] is not a Int")


@pytest.mark.parametrize(
    ("data", "role"),
    [
        ({"vars": [{"name": "in stock", "var_type": {"type": "Bool"}}]}, "state variable"),
        ({"consts": [{"name": "next", "const_type": {"type": "Int"}, "value": 1}]}, "constant"),
        (
            {
                "vars": [
                    {
                        "name": "r",
                        "var_type": {"type": "Record", "fields": [{"name": "", "field_type": {"type": "Int"}}]},
                    }
                ]
            },
            "field",
        ),
        ({"transitions": [{"tool": "9lives"}]}, "tool"),
        ({"transitions": [{"tool": "t", "params": [{"tool_param": "a-b", "local": "a"}]}]}, "parameter"),
        ({"transitions": [{"tool": "t", "params": [{"tool_param": "a", "local": "<="}]}]}, "local"),
    ],
)
def test_names_the_text_form_cannot_hold_are_rejected(data: dict[str, Any], role: str) -> None:
    [(code, message)] = _json_problems(data)
    assert code == "bad_name" and message.endswith(f"is not a valid {role} name")


def test_empty_enums_and_records_from_json() -> None:
    data = {
        "vars": [
            {"name": "e", "var_type": {"type": "Enum", "values": []}},
            {"name": "r", "var_type": {"type": "Record", "fields": []}},
        ]
    }
    assert [code for code, _ in _json_problems(data)] == ["bad_enum", "bad_record"]


def test_arity_of_operators_without_operands_from_json() -> None:
    data = {"goal": [{"node": "op", "symbol": "and", "args": []}]}
    assert _json_problems(data) == [("arity", "(and ...) takes at least 1 operand(s), got 0")]


# --- random well-typed models -------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(typed_models())
def test_well_typed_random_models_type_check(pair: tuple[WorldModel, list[ToolSpec]]) -> None:
    model, tools = pair
    checked = check_model(model, tools)
    assert checked.var_types == {v.name: v.var_type for v in model.vars}
    assert checked.const_types == {c.name: c.const_type for c in model.consts}
    conditions = [e for t in model.transitions for e in (*t.pre, *t.post)] + list(model.goal)
    for condition in conditions:
        assert checked.type_of(condition) == BOOL
        for expr in subexpressions(condition):
            found = checked.type_of(expr)  # every expression has a type
            if isinstance(expr, Lit) and isinstance(expr.value, str):
                assert found == STRING or isinstance(found, EnumType)
    for transition in model.transitions:
        spec = next(tool for tool in tools if tool.name == transition.tool)
        for bind in transition.params:
            assert checked.params[transition.tool][bind.local].type == schema_type(spec.param_schema(bind.tool_param))


def test_arrays_of_scalars_and_enums_are_supported() -> None:
    model = WorldModel(consts=(ConstDecl("xs", ArrayType(EnumType(("a", "b"))), ["a", "a"]),))
    assert check_model(model).const_types == {"xs": ArrayType(EnumType(("a", "b")))}
