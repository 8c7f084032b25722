"""The type checker: names, types and the tool schema.

:func:`check_model` reports *every* problem it finds (code, span, hint) in one :class:`DslTypeError`, so a
repair round can fix them together. On success it returns a :class:`CheckedModel` holding the type of every
expression and of every bound tool parameter, which is all the compiler needs.

Type rules (``T ~ U`` means T and U are equal, or both numeric):

* ``+ - * /`` take Int/Real operands (``-`` may be unary); the result is Real if any operand is Real.
  ``/`` on two Ints is integer division (as in SMT-LIB).
* ``=`` takes two operands of one type (records and arrays structurally); Int and Real mix; a string literal
  compared with an enum must be one of the enum's values and means that value.
* ``< <= > >=`` take two numeric operands. ``and``/``or`` take Bool operands, ``not`` one, ``=>`` two.
* ``(field e f)`` needs a record ``e`` with field ``f``; ``(contains a x)`` an array ``a`` of ``x``'s type.
* Lists ``(List T)`` hold scalars, enums or flat records (scalar and enum fields); they are the types of
  list-valued tool parameters and constants, never of state variables (a state collection is an Array).
  ``(list e ...)`` takes one or more elements of one type. ``(contains l x)`` works on lists too;
  ``(length l)`` is an Int, ``(empty l)`` a Bool, ``(sum l)`` of a numeric list its element type;
  ``(subset l s)`` takes a list ``l`` and a list or array ``s`` of its element type; ``(union a x)`` and
  ``(difference a x)`` take an array ``a`` and a list or array ``x`` of its element type and are arrays;
  ``(field l f)`` on a list of records is the list of the elements' ``f`` fields. ``contains`` and ``subset``
  compare records whole (every field), so they can pin which values go together. Lists are not compared with
  ``=`` (their order semantics belongs to the tool schema): use ``subset``, ``contains`` and ``length``.
* Every top-level ``pre``/``post``/``goal`` entry is Bool. ``next`` appears only in postconditions, on state
  variables; ``param`` only in transitions, on names bound in ``params``.
* Arrays hold scalars or enums (membership is their only observation).
* Names and numbers obey the text form's rules, also in a model built in code or loaded from JSON: names are
  identifiers that are not keywords; reals are finite; integers are short enough to print in decimal.
* With a tool schema, every transition names a tool that exists and binds only parameters the tool has; a
  bound parameter's type comes from its JSON schema (string → String, string with ``enum`` → Enum,
  integer → Int, number → Real, boolean → Bool, array of those → List, array of objects whose properties are
  all of those → List of Record). Parameters of other schema types cannot be bound. Without a
  schema a parameter takes the type of what it is first compared or combined with (Bool as an operand of
  ``and or not =>`` or as a whole condition), else String.
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mantra_env.errors import did_you_mean
from mantra_env.tools import ToolSpec
from mantra_env.worldmodel.ast import (
    BOOL,
    INT,
    OPERATORS,
    REAL,
    RESERVED,
    STRING,
    ArrayType,
    CollectionOp,
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
    ParamRef,
    RecordType,
    ScalarType,
    Span,
    Transition,
    VarRef,
    WorldModel,
    subexpressions,
    type_text,
)
from mantra_env.worldmodel.diagnostics import Diagnostic, DslTypeError
from mantra_env.worldmodel.parser import NAME

NUMERIC = (INT, REAL)
_ARITY: dict[str, tuple[int, int | None]] = {
    "not": (1, 1),
    "=>": (2, 2),
    "/": (2, 2),
    "=": (2, 2),
    "<": (2, 2),
    "<=": (2, 2),
    ">": (2, 2),
    ">=": (2, 2),
}


def schema_type(schema: Mapping[str, Any] | None) -> DslType | None:
    """The DSL type of a JSON-schema parameter, or None if the DSL cannot express it."""
    if not schema:
        return None
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        element = _element_type(items) if isinstance(items, Mapping) else None
        return ListType(element) if element is not None else None
    if kind == "string":
        values = schema.get("enum")
        if isinstance(values, list) and values and all(isinstance(v, str) for v in values):
            return EnumType(tuple(values))
        return STRING
    return {"integer": INT, "number": REAL, "boolean": BOOL}.get(kind) if isinstance(kind, str) else None


def _element_type(schema: Mapping[str, Any]) -> DslType | None:
    """A list element: a scalar or enum, or an object of scalar and enum properties (a flat record)."""
    if schema.get("type") != "object":
        found = schema_type(schema)
        return found if isinstance(found, ScalarType | EnumType) else None
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        return None
    fields = []
    for name, sub in properties.items():
        found = schema_type(sub) if isinstance(sub, Mapping) else None
        if not isinstance(found, ScalarType | EnumType):
            return None
        fields.append(FieldDecl(str(name), found))
    return RecordType(tuple(fields))


@dataclass(frozen=True, slots=True)
class BoundParam:
    """A tool parameter bound by a transition's ``params`` block."""

    tool: str
    tool_param: str
    local: str
    type: DslType


