"""Text → :class:`WorldModel`: a tokenizer, an S-expression reader and a converter to the typed AST.

Every node gets the span of its text. The first syntax problem raises :class:`DslSyntaxError` with its code,
span and a hint; whether names and types make sense is the type checker's job (:mod:`.typecheck`).
"""

from __future__ import annotations

import json
import math
import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import NoReturn

from mantra_env.limits import MAX_DEPTH, is_unicode
from mantra_env.worldmodel.ast import (
    COLLECTION_OPERATORS,
    OPERATORS,
    RESERVED,
    ArrayType,
    CollectionOp,
    ConstDecl,
    ConstValue,
    Contains,
    DslType,
    EnumType,
    Expr,
    FieldAccess,
    FieldDecl,
    ListLit,
    ListType,
    Lit,
    NextRef,
    OpApp,
    ParamBind,
    ParamRef,
    RecordType,
    ScalarType,
    Span,
    Transition,
    VarDecl,
    VarRef,
    WorldModel,
)
from mantra_env.worldmodel.diagnostics import Diagnostic, DslSyntaxError

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# ASCII digits only: \d would accept '٣٤' (and int() would read it as 34).
_INT = re.compile(r"[-+]?[0-9]+\Z")
_REAL = re.compile(r"[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+(?=[eE]))(?:[eE][-+]?[0-9]+)?\Z")
_TOKEN = re.compile(
    r"""(?P<space>\s+)|(?P<comment>;[^\n]*)|(?P<open>\()|(?P<close>\))"""
    r"""|(?P<string>"(?:[^"\\\n]|\\.)*")|(?P<badstring>"[^\n]*)|(?P<atom>[^\s()";]+)"""
)
SCALARS = ("Int", "Real", "Bool", "String")
CLAUSES = "(const NAME TYPE VALUE), (var NAME TYPE), (transition TOOL (params ...) (pre ...) (post ...)) or (goal ...)"


@dataclass(frozen=True, slots=True)
class _Atom:
    text: str
    is_string: bool
    span: Span


@dataclass(frozen=True, slots=True)
class _List:
    items: tuple[_Atom | _List, ...]
    span: Span


_SExpr = _Atom | _List


class _Source:
    """The text with a line index, to turn offsets into spans."""

    def __init__(self, text: str, origin: str) -> None:
        self.text = text
        self.origin = origin
        self._line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]

    def span(self, start: int, end: int) -> Span:
        line = bisect_right(self._line_starts, start)
        return Span(start, end, line, start - self._line_starts[line - 1] + 1)

    def fail(self, code: str, message: str, span: Span | None, hint: str = "") -> NoReturn:
        raise DslSyntaxError([Diagnostic(code, message, span, hint)], self.text, self.origin)


def _read_forms(source: _Source) -> list[_SExpr]:
    """Tokenize and read every top-level form."""
    stack: list[tuple[int, list[_SExpr]]] = []
    top: list[_SExpr] = []
    for match in _TOKEN.finditer(source.text):
        kind, start, end = match.lastgroup, match.start(), match.end()
        if kind in ("space", "comment"):
            continue
        items = stack[-1][1] if stack else top
        if kind == "open":
            if len(stack) >= MAX_DEPTH:
                source.fail(
                    "too_deep",
                    f"expressions nest more than {MAX_DEPTH} levels",
                    source.span(start, end),
                    "check the parentheses; split a deep condition into several entries",
                )
            stack.append((start, []))
        elif kind == "close":
            if not stack:
                source.fail(
                    "unbalanced_paren", "unexpected `)`", source.span(start, end), "remove it or add the `(` it closes"
                )
            opened, children = stack.pop()
            (stack[-1][1] if stack else top).append(_List(tuple(children), source.span(opened, end)))
        elif kind == "badstring":
            source.fail(
                "unterminated_string",
                "string literal is not closed on its line",
                source.span(start, end),
                'close it with `"`; write a quote inside a string as \\"',
            )
        else:
            items.append(_Atom(match.group(), kind == "string", source.span(start, end)))
    if stack:
        opened = stack[-1][0]
        source.fail(
            "unclosed_paren", "this `(` is never closed", source.span(opened, opened + 1), "add the missing `)`"
        )
    return top


def _read(source: _Source) -> _List:
    """Read the single top-level ``(model ...)`` form."""
    top = _read_forms(source)
    if not top:
        source.fail("empty", "no model found", None, "a world model is one (model ...) form")
    if len(top) > 1:
        source.fail(
            "trailing_input", "text after the end of the model", top[1].span, "a file holds exactly one (model ...)"
        )
    form = top[0]
    if not isinstance(form, _List) or not form.items or _head(form) != "model":
        source.fail("expected_model", "expected `(model ...)`", form.span, "wrap the clauses in (model ...)")
    return form


