"""The parser: the paper's example, comments, literals, and every syntax error with its code, place and hint."""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable

import pytest

from mantra_env.errors import MantraError
from mantra_env.worldmodel import (
    ArrayType,
    ConstDecl,
    Contains,
    DslSyntaxError,
    EnumType,
    FieldAccess,
    FieldDecl,
    Lit,
    NextRef,
    OpApp,
    ParamBind,
    ParamRef,
    RecordType,
    Transition,
    VarDecl,
    VarRef,
    WorldModel,
    parse_expr,
    parse_model,
    parser,
)
from mantra_env.worldmodel.ast import BOOL, INT, REAL, STRING
from mantra_env.worldmodel.parser import MAX_DEPTH, parse_transition, parse_type, parse_value
from tests.worldmodel.paper import PAPER_MODEL


def test_paper_example_parses_to_the_expected_ast() -> None:
    model = parse_model(PAPER_MODEL)
    item = (ParamBind("item", "itm"),)
    assert model == WorldModel(
        vars=(
            VarDecl("in_stock", BOOL),
            VarDecl("legacy_checked", BOOL),
            VarDecl("picker_assigned", BOOL),
            VarDecl("po_created", BOOL),
        ),
        transitions=(
            Transition("check_inventory", item, (), (OpApp("=", (NextRef("in_stock"), VarRef("in_stock"))),)),
            Transition("check_legacy_portal", item, (), (OpApp("=", (NextRef("legacy_checked"), Lit(True))),)),
            Transition(
                "assign_warehouse_picker",
                item,
                (OpApp("=", (VarRef("in_stock"), Lit(True))),),
                (OpApp("=", (NextRef("picker_assigned"), Lit(True))),),
            ),
            Transition(
                "create_purchase_order",
                item,
                (OpApp("=", (VarRef("in_stock"), Lit(False))), OpApp("=", (VarRef("legacy_checked"), Lit(True)))),
                (OpApp("=", (NextRef("po_created"), Lit(True))),),
            ),
        ),
    )


def test_every_clause_and_expression_form() -> None:
    text = """
    (model
      (const limit   Real 2000.5)
      (const names   (Array String) ("a" "b"))
      (const request (Record (status (Enum "NONE" "BOOKED")) (tags (Array Int))) ((status "NONE") (tags (1 2))))
      (var count Int)
      (transition book
        (params (item_id item) (qty q))
        (pre (contains names (param item)) (<= (param q) limit))
        (post (= (next count) (+ count (param q))) (= (field request status) "BOOKED")))
      (goal (not (> count 3))))
    """
    model = parse_model(text)
    status = EnumType(("NONE", "BOOKED"))
    assert model.consts == (
        ConstDecl("limit", REAL, 2000.5),
        ConstDecl("names", ArrayType(STRING), ["a", "b"]),
        ConstDecl(
            "request",
            RecordType((FieldDecl("status", status), FieldDecl("tags", ArrayType(INT)))),
            {"status": "NONE", "tags": [1, 2]},
        ),
    )
    transition = model.transitions[0]
    assert transition.params == (ParamBind("item_id", "item"), ParamBind("qty", "q"))
    assert transition.pre == (
        Contains(VarRef("names"), ParamRef("item")),
        OpApp("<=", (ParamRef("q"), VarRef("limit"))),
    )
    assert transition.post[1] == OpApp("=", (FieldAccess(VarRef("request"), "status"), Lit("BOOKED")))
    assert model.goal == (OpApp("not", (OpApp(">", (VarRef("count"), Lit(3))),)),)


def test_sections_may_be_missing_or_in_any_order() -> None:
    model = parse_model("(model (transition t (post true) (params (a b))) (transition u))")
    assert model.transitions == (Transition("t", (ParamBind("a", "b"),), (), (Lit(True),)), Transition("u"))
    assert parse_model("(model)") == WorldModel()


def test_comments_are_ignored_everywhere() -> None:
    commented = """; leading comment
    (model ; after the head
      ; a whole line
      (var x Int) ; trailing
      (goal (= x ; inside an expression
               1))) ; after the end
    ; last line without newline"""
    assert parse_model(commented) == parse_model("(model (var x Int) (goal (= x 1)))")
    assert parse_model('(model (const s String "a;b"))').consts[0].value == "a;b"  # not a comment inside a string