@dataclass
class CheckedModel:
    """A well-typed model with the types the compiler needs."""

    model: WorldModel
    var_types: dict[str, DslType]
    const_types: dict[str, DslType]
    params: dict[str, dict[str, BoundParam]]  # tool -> local name -> binding
    tools: dict[str, ToolSpec] | None
    _types: dict[int, DslType] = field(default_factory=dict, repr=False)

    def type_of(self, expr: Expr) -> DslType:
        """The type of an expression of this model (a string literal compared with an enum has the enum type)."""
        return self._types[id(expr)]

    def const_value(self, name: str) -> ConstValue:
        decl = self.model.const(name)
        assert decl is not None
        return decl.value


class _Checker:
    def __init__(self, model: WorldModel, tools: dict[str, ToolSpec] | None, source: str | None, origin: str) -> None:
        self.model = model
        self.source = source
        self.origin = origin
        self.tools = tools
        self.problems: list[Diagnostic] = []
        self.types: dict[int, DslType] = {}
        self.var_types: dict[str, DslType] = {}
        self.const_types: dict[str, DslType] = {}
        self.params: dict[str, dict[str, BoundParam]] = {}
        self.unknown_params: set[tuple[str, str]] = set()  # (tool, local) typed by first use (no schema)

    def report(self, code: str, message: str, span: Span | None, hint: str = "") -> None:
        self.problems.append(Diagnostic(code, message, span, hint))

    # --- declarations ------------------------------------------------------------------------------------------

    def run(self) -> CheckedModel:
        names: dict[str, str] = {}
        for const in self.model.consts:
            if self.declare(names, const.name, "constant", const.span) and self.valid_type(const.const_type):
                self.const_types[const.name] = const.const_type
                self.check_value(const.value, const.const_type, f"constant {const.name}", const.span)
        for var in self.model.vars:
            if self.declare(names, var.name, "state variable", var.span) and self.valid_type(var.var_type):
                if _has_list(var.var_type):
                    self.report(
                        "unsupported_type",
                        f"state variable {var.name} holds a list",
                        var.var_type.span or var.span,
                        "state collections are arrays: (Array T); update them with (union a l) and (difference a l)",
                    )
                    continue
                self.var_types[var.name] = var.var_type
        seen_tools: set[str] = set()
        firsts: list[Transition] = []  # a duplicate's conditions are not checked against the first's params
        for transition in self.model.transitions:
            if transition.tool in seen_tools:
                self.report(
                    "duplicate_transition",
                    f"a second transition for tool {transition.tool}",
                    transition.span,
                    "merge its pre- and postconditions into the first",
                )
                continue
            seen_tools.add(transition.tool)
            firsts.append(transition)
            self.valid_name(transition.tool, "tool", transition.span)
            self.bind_params(transition)
        for transition in firsts:
            if transition.tool not in self.params:
                continue
            for expr in transition.pre:
                self.top_level(expr, transition, "pre")
            for expr in transition.post:
                self.top_level(expr, transition, "post")
        for expr in self.model.goal:
            self.top_level(expr, None, "goal")
        if self.problems:
            raise DslTypeError(self.problems, self.source, self.origin)
        for transition in self.model.transitions:  # every parameter occurrence gets its binding's final type
            bound = self.params.get(transition.tool, {})
            for root in (*transition.pre, *transition.post):
                for node in subexpressions(root):
                    if isinstance(node, ParamRef) and node.name in bound:
                        self.types[id(node)] = bound[node.name].type
        return CheckedModel(self.model, self.var_types, self.const_types, self.params, self.tools, self.types)

    def declare(self, names: dict[str, str], name: str, role: str, span: Span | None) -> bool:
        self.valid_name(name, role, span)
        if name in names:
            self.report("duplicate_name", f"{name} is already declared as a {names[name]}", span, "rename one of them")
            return False
        names[name] = role
        return True

    def valid_name(self, name: str, role: str, span: Span | None) -> None:
        """Names the parser would reject (a model built in code or loaded from JSON may hold any string) would
        make the model's text unparseable."""
        if not NAME.match(name) or name in RESERVED or name in OPERATORS:
            self.report(
                "bad_name",
                f"{_show(name)} is not a valid {role} name",
                span,
                "names start with a letter or _, contain only letters, digits and _, and are not keywords",
            )

    def valid_type(self, dsl_type: DslType) -> bool:
        ok = True
        if isinstance(dsl_type, EnumType):
            if len(set(dsl_type.values)) != len(dsl_type.values) or not dsl_type.values:
                self.report("bad_enum", "enum values must be distinct (and at least one)", dsl_type.span)
                ok = False
        elif isinstance(dsl_type, RecordType):
            field_names = [f.name for f in dsl_type.fields]
            if len(set(field_names)) != len(field_names) or not field_names:
                self.report("bad_record", "record field names must be distinct (and at least one)", dsl_type.span)
                ok = False
            for decl in dsl_type.fields:
                self.valid_name(decl.name, "field", decl.span or dsl_type.span)
            ok = all([self.valid_type(f.field_type) for f in dsl_type.fields]) and ok
        elif isinstance(dsl_type, ListType):
            element = dsl_type.element
            nested = isinstance(element, ArrayType | ListType) or (
                isinstance(element, RecordType)
                and any(not isinstance(f.field_type, ScalarType | EnumType) for f in element.fields)
            )
            if nested:
                self.report(
                    "unsupported_type",
                    "list elements are scalars, enums or records of scalar and enum fields",
                    dsl_type.span,
                    "flatten the element into one record of scalar fields",
                )
                ok = False
            else:
                ok = self.valid_type(element)
        elif isinstance(dsl_type, ArrayType):
            if isinstance(dsl_type.element, RecordType | ArrayType | ListType):
                self.report(
                    "unsupported_type",
                    f"arrays of {dsl_type.element.type.lower()}s are not supported",
                    dsl_type.span,
                    "use an array of scalars or enums, or one array per record field",
                )
                ok = False
            else:
                ok = self.valid_type(dsl_type.element)
        return ok

    def check_value(self, value: ConstValue, dsl_type: DslType, where: str, span: Span | None) -> None:
        problem = value_problem(value, dsl_type)
        if problem:
            self.report("bad_value", f"{where}: {problem}", span, f"give a value of type {type_text(dsl_type)}")

    def bind_params(self, transition: Transition) -> None:
        spec = self.tools.get(transition.tool) if self.tools is not None else None
        if self.tools is not None and spec is None:
            self.report(
                "unknown_tool",
                f"there is no tool named {transition.tool}",
                transition.span,
                did_you_mean(transition.tool, self.tools, quote=False) or "write one transition per tool of the domain",
            )
            return
        bound: dict[str, BoundParam] = {}
        tool_params: set[str] = set()
        for bind in transition.params:
            self.valid_name(bind.tool_param, "parameter", bind.span)
            self.valid_name(bind.local, "local", bind.span)
            if bind.local in bound:
                self.report("duplicate_name", f"local name {bind.local} is bound twice", bind.span)
                continue
            if bind.tool_param in tool_params:
                self.report("duplicate_name", f"parameter {bind.tool_param} is bound twice", bind.span)
                continue
            tool_params.add(bind.tool_param)
            if spec is None:
                bound[bind.local] = BoundParam(transition.tool, bind.tool_param, bind.local, STRING)
                self.unknown_params.add((transition.tool, bind.local))
                continue
            schema = spec.param_schema(bind.tool_param)
            if schema is None:
                self.report(
                    "unknown_param",
                    f"tool {transition.tool} has no parameter {bind.tool_param}",
                    bind.span,
                    did_you_mean(bind.tool_param, spec.properties, quote=False)
                    or f"its parameters are: {', '.join(spec.properties) or '(none)'}",
                )
                continue
            param_type = schema_type(schema)
            if param_type is None:
                self.report(
                    "unsupported_param_type",
                    f"parameter {bind.tool_param} of {transition.tool} has a JSON type the DSL cannot express",
                    bind.span,
                    "bind only string, enum, integer, number and boolean parameters, and arrays of those "
                    "or of flat objects of those",
                )
                continue
            bound[bind.local] = BoundParam(transition.tool, bind.tool_param, bind.local, param_type)
        self.params[transition.tool] = bound

    # --- expressions -------------------------------------------------------------------------------------------

    def top_level(self, expr: Expr, transition: Transition | None, section: str) -> None:
        if self.is_unknown_param(expr, transition):  # a bare (param p) condition: p is a Bool
            self.unify_param(expr, BOOL, transition)
        found = self.infer(expr, transition, section)
        if transition is not None:  # parameters used without a typing context are Strings from here on
            self.unknown_params -= {(transition.tool, e.name) for e in subexpressions(expr) if isinstance(e, ParamRef)}
        if found is not None and found != BOOL:
            where = f"{section} of {transition.tool}" if transition else "goal"
            self.report(
                "not_bool",
                f"every {where} entry must be a Bool condition, not a {type_text(found)} value",
                expr.span,
                'compare it with something, e.g. (= status "NONE")',
            )

    def note(self, expr: Expr, found: DslType) -> DslType:
        self.types[id(expr)] = found
        return found

    def infer(self, expr: Expr, transition: Transition | None, section: str) -> DslType | None:
        """The type of ``expr``, or None after reporting why it has none."""
        if isinstance(expr, Lit):
            value = expr.value
            if not _representable(value):
                self.report("bad_literal", f"{_show(value)} is not a number the DSL can hold", expr.span)
                return None
            kind = BOOL if isinstance(value, bool) else INT if isinstance(value, int) else REAL
            return self.note(expr, STRING if isinstance(value, str) else kind)
        if isinstance(expr, VarRef):
            found = self.var_types.get(expr.name) or self.const_types.get(expr.name)
            if found is None:
                self.unknown_name(expr.name, expr.span, transition)
                return None
            return self.note(expr, found)
        if isinstance(expr, NextRef):
            if section != "post":
                self.report(
                    "next_outside_post",
                    f"(next {expr.name}) in a {section}",
                    expr.span,
                    "the post-state exists only in postconditions; use the bare name for the current state",
                )
                return None
            if expr.name in self.const_types:
                self.report("next_of_constant", f"{expr.name} is a constant and has no next value", expr.span)
                return None
            found = self.var_types.get(expr.name)
            if found is None:
                self.unknown_name(expr.name, expr.span, transition)
                return None
            return self.note(expr, found)
        if isinstance(expr, ParamRef):
            if transition is None:
                self.report("param_outside_transition", "(param ...) in the goal", expr.span, "goals see state only")
                return None
            bind = self.params[transition.tool].get(expr.name)
            if bind is None:
                bound = ", ".join(self.params[transition.tool]) or "(none)"
                self.report(
                    "unknown_param",
                    f"{expr.name} is not bound in the params of {transition.tool}",
                    expr.span,
                    f"add ({expr.name} {expr.name}) to (params ...) or use a bound local name: {bound}",
                )
                return None
            return self.note(expr, bind.type)
        if isinstance(expr, FieldAccess):
            record = self.infer(expr.record, transition, section)
            if record is None:
                return None
            of_list = isinstance(record, ListType) and isinstance(record.element, RecordType)
            if of_list:  # (field l f) on a list of records: the list of the elements' f fields
                assert isinstance(record, ListType)
                record = record.element
            if not isinstance(record, RecordType):
                self.report("not_a_record", f"(field ...) of a {type_text(record)} value", expr.span)
                return None
            found = record.field_type(expr.name)
            if found is None:
                names = ", ".join(f.name for f in record.fields)
                self.report("unknown_field", f"the record has no field {expr.name}", expr.span, f"fields: {names}")
                return None
            return self.note(expr, ListType(found) if of_list else found)
        if isinstance(expr, Contains):
            array = self.infer(expr.array, transition, section)
            element = self.infer(expr.element, transition, section)
            if array is None or element is None:
                return None
            if not isinstance(array, ArrayType | ListType):
                self.report("not_an_array", f"(contains ...) on a {type_text(array)} value", expr.array.span)
                return None
            if self.is_unknown_param(expr.element, transition):
                self.unify_param(expr.element, array.element, transition)
                element = array.element
            if not self.compatible(array.element, expr.element, element):
                self.mismatch(expr, array.element, element)
                return None
            return self.note(expr, BOOL)
        if isinstance(expr, ListLit):
            return self.list_literal(expr, transition, section)
        if isinstance(expr, CollectionOp):
            return self.collection(expr, transition, section)
        return self.op(expr, transition, section)

    def list_literal(self, expr: ListLit, transition: Transition | None, section: str) -> DslType | None:
        found = [self.infer(item, transition, section) for item in expr.items]
        if any(t is None for t in found):
            return None
        types = [t for t in found if t is not None]
        element = types[0]  # the first element sets the type; a later one that differs is the one reported
        if any(t == REAL for t in types) and all(t in NUMERIC for t in types):
            element = REAL
        for item, t in zip(expr.items, types, strict=True):
            if not isinstance(t, ScalarType | EnumType):
                self.report("type_mismatch", f"list elements are scalars or enums, not {type_text(t)}", item.span)
                return None
            if not self.compatible(element, item, t):
                self.mismatch(item, element, t)
                return None
        return self.note(expr, ListType(element))

    def collection(self, expr: CollectionOp, transition: Transition | None, section: str) -> DslType | None:
        symbol, args = expr.symbol, expr.args
        count = 1 if symbol in ("length", "empty", "sum") else 2
        if len(args) != count:
            self.report("arity", f"({symbol} ...) takes exactly {count} operand(s), got {len(args)}", expr.span)
            return None
        found = [self.infer(arg, transition, section) for arg in args]
        if any(t is None for t in found):
            return None
        first, *rest = (t for t in found if t is not None)
        wanted = "an array" if symbol in ("union", "difference") else "a list"
        if not isinstance(first, ArrayType if symbol in ("union", "difference") else ListType):
            self.report(
                "type_mismatch",
                f"({symbol} ...) needs {wanted} as its first operand, not {type_text(first)}",
                args[0].span,
                "lists are list-valued parameters, list constants and (list e ...); arrays are (Array T) variables",
            )
            return None
        if symbol == "length":
            return self.note(expr, INT)
        if symbol == "empty":
            return self.note(expr, BOOL)
        if symbol == "sum":
            if first.element not in NUMERIC:
                self.report("type_mismatch", f"(sum ...) of a {type_text(first)}", expr.span, "sum a numeric list")
                return None
            return self.note(expr, first.element)
        (second,) = rest
        literal = args[1]
        if isinstance(literal, ListLit) and isinstance(first.element, EnumType) and second == ListType(STRING):
            # (list "a" "b") against an enum list: each string must be one of its values
            for item in literal.items:
                self.compatible(first.element, item, STRING)
            second = self.note(literal, ListType(first.element))
        if not isinstance(second, ArrayType | ListType) or not (
            second.element == first.element or {first.element, second.element} <= set(NUMERIC)
        ):
            self.report(
                "type_mismatch",
                f"({symbol} ...) needs a list or array of {type_text(first.element)} as its second operand, "
                f"not {type_text(second)}",
                args[1].span,
            )
            return None
        return self.note(expr, BOOL if symbol == "subset" else first)

    def op(self, expr: OpApp, transition: Transition | None, section: str) -> DslType | None:
        symbol, args = expr.symbol, expr.args
        found = [self.infer(arg, transition, section) for arg in args]
        if any(t is None for t in found):
            return None
        types: list[DslType] = [t for t in found if t is not None]
        # A schema-less parameter may have been typed by a later sibling (``(<= (param q) (- n (param q)))``):
        # read every parameter operand's type from its binding, not from the placeholder noted earlier.
        for i, arg in enumerate(args):
            if isinstance(arg, ParamRef) and transition is not None:
                bind = self.params[transition.tool].get(arg.name)
                if bind is not None and not self.is_unknown_param(arg, transition):
                    types[i] = self.note(arg, bind.type)
        low, high = _ARITY.get(symbol, (1, None))
        if len(args) < low or (high is not None and len(args) > high):
            count = f"exactly {low}" if low == high else f"at least {low}"
            self.report("arity", f"({symbol} ...) takes {count} operand(s), got {len(args)}", expr.span)
            return None
        if symbol in ("and", "or", "not", "=>"):
            for i, arg in enumerate(args):
                if self.is_unknown_param(arg, transition):
                    self.unify_param(arg, BOOL, transition)
                    types[i] = BOOL
            for arg, t in zip(args, types, strict=True):
                if t != BOOL:
                    self.report("type_mismatch", f"`{symbol}` needs Bool operands, not {type_text(t)}", arg.span)
                    return None
            return self.note(expr, BOOL)
        if symbol == "=":
            left, right = args
            if self.is_unknown_param(left, transition) and not self.is_unknown_param(right, transition):
                self.unify_param(left, types[1], transition)
                types[0] = types[1]
            elif self.is_unknown_param(right, transition):
                self.unify_param(right, types[0], transition)
                types[1] = types[0]
            if any(isinstance(t, ListType) for t in types):
                self.report(
                    "type_mismatch",
                    "lists are not compared with =",
                    expr.span,
                    "use (subset l s), (contains l x), (length l) or (empty l)",
                )
                return None
            if self.compatible(types[0], right, types[1]) or self.compatible(types[1], left, types[0]):
                return self.note(expr, BOOL)
            self.mismatch(expr, types[0], types[1])
            return None
        known = [t for arg, t in zip(args, types, strict=True) if not self.is_unknown_param(arg, transition)]
        numeric = next((t for t in known if t in NUMERIC), INT)
        for i, arg in enumerate(args):  # arithmetic and ordering: numeric operands
            if self.is_unknown_param(arg, transition):
                self.unify_param(arg, numeric, transition)
                types[i] = numeric
        for arg, t in zip(args, types, strict=True):
            if t not in NUMERIC:
                self.report(
                    "type_mismatch",
                    f"`{symbol}` needs Int or Real operands, not {type_text(t)}",
                    arg.span,
                    "strings and enums support only `=`" if t == STRING or isinstance(t, EnumType) else "",
                )
                return None
        if symbol in ("<", "<=", ">", ">="):
            return self.note(expr, BOOL)
        return self.note(expr, REAL if REAL in types else INT)

    def compatible(self, expected: DslType, expr: Expr, found: DslType) -> bool:
        """Whether ``expr`` of type ``found`` may stand where ``expected`` is; an enum-value string literal
        becomes an enum literal."""
        if expected == found or (expected in NUMERIC and found in NUMERIC):
            return True
        if isinstance(expected, EnumType) and isinstance(expr, Lit) and isinstance(expr.value, str):
            if expr.value in expected.values:
                self.note(expr, expected)
                return True
            self.report(
                "unknown_enum_value",
                f"{expr.value!r} is not a value of {type_text(expected)}",
                expr.span,
                did_you_mean(expr.value, expected.values, quote=False) or "use one of the enum's values",
            )
            return True  # reported; no second mismatch message
        return False

    def unify_param(self, expr: Expr, other: DslType, transition: Transition | None) -> None:
        """Without a tool schema, a parameter takes the type of what it is first used with."""
        if transition is None or not isinstance(expr, ParamRef):
            return
        key = (transition.tool, expr.name)
        if key not in self.unknown_params:
            return
        self.unknown_params.discard(key)
        bind = self.params[transition.tool][expr.name]
        self.params[transition.tool][expr.name] = BoundParam(bind.tool, bind.tool_param, bind.local, other)
        self.types[id(expr)] = other

    def is_unknown_param(self, expr: Expr, transition: Transition | None) -> bool:
        return (
            transition is not None
            and isinstance(expr, ParamRef)
            and (transition.tool, expr.name) in self.unknown_params
        )

    def mismatch(self, expr: Expr, left: DslType, right: DslType) -> None:
        self.report(
            "type_mismatch",
            f"cannot compare {type_text(left)} with {type_text(right)}",
            expr.span,
            "both sides of = (and the element of contains) must have one type; Int and Real mix",
        )

    def unknown_name(self, name: str, span: Span | None, transition: Transition | None) -> None:
        declared = [*self.var_types, *self.const_types]
        hint = did_you_mean(name, declared, quote=False) or "declare it with (var NAME TYPE)"
        if transition is not None and name in self.params.get(transition.tool, {}):
            hint = f"{name} is a parameter here: write (param {name})"
        self.report("unknown_name", f"{name} is not a declared state variable or constant", span, hint)