def _head(form: _List) -> str | None:
    first = form.items[0] if form.items else None
    return first.text if isinstance(first, _Atom) and not first.is_string else None


class _Converter:
    def __init__(self, source: _Source) -> None:
        self.source = source

    def fail(self, code: str, message: str, span: Span | None, hint: str = "") -> NoReturn:
        self.source.fail(code, message, span, hint)

    # --- structure ---------------------------------------------------------------------------------------------

    def model(self, form: _List) -> WorldModel:
        consts: list[ConstDecl] = []
        variables: list[VarDecl] = []
        transitions: list[Transition] = []
        goal: tuple[Expr, ...] | None = None
        for clause in form.items[1:]:
            head = _head(clause) if isinstance(clause, _List) else None
            if not isinstance(clause, _List) or head not in ("const", "var", "transition", "goal"):
                self.fail("unknown_clause", "expected a clause", clause.span, f"a model holds {CLAUSES}")
            if head == "const":
                consts.append(self.const(clause))
            elif head == "var":
                variables.append(self.var(clause))
            elif head == "transition":
                transitions.append(self.transition(clause))
            else:
                if goal is not None:
                    self.fail("duplicate_section", "a second (goal ...)", clause.span, "merge the goals into one")
                goal = tuple(self.expr(item) for item in clause.items[1:])
        return WorldModel(tuple(consts), tuple(variables), tuple(transitions), goal or (), form.span)

    def name(self, item: _SExpr, role: str) -> str:
        if not isinstance(item, _Atom) or item.is_string:
            self.fail("expected_name", f"expected a {role} name", item.span, "names are letters, digits and _")
        if item.text in RESERVED or item.text in OPERATORS:
            self.fail(
                "reserved_name", f"`{item.text}` is a keyword and cannot be a {role} name", item.span, "rename it"
            )
        if not NAME.match(item.text):
            self.fail(
                "bad_name",
                f"`{item.text}` is not a valid {role} name",
                item.span,
                "names start with a letter or _ and contain only letters, digits and _",
            )
        return item.text

    def arity(self, form: _List, count: int, shape: str) -> None:
        if len(form.items) != count:
            self.fail("bad_clause", f"expected {shape}", form.span, f"this form has {len(form.items) - 1} parts")

    def const(self, form: _List) -> ConstDecl:
        self.arity(form, 4, "(const NAME TYPE VALUE)")
        return ConstDecl(
            self.name(form.items[1], "constant"), self.type(form.items[2]), self.value(form.items[3]), form.span
        )

    def var(self, form: _List) -> VarDecl:
        self.arity(form, 3, "(var NAME TYPE)")
        return VarDecl(self.name(form.items[1], "variable"), self.type(form.items[2]), form.span)

    def transition(self, form: _List) -> Transition:
        if len(form.items) < 2:
            self.fail(
                "bad_clause",
                "expected (transition TOOL (params ...) (pre ...) (post ...))",
                form.span,
                "name the tool, e.g. (transition check_inventory (params (item itm)) (pre) (post))",
            )
        tool = self.name(form.items[1], "tool")
        sections: dict[str, _List] = {}
        for section in form.items[2:]:
            head = _head(section) if isinstance(section, _List) else None
            if not isinstance(section, _List) or head not in ("params", "pre", "post"):
                self.fail(
                    "unknown_section",
                    "expected (params ...), (pre ...) or (post ...)",
                    section.span,
                    "a transition is (transition TOOL (params (tool_param local) ...) (pre EXPR ...) (post EXPR ...))",
                )
            if head in sections:
                self.fail(
                    "duplicate_section",
                    f"a second ({head} ...) in transition {tool}",
                    section.span,
                    f"merge the two ({head} ...) sections into one",
                )
            sections[head] = section
        params = tuple(self.param_bind(item) for item in sections["params"].items[1:]) if "params" in sections else ()
        pre = tuple(self.expr(item) for item in sections["pre"].items[1:]) if "pre" in sections else ()
        post = tuple(self.expr(item) for item in sections["post"].items[1:]) if "post" in sections else ()
        return Transition(tool, params, pre, post, form.span)

    def param_bind(self, item: _SExpr) -> ParamBind:
        if not isinstance(item, _List) or len(item.items) != 2:
            self.fail(
                "bad_param",
                "expected (tool_param local_name)",
                item.span,
                "bind each tool argument you use, e.g. (item_id item)",
            )
        return ParamBind(self.name(item.items[0], "parameter"), self.name(item.items[1], "local"), item.span)

    # --- types and values --------------------------------------------------------------------------------------

    def type(self, item: _SExpr) -> DslType:
        if isinstance(item, _Atom):
            if item.text in SCALARS and not item.is_string:
                return ScalarType(item.text, item.span)  # type: ignore[arg-type]
            self.fail("bad_type", f"`{item.text}` is not a type", item.span, _TYPE_HINT)
        head = _head(item)
        args = item.items[1:]
        if head == "Enum":
            values: list[str] = []
            for arg in args:
                if not isinstance(arg, _Atom) or not arg.is_string:
                    self.fail("bad_type", "enum values are string literals", arg.span, 'e.g. (Enum "NONE" "BOOKED")')
                values.append(self.string(arg))
            if not values:
                self.fail("bad_type", "an enum needs at least one value", item.span, 'e.g. (Enum "NONE" "BOOKED")')
            return EnumType(tuple(values), span=item.span)
        if head == "Record":
            fields: list[FieldDecl] = []
            for arg in args:
                if not isinstance(arg, _List) or len(arg.items) != 2:
                    self.fail("bad_type", "expected a field (name TYPE)", arg.span, "e.g. (Record (status Bool))")
                fields.append(FieldDecl(self.name(arg.items[0], "field"), self.type(arg.items[1]), arg.span))
            if not fields:
                self.fail("bad_type", "a record needs at least one field", item.span, "e.g. (Record (status Bool))")
            return RecordType(tuple(fields), span=item.span)
        if head in ("Array", "List"):
            if len(args) != 1:
                self.fail("bad_type", f"expected ({head} TYPE)", item.span, f"e.g. ({head} String)")
            element = self.type(args[0])
            return ArrayType(element, span=item.span) if head == "Array" else ListType(element, span=item.span)
        self.fail("bad_type", "expected a type", item.span, _TYPE_HINT)

    def string(self, atom: _Atom) -> str:
        try:
            value = json.loads(atom.text)
        except ValueError:
            self.fail("bad_string", "invalid escape in string literal", atom.span, 'use \\" \\\\ \\n \\t or \\uXXXX')
        if not isinstance(value, str):  # pragma: no cover - the token regex only admits quoted text
            self.fail("bad_string", "invalid string literal", atom.span)
        if not is_unicode(value):
            # Refused in the JSON form too (model_from_json): such text cannot be stored or sent as UTF-8.
            self.fail("bad_string", "string literal holds a lone surrogate", atom.span, "use real characters")
        return value

    def literal(self, atom: _Atom) -> bool | int | float | str | None:
        """The literal value of an atom, or None if it is a name or symbol."""
        if atom.is_string:
            return self.string(atom)
        text = atom.text
        if text in ("true", "false"):
            return text == "true"
        if _INT.match(text):
            try:
                return int(text)
            except ValueError:
                self.fail("bad_number", "integer literal is too long", atom.span, "use at most 4000 digits")
        if _REAL.match(text):
            value = float(text)
            if not math.isfinite(value):
                self.fail("bad_number", f"`{text}` is out of range", atom.span, "use a finite number")
            return value
        return None

    def value(self, item: _SExpr) -> ConstValue:
        if isinstance(item, _Atom):
            value = self.literal(item)
            if value is None:
                self.fail(
                    "bad_value",
                    f"`{item.text}` is not a value",
                    item.span,
                    'a constant\'s value is a literal (1, 2.5, true, "text"), a list (v ...) '
                    "or a record ((field v) ...)",
                )
            return value
        first = item.items[0] if item.items else None
        if isinstance(first, _List) and first.items and _head(first) not in (None, "true", "false"):
            record: dict[str, ConstValue] = {}
            for pair in item.items:
                if not isinstance(pair, _List) or len(pair.items) != 2:
                    self.fail(
                        "bad_value", "expected a record field (name value)", pair.span, "e.g. ((status true) (count 2))"
                    )
                record[self.name(pair.items[0], "field")] = self.value(pair.items[1])
            return record
        return [self.value(element) for element in item.items]

    # --- expressions -------------------------------------------------------------------------------------------

    def expr(self, item: _SExpr) -> Expr:
        if isinstance(item, _Atom):
            value = self.literal(item)
            if value is not None:
                return Lit(value, span=item.span)
            if item.text in OPERATORS or item.text in RESERVED:
                self.fail(
                    "unexpected_keyword",
                    f"`{item.text}` cannot stand alone here",
                    item.span,
                    f"write ({item.text} ...) with its operands",
                )
            return VarRef(self.name(item, "variable"), span=item.span)
        head = _head(item)
        args = item.items[1:]
        if head in ("param", "next"):
            if len(args) != 1:
                example = "(param itm)" if head == "param" else "(next in_stock)"
                self.fail("bad_expression", f"expected ({head} NAME)", item.span, f"e.g. {example}")
            name = self.name(args[0], "parameter" if head == "param" else "variable")
            return ParamRef(name, span=item.span) if head == "param" else NextRef(name, span=item.span)
        if head == "field":
            if len(args) != 2:
                self.fail("bad_expression", "expected (field EXPR NAME)", item.span, "e.g. (field request status)")
            return FieldAccess(self.expr(args[0]), self.name(args[1], "field"), span=item.span)
        if head == "contains":
            if len(args) != 2:
                self.fail(
                    "bad_expression",
                    "expected (contains ARRAY ELEMENT)",
                    item.span,
                    "e.g. (contains approved (param itm))",
                )
            return Contains(self.expr(args[0]), self.expr(args[1]), span=item.span)
        if head == "list":
            if not args:
                self.fail("bad_expression", "(list) needs elements", item.span, "test emptiness with (empty L)")
            return ListLit(tuple(self.expr(arg) for arg in args), span=item.span)
        if head in COLLECTION_OPERATORS:
            return CollectionOp(head, tuple(self.expr(arg) for arg in args), span=item.span)  # type: ignore[arg-type]
        if head in OPERATORS:
            if not args:
                self.fail("bad_expression", f"({head}) needs operands", item.span, f"write ({head} EXPR ...)")
            return OpApp(head, tuple(self.expr(arg) for arg in args), span=item.span)  # type: ignore[arg-type]
        shown = f"`{head}`" if head is not None else "this"
        self.fail(
            "unknown_operator",
            f"{shown} is not an operator",
            item.items[0].span if item.items else item.span,
            "expressions are NAME, a literal, (param x), (next v), (field e f), (contains a e), (list e ...), "
            "(length l), (empty l), (subset l s), (union a x), (difference a x), (sum l) or "
            "(op e ...) with op one of + - * / = < <= > >= and or not =>",
        )