@pytest.mark.parametrize(
    ("literal", "value"),
    [
        (r'"plain"', "plain"),
        (r'""', ""),
        (r'"say \"hi\""', 'say "hi"'),
        (r'"back\\slash"', "back\\slash"),
        (r'"line\nbreak\ttab"', "line\nbreak\ttab"),
        (r'"\u00e9\u2028"', "é\u2028"),
        (r'"\ud83d\ude00"', "😀"),
        ('"ünïcødé 😀"', "ünïcødé 😀"),
        (r'"\/"', "/"),
    ],
)
def test_string_escapes(literal: str, value: str) -> None:
    assert parse_expr(literal) == Lit(value)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0", 0),
        ("42", 42),
        ("-7", -7),
        ("+7", 7),
        ("007", 7),
        ("2.5", 2.5),
        ("-2.5", -2.5),
        ("1.", 1.0),
        (".5", 0.5),
        ("-.5", -0.5),
        ("1e3", 1000.0),
        ("1E-3", 0.001),
        ("-2.5e+2", -250.0),
        ("1.7976931348623157e308", 1.7976931348623157e308),
        ("5e-324", 5e-324),
        ("9" * 4000, int("9" * 4000)),
        ("-" + "1" + "0" * 100, -(10**100)),
        ("true", True),
        ("false", False),
    ],
)
def test_numbers_and_booleans(text: str, value: bool | int | float) -> None:
    parsed = parse_expr(text)
    assert isinstance(parsed, Lit)
    assert type(parsed.value) is type(value)
    assert parsed.value == value


def test_literal_types_are_distinguished() -> None:
    assert parse_expr("1") != parse_expr("1.0")
    assert parse_expr("1") != parse_expr("true")
    assert parse_expr('"1"') != parse_expr("1")


def test_spans_give_line_and_column() -> None:
    model = parse_model("(model\n  (var x Int)\n  (goal (= x 1)))")
    assert model.span is not None and (model.span.line, model.span.column) == (1, 1)
    var = model.vars[0]
    assert var.span is not None and (var.span.line, var.span.column, var.span.start, var.span.end) == (2, 3, 9, 20)
    assert var.var_type.span is not None and var.var_type.span.column == 10
    equality = model.goal[0]
    assert isinstance(equality, OpApp) and equality.span is not None and equality.span.column == 9
    assert equality.args[1].span is not None and (equality.args[1].span.line, equality.args[1].span.column) == (3, 14)


def test_parse_expr_and_friends() -> None:
    assert parse_expr("(and (param a) (not (next b)))") == OpApp("and", (ParamRef("a"), OpApp("not", (NextRef("b"),))))
    assert parse_expr("  x ; comment\n") == VarRef("x")
    assert parse_type('(Record (a (Enum "x")) (b (Array Bool)))') == RecordType(
        (FieldDecl("a", EnumType(("x",))), FieldDecl("b", ArrayType(BOOL)))
    )
    assert parse_value("((a 1) (b (true false)))") == {"a": 1, "b": [True, False]}
    assert parse_value("()") == []
    assert parse_transition("(transition t (pre true))") == Transition("t", pre=(Lit(True),))


# --- syntax errors -----------------------------------------------------------------------------------------------

NESTED = "(" * (MAX_DEPTH + 1)