_PYTHON_TYPES: dict[str, type | tuple[type, ...]] = {"Int": int, "Real": (int, float), "Bool": bool, "String": str}


def value_problem(value: ConstValue, dsl_type: DslType) -> str:
    """Why ``value`` is not a value of ``dsl_type`` ('' if it is)."""
    if isinstance(dsl_type, ScalarType):
        expected = _PYTHON_TYPES[dsl_type.type]
        if isinstance(value, bool) and dsl_type.type != "Bool":
            return f"{_show(value)} is not a {dsl_type.type}"
        if not isinstance(value, expected) or not _representable(value):
            return f"{_show(value)} is not a {dsl_type.type}"
        return ""
    if isinstance(dsl_type, EnumType):
        return "" if value in dsl_type.values and isinstance(value, str) else f"{_show(value)} is not an enum value"
    if isinstance(dsl_type, ArrayType | ListType):
        if not isinstance(value, list):
            return f"{_show(value)} is not a list"
        return next((p for p in (value_problem(v, dsl_type.element) for v in value) if p), "")
    if not isinstance(value, dict):
        return f"{_show(value)} is not a record ((field value) ...)"
    names = {f.name for f in dsl_type.fields}
    if set(value) != names:
        return f"record fields {sorted(value)} differ from the type's {sorted(names)}"
    return next((p for f in dsl_type.fields if (p := value_problem(value[f.name], f.field_type))), "")