_TYPE_HINT = 'types are Int, Real, Bool, String, (Enum "a" ...), (Record (name TYPE) ...), (Array TYPE) or (List TYPE)'


def parse_model(text: str, origin: str = "world model") -> WorldModel:
    """Parse the S-expression text of a world model.

    Args:
        text: the model, ``(model clause ...)``; ``;`` starts a comment.
        origin: how error messages name the text (e.g. a file name or case id).

    Raises:
        DslSyntaxError: with the code, span and a hint for the first problem.
    """
    source = _Source(text, origin)
    return _Converter(source).model(_read(source))


def parse_expr(text: str, origin: str = "expression") -> Expr:
    """Parse one DSL expression (typed edits carry expressions as text).

    Raises:
        DslSyntaxError: if the text is not exactly one well-formed expression.
    """
    converter, form = _parse_one(text, origin, "expression")
    return converter.expr(form)


def _parse_one(text: str, origin: str, what: str) -> tuple[_Converter, _SExpr]:
    source = _Source(text, origin)
    forms = _read_forms(source)
    if len(forms) != 1:
        source.fail(
            f"bad_{what}",
            f"expected one {what}, found {len(forms)}",
            forms[1].span if forms[1:] else None,
            f"give exactly one {what}",
        )
    return _Converter(source), forms[0]


def parse_type(text: str, origin: str = "type") -> DslType:
    """Parse one DSL type, e.g. ``(Enum "NONE" "BOOKED")`` (typed edits carry types as text)."""
    converter, form = _parse_one(text, origin, "type")
    return converter.type(form)


def parse_value(text: str, origin: str = "value") -> ConstValue:
    """Parse one constant value: a literal, ``(v ...)`` or ``((field v) ...)``."""
    converter, form = _parse_one(text, origin, "value")
    return converter.value(form)


def parse_transition(text: str, origin: str = "transition") -> Transition:
    """Parse one ``(transition ...)`` clause."""
    converter, form = _parse_one(text, origin, "transition")
    if not isinstance(form, _List) or _head(form) != "transition":
        converter.fail(
            "bad_transition",
            "expected (transition TOOL ...)",
            form.span,
            "e.g. (transition TOOL (params) (pre) (post))",
        )
    return converter.transition(form)