SYNTAX_ERRORS = [
    # (text, code, line, column, words of the message)
    (NESTED, "too_deep", 1, MAX_DEPTH + 1, f"more than {MAX_DEPTH} levels"),
    ("(model\n  (goal " + "(not " * 70 + "x" + ")" * 72, "too_deep", 2, 9 + 5 * (MAX_DEPTH - 2), "nest"),
    ("(model))", "unbalanced_paren", 1, 8, "unexpected `)`"),
    ('(model\n  (const s String "abc))', "unterminated_string", 2, 19, "not closed"),
    ("(model\n  (var x Int)", "unclosed_paren", 1, 1, "never closed"),
    ("(model\n  (var x (Array Int)\n", "unclosed_paren", 2, 3, "never closed"),
    ("(model) (model)", "trailing_input", 1, 9, "after the end"),
    ("(model)\nx", "trailing_input", 2, 1, "after the end"),
    ("(var x Int)", "expected_model", 1, 1, "expected `(model ...)`"),
    ("  model", "expected_model", 1, 3, "expected `(model ...)`"),
    ("()", "expected_model", 1, 1, "expected `(model ...)`"),
    ("(model\n  (foo))", "unknown_clause", 2, 3, "expected a clause"),
    ("(model x)", "unknown_clause", 1, 8, "expected a clause"),
    ("(model (goal) (goal))", "duplicate_section", 1, 15, "a second (goal ...)"),
    ("(model (transition t\n (pre) (pre)))", "duplicate_section", 2, 8, "a second (pre ...) in transition t"),
    ('(model (var "x" Int))', "expected_name", 1, 13, "expected a variable name"),
    ("(model (transition (t)))", "expected_name", 1, 20, "expected a tool name"),
    ("(model (var next Int))", "reserved_name", 1, 13, "`next` is a keyword"),
    ("(model (var <= Int))", "reserved_name", 1, 13, "`<=` is a keyword"),
    ("(model (transition t (params (a and))))", "reserved_name", 1, 33, "cannot be a local name"),
    ("(model (var 9lives Int))", "bad_name", 1, 13, "`9lives` is not a valid variable name"),
    ("(model (var x (Record (a-b Int))))", "bad_name", 1, 24, "not a valid field name"),
    ("(model (goal (field r 1x)))", "bad_name", 1, 23, "not a valid field name"),
    ("(model (goal (< é 1)))", "bad_name", 1, 17, "`é` is not a valid variable name"),
    ("(model (var x))", "bad_clause", 1, 8, "expected (var NAME TYPE)"),
    ("(model (const x Int))", "bad_clause", 1, 8, "expected (const NAME TYPE VALUE)"),
    ("(model (transition))", "bad_clause", 1, 8, "expected (transition TOOL"),
    ("(model (transition t (foo)))", "unknown_section", 1, 22, "expected (params ...)"),
    ("(model (transition t pre))", "unknown_section", 1, 22, "expected (params ...)"),
    ("(model (transition t (params (a))))", "bad_param", 1, 30, "expected (tool_param local_name)"),
    ("(model (transition t (params a)))", "bad_param", 1, 30, "expected (tool_param local_name)"),
    ("(model (var x Integer))", "bad_type", 1, 15, "`Integer` is not a type"),
    ('(model (var x "Int"))', "bad_type", 1, 15, "is not a type"),
    ("(model (var x (Enum x)))", "bad_type", 1, 21, "enum values are string literals"),
    ("(model (var x (Enum)))", "bad_type", 1, 15, "at least one value"),
    ("(model (var x (Record (a))))", "bad_type", 1, 23, "expected a field"),
    ("(model (var x (Record)))", "bad_type", 1, 15, "at least one field"),
    ("(model (var x (Array)))", "bad_type", 1, 15, "expected (Array TYPE)"),
    ("(model (var x (Foo Int)))", "bad_type", 1, 15, "expected a type"),
    (r'(model (const s String "\q"))', "bad_string", 1, 24, "invalid escape"),
    (r'(model (goal (= s "\u12")))', "bad_string", 1, 19, "invalid escape"),
    ("(model (goal (< x 1e400)))", "bad_number", 1, 19, "out of range"),
    ("(model\n (goal (< x -" + "9" * 4400 + ")))", "bad_number", 2, 13, "too long"),
    ("(model (const c Int x))", "bad_value", 1, 21, "`x` is not a value"),
    ("(model (const c (Record (a Int)) ((a 1) b)))", "bad_value", 1, 41, "expected a record field"),
    ("(model (goal and))", "unexpected_keyword", 1, 14, "`and` cannot stand alone"),
    ("(model (goal (= x next)))", "unexpected_keyword", 1, 19, "`next` cannot stand alone"),
    ("(model (goal (param)))", "bad_expression", 1, 14, "expected (param NAME)"),
    ("(model (goal (next a b)))", "bad_expression", 1, 14, "expected (next NAME)"),
    ("(model (goal (field x)))", "bad_expression", 1, 14, "expected (field EXPR NAME)"),
    ("(model (goal (contains a)))", "bad_expression", 1, 14, "expected (contains ARRAY ELEMENT)"),
    ("(model (goal (and)))", "bad_expression", 1, 14, "(and) needs operands"),
    ("(model (goal (foo x)))", "unknown_operator", 1, 15, "`foo` is not an operator"),
    ("(model (goal ((x) y)))", "unknown_operator", 1, 15, "this is not an operator"),
    ('(model (goal ("s" x)))', "unknown_operator", 1, 15, "this is not an operator"),
    ("(model (goal ()))", "unknown_operator", 1, 14, "this is not an operator"),
]