def _has_list(dsl_type: DslType) -> bool:
    if isinstance(dsl_type, ListType):
        return True
    if isinstance(dsl_type, RecordType):
        return any(_has_list(f.field_type) for f in dsl_type.fields)
    return isinstance(dsl_type, ArrayType) and _has_list(dsl_type.element)


def _representable(value: object) -> bool:
    """Whether a number can be written in the text form: finite, and an integer short enough to print in
    decimal (``sys.get_int_max_str_digits()``; the parser rejects longer ones). Other values: True."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > _SAFE_INT_BITS:
        try:
            str(value)
        except ValueError:
            return False
    return True


# An integer of at most 1920 bits has at most 579 digits: below 640, the lowest limit sys.set_int_max_str_digits takes.
_SAFE_INT_BITS = 1920


class _ValueRepr(reprlib.Repr):
    """Short reprs of constant values for messages: a value loaded from JSON may nest arbitrarily deep or hold
    an integer too long to print."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel, self.maxstring, self.maxother = 3, 60, 60

    def repr_int(self, x: int, level: int) -> str:
        return super().repr_int(x, level) if _representable(x) else f"<an integer of {x.bit_length()} bits>"


def _show(value: object) -> str:
    return _ValueRepr().repr(value)


def check_model(
    model: WorldModel,
    tools: Sequence[ToolSpec] | Mapping[str, ToolSpec] | None = None,
    source: str | None = None,
    origin: str = "world model",
) -> CheckedModel:
    """Type-check ``model`` against the tool schema (if given).

    ``source`` (the text ``model`` was parsed from) and ``origin`` make error messages show the offending line.

    Raises:
        DslTypeError: listing every problem with its code, span and a hint.
    """
    registry: dict[str, ToolSpec] | None
    if tools is None:
        registry = None
    elif isinstance(tools, Mapping):
        registry = dict(tools)
    else:
        registry = {spec.name: spec for spec in tools}
    return _Checker(model, registry, source, origin).run()
