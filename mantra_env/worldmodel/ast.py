"""The typed AST of the world-model DSL (paper App. "World model DSL").

Nodes are frozen dataclasses. Every node carries the :class:`Span` of the text it was parsed from (``None`` for
nodes built in code or loaded from JSON); spans never take part in equality, so a model parsed from text equals
the same model loaded from its JSON form. The JSON form of a node is given by :data:`MODEL_ADAPTER` and friends
(pydantic over these dataclasses), with a ``"node"`` / ``"type"`` discriminator per family.

This module knows nothing of Z3; only :mod:`mantra_env.smt` does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

RESERVED = frozenset(
    {
        "model",
        "const",
        "var",
        "transition",
        "params",
        "pre",
        "post",
        "goal",
        "Enum",
        "Record",
        "Array",
        "param",
        "next",
        "field",
        "contains",
        "true",
        "false",
        "Int",
        "Real",
        "Bool",
        "String",
        "List",
        "list",
    }
    | {"length", "empty", "subset", "union", "difference", "sum"}
)
ARITHMETIC = ("+", "-", "*", "/")
COMPARISON = ("=", "<", "<=", ">", ">=")
LOGICAL = ("and", "or", "not", "=>")
OPERATORS = frozenset(ARITHMETIC + COMPARISON + LOGICAL)
Operator: TypeAlias = Literal["+", "-", "*", "/", "=", "<", "<=", ">", ">=", "and", "or", "not", "=>"]


@dataclass(frozen=True, slots=True)
class Span:
    """Where a node came from: 0-based character offsets ``[start, end)`` and the 1-based line and column of
    ``start``."""

    start: int
    end: int
    line: int
    column: int


# Spans are kept out of equality, out of the JSON form and out of the JSON schema.
SpanField = Annotated[SkipJsonSchema[Span | None], Field(exclude=True)]


# --- types ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScalarType:
    """``Int``, ``Real``, ``Bool`` or ``String``."""

    type: Literal["Int", "Real", "Bool", "String"]
    span: SpanField = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class EnumType:
    """``(Enum "a" "b" ...)``: one of the listed strings; lowered to its 0-based declaration index."""

    values: tuple[str, ...]
    type: Literal["Enum"] = "Enum"
    span: SpanField = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class FieldDecl:
    """One field ``(name type)`` of a record type."""

    name: str
    field_type: DslType
    span: SpanField = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class RecordType:
    """``(Record (f1 T1) (f2 T2) ...)``."""

    fields: tuple[FieldDecl, ...]
    type: Literal["Record"] = "Record"
    span: SpanField = field(default=None, compare=False, repr=False)

    def field_type(self, name: str) -> DslType | None:
        for decl in self.fields:
            if decl.name == name:
                return decl.field_type
        return None


@dataclass(frozen=True, slots=True)
class ArrayType:
    """``(Array T)``: a collection whose only observation is membership (``contains``)."""

    element: DslType
    type: Literal["Array"] = "Array"
    span: SpanField = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ListType:
    """``(List T)``: a finite list (a tool's list-valued parameter, or a constant), duplicates allowed. Its
    observations are membership, ``length``, ``empty``, ``subset``, ``sum`` and, for a list of records,
    ``(field list f)`` (the list of that field's values). Whether order matters when a check pins one is the
    tool schema's business (:func:`mantra_env.tools.ToolSpec.ordered`), not the type's."""

    element: DslType
    type: Literal["List"] = "List"
    span: SpanField = field(default=None, compare=False, repr=False)


DslType: TypeAlias = Annotated[ScalarType | EnumType | RecordType | ArrayType | ListType, Field(discriminator="type")]

INT = ScalarType("Int")
REAL = ScalarType("Real")
BOOL = ScalarType("Bool")
STRING = ScalarType("String")


def type_text(dsl_type: DslType) -> str:
    """The type in DSL syntax, for messages and the printer."""
    if isinstance(dsl_type, ScalarType):
        return dsl_type.type
    if isinstance(dsl_type, EnumType):
        return "(Enum " + " ".join(_quote(value) for value in dsl_type.values) + ")"
    if isinstance(dsl_type, RecordType):
        return "(Record " + " ".join(f"({f.name} {type_text(f.field_type)})" for f in dsl_type.fields) + ")"
    if isinstance(dsl_type, ListType):
        return f"(List {type_text(dsl_type.element)})"
    return f"(Array {type_text(dsl_type.element)})"


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


# --- expressions -----------------------------------------------------------------------------------------------

LiteralValue: TypeAlias = bool | int | float | str


@dataclass(frozen=True, slots=True, eq=False)
class Lit:
    """A primitive literal: ``true``/``false``, an integer, a real (written with a ``.`` or exponent), or a
    string. Equality distinguishes ``true`` from ``1`` and ``1`` from ``1.0``."""

    value: LiteralValue
    node: Literal["literal"] = "literal"
    span: SpanField = field(default=None, compare=False, repr=False)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Lit) and type(self.value) is type(other.value) and self.value == other.value

    def __hash__(self) -> int:
        return hash((type(self.value), self.value))


@dataclass(frozen=True, slots=True)
class VarRef:
    """A bare identifier: the current value of a state variable or a constant."""

    name: str
    node: Literal["var_ref"] = "var_ref"
    span: SpanField = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ParamRef:
    """``(param local)``: a tool argument, by the local name bound in the transition's ``params``."""

    name: str
    node: Literal["param_ref"] = "param_ref"
    span: SpanField = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class NextRef:
    """``(next v)``: the post-state value of state variable ``v`` (postconditions only)."""

    name: str
    node: Literal["next_ref"] = "next_ref"
    span: SpanField = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class OpApp:
    """``(op arg ...)``: arithmetic, comparison or logic."""

    symbol: Operator
    args: tuple[Expr, ...]
    node: Literal["op"] = "op"
    span: SpanField = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class FieldAccess:
    """``(field record name)``: a record field."""

    record: Expr
    name: str
    node: Literal["field"] = "field"
    span: SpanField = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Contains:
    """``(contains array element)``: array membership."""

    array: Expr
    element: Expr
    node: Literal["contains"] = "contains"
    span: SpanField = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ListLit:
    """``(list e ...)``: a list of one or more elements of one type."""

    items: tuple[Expr, ...]
    node: Literal["list"] = "list"
    span: SpanField = field(default=None, compare=False, repr=False)


CollectionOperator: TypeAlias = Literal["length", "empty", "subset", "union", "difference", "sum"]
COLLECTION_OPERATORS: tuple[str, ...] = ("length", "empty", "subset", "union", "difference", "sum")


@dataclass(frozen=True, slots=True)
class CollectionOp:
    """``(length l)``, ``(empty l)``, ``(sum l)`` on a list; ``(subset l s)``: every element of list ``l`` is in
    ``s`` (a list or an array); ``(union a x)``, ``(difference a x)``: the array ``a`` with the elements of ``x``
    (a list or an array) added or removed."""

    symbol: CollectionOperator
    args: tuple[Expr, ...]
    node: Literal["collection"] = "collection"
    span: SpanField = field(default=None, compare=False, repr=False)


Expr: TypeAlias = Annotated[
    Lit | VarRef | ParamRef | NextRef | OpApp | FieldAccess | Contains | ListLit | CollectionOp,
    Field(discriminator="node"),
]
EXPR_NODES: tuple[type, ...] = (Lit, VarRef, ParamRef, NextRef, OpApp, FieldAccess, Contains, ListLit, CollectionOp)

# A constant's value: a literal, a list of values for an array, an object of field values for a record.
ConstValue: TypeAlias = bool | int | float | str | list[Any] | dict[str, Any]


# --- declarations ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConstDecl:
    """``(const name type value)``: a value fixed for the whole trace."""

    name: str
    const_type: DslType
    value: ConstValue
    span: SpanField = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class VarDecl:
    """``(var name type)``: a state variable, one value per trace boundary."""

    name: str
    var_type: DslType
    span: SpanField = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ParamBind:
    """``(tool_param local)``: binds the tool's argument ``tool_param`` to the name ``local``."""

    tool_param: str
    local: str
    span: SpanField = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Transition:
    """``(transition tool (params ...) (pre ...) (post ...))``: when ``tool`` is called, every precondition
    holds in the state before the call and every postcondition relates it to the state after. Variables not
    under ``next`` in a postcondition keep their value (frame axiom)."""

    tool: str
    params: tuple[ParamBind, ...] = ()
    pre: tuple[Expr, ...] = ()
    post: tuple[Expr, ...] = ()
    span: SpanField = field(default=None, compare=False, repr=False)

    def local(self, name: str) -> ParamBind | None:
        for bind in self.params:
            if bind.local == name:
                return bind
        return None


@dataclass(frozen=True, slots=True)
class WorldModel:
    """A whole model. ``goal`` (an extension of the paper's grammar, optional) lists conditions the final
    state of a compliant trace must meet; it is what lets the backward audit tell a required call from an
    over-restrictive one."""

    consts: tuple[ConstDecl, ...] = ()
    vars: tuple[VarDecl, ...] = ()
    transitions: tuple[Transition, ...] = ()
    goal: tuple[Expr, ...] = ()
    span: SpanField = field(default=None, compare=False, repr=False)

    def transition(self, tool: str) -> Transition | None:
        for transition in self.transitions:
            if transition.tool == tool:
                return transition
        return None

    def var(self, name: str) -> VarDecl | None:
        for decl in self.vars:
            if decl.name == name:
                return decl
        return None

    def const(self, name: str) -> ConstDecl | None:
        for decl in self.consts:
            if decl.name == name:
                return decl
        return None


def subexpressions(expr: Expr) -> list[Expr]:
    """``expr`` and every expression under it, depth first (iterative: fuzzed input may nest deeply)."""
    out: list[Expr] = []
    stack: list[Expr] = [expr]
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, OpApp):
            stack.extend(reversed(node.args))
        elif isinstance(node, FieldAccess):
            stack.append(node.record)
        elif isinstance(node, Contains):
            stack.extend((node.element, node.array))
        elif isinstance(node, ListLit):
            stack.extend(reversed(node.items))
        elif isinstance(node, CollectionOp):
            stack.extend(reversed(node.args))
    return out