@pytest.mark.parametrize(("text", "code", "line", "column", "message"), SYNTAX_ERRORS)
def test_syntax_error_code_place_caret_and_hint(text: str, code: str, line: int, column: int, message: str) -> None:
    with pytest.raises(DslSyntaxError) as info:
        parse_model(text, origin="model.wm")
    error = info.value
    assert isinstance(error, MantraError) and isinstance(error, ValueError)
    assert (error.code, len(error.diagnostics)) == (code, 1)
    assert error.span is not None and (error.span.line, error.span.column) == (line, column)
    diagnostic = error.diagnostics[0]
    assert message in diagnostic.message
    assert diagnostic.hint
    rendered = str(error).splitlines()
    assert rendered[0] == f"model.wm:{line}:{column}: error[{code}]: {diagnostic.message}"
    source_line = text.splitlines()[line - 1]
    assert rendered[1] == f"  {source_line}"
    caret = rendered[2][2:]
    assert caret.strip() and set(caret.strip()) == {"^"}
    assert len(caret) - len(caret.lstrip()) == column - 1
    assert rendered[3] == f"  hint: {diagnostic.hint}"


def test_every_parser_error_code_is_covered() -> None:
    produced = set(re.findall(r'fail\(\s*"([a-z_]+)"', inspect.getsource(parser)))
    produced |= {"bad_expression", "bad_type", "bad_value"}  # f"bad_{what}" in _parse_one
    covered = {case[1] for case in SYNTAX_ERRORS} | {"empty", "bad_transition"}
    assert produced <= covered, produced - covered


@pytest.mark.parametrize("text", ["", "   \n\t", "; only a comment\n"])
def test_empty_text(text: str) -> None:
    with pytest.raises(DslSyntaxError) as info:
        parse_model(text)
    assert info.value.code == "empty" and info.value.span is None
    assert str(info.value) == "world model: error[empty]: no model found\n  hint: a world model is one (model ...) form"


def test_caret_spans_the_node_and_keeps_tabs() -> None:
    with pytest.raises(DslSyntaxError) as info:
        parse_model("(model\n\t(var x\tInteger))")
    lines = str(info.value).splitlines()
    assert lines[1] == "  \t(var x\tInteger))"
    assert lines[2] == "  \t      \t^^^^^^^"


def test_deep_nesting_below_the_limit_parses() -> None:
    depth = MAX_DEPTH - 3  # (model (goal ...)) takes two levels
    expr = parse_model("(model (goal " + "(not " * depth + "x" + ")" * depth + "))").goal[0]
    for _ in range(depth):
        assert isinstance(expr, OpApp)
        expr = expr.args[0]
    assert expr == VarRef("x")


@pytest.mark.parametrize(
    ("call", "text", "code", "column"),
    [
        (parse_expr, "", "bad_expression", None),
        (parse_expr, "x y", "bad_expression", 3),
        (parse_expr, "(and", "unclosed_paren", 1),
        (parse_expr, "(foo 1)", "unknown_operator", 2),
        (parse_expr, "model", "unexpected_keyword", 1),
        (parse_type, "Int Int", "bad_type", 5),
        (parse_value, "", "bad_value", None),
        (parse_transition, "(var x Int)", "bad_transition", 1),
    ],
)
def test_single_form_parsers_report_errors(
    call: Callable[[str], object], text: str, code: str, column: int | None
) -> None:
    with pytest.raises(DslSyntaxError) as info:
        call(text)
    assert info.value.code == code
    assert (info.value.span.column if info.value.span else None) == column
    assert info.value.diagnostics[0].hint


@pytest.mark.parametrize("digits", ["٣٤", "３", "1٣", "1.٥", "²"])
def test_d17_digits_outside_ascii_are_not_numbers(digits: str) -> None:
    with pytest.raises(DslSyntaxError):
        parse_model(f"(model (const c Int {digits}))")
    assert parse_value("34") == 34 and parse_value("-1.5e3") == -1500.0


def test_d17_a_lone_surrogate_is_refused_in_both_forms_with_one_code() -> None:
    from mantra_env.worldmodel import model_from_json, model_to_json

    with pytest.raises(DslSyntaxError) as text_form:
        parse_model('(model (const c String "\\ud800"))')
    assert [d.code for d in text_form.value.diagnostics] == ["bad_string"]
    data = model_to_json(parse_model('(model (const c String "x"))'))
    data["consts"][0]["value"] = "\ud800"
    with pytest.raises(DslSyntaxError) as python_form:
        model_from_json(data)
    text = json.dumps(data)
    assert "\\ud800" in text
    with pytest.raises(DslSyntaxError) as json_form:
        model_from_json(text)
    assert (
        [d.code for d in python_form.value.diagnostics]
        == [d.code for d in json_form.value.diagnostics]
        == ["bad_string"]
    )
    ok = parse_model('(model (const c String "\\ud83d\\ude00 é"))')  # a surrogate pair is one real character
    assert model_from_json(json.dumps(model_to_json(ok))) == ok
