"""DSL expressions → SMT-LIB terms (the homomorphic translation of paper App. "Bounded SMT compilation").

A term is evaluated at one step ``i``: bare names read the state at boundary ``i``, ``(next v)`` at ``i + 1``,
``(param x)`` the argument slot of the transition's tool at step ``i``; constants are inlined (pinned). The
step may be the placeholder ``"{i}"`` (then ``next`` reads ``{j}``): a transition is translated once into a
template and formatted per step, which keeps building the encoding linear in the bound with a small constant.
Record-valued expressions translate to their list of leaf terms; ``=`` on records compares leaf by leaf.
List-valued expressions translate to a :class:`ListTerm` (a length term and ``list_bound`` element terms, or
exactly the elements of a literal or constant); an operation reads element ``k`` only where ``k < length``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from mantra_env.smt.layout import Layout, Slot, flatten, z3_sort
from mantra_env.worldmodel.ast import (
    INT,
    REAL,
    ArrayType,
    CollectionOp,
    ConstValue,
    Contains,
    DslType,
    EnumType,
    Expr,
    FieldAccess,
    ListLit,
    ListType,
    Lit,
    NextRef,
    OpApp,
    ParamRef,
    RecordType,
    ScalarType,
    VarRef,
)
from mantra_env.worldmodel.typecheck import CheckedModel

Step = int | str  # a step number, or "{i}" for a per-step template

MAX_GUARDED_STORES = 16
"""List-argument slots one ``union`` or ``difference`` may add: each guarded store repeats the array's term, so the
term doubles per slot (an airline model's union over 1,440 slots grew past 20 GB before Z3 saw it). Other list
operations grow with the product of two lists' slots at most, which :data:`layout.MAX_LIST_BOUND` keeps small."""


class TermsTooLarge(ValueError):
    """An expression whose translation would pass :data:`MAX_GUARDED_STORES` (the message says which)."""


def int_term(value: int) -> str:
    return str(value) if value >= 0 else f"(- {-value})"


def real_term(value: float | int) -> str:
    fraction = Fraction(value)
    magnitude = f"{abs(fraction.numerator)}.0" if fraction.denominator == 1 else None
    text = magnitude or f"(/ {abs(fraction.numerator)}.0 {fraction.denominator}.0)"
    return text if fraction >= 0 else f"(- {text})"


def bool_term(value: bool) -> str:
    return "true" if value else "false"


@dataclass(frozen=True, slots=True)
class ListTerm:
    """A list as terms: its length and its element terms (each a tuple of leaf terms: one per record field, or
    one for a scalar), of which those at ``k < length`` are elements."""

    length: str
    items: tuple[tuple[str, ...], ...]

    def guard(self, k: int) -> str:
        """Whether element ``k`` exists."""
        if self.length.isdigit():
            return "true" if k < int(self.length) else "false"
        return f"(< {k} {self.length})"

    def column(self, offset: int) -> ListTerm:
        """The list of one leaf of the elements: ``(field l f)`` on a list of records."""
        return ListTerm(self.length, tuple((item[offset],) for item in self.items))


def _guarded(guard: str, term: str) -> str:
    return term if guard == "true" else f"(and {guard} {term})"


def _equal(left: tuple[str, ...], right: tuple[str, ...]) -> str:
    """Equality of two elements, leaf by leaf (every field of a record)."""
    pairs = [f"(= {a} {b})" for a, b in zip(left, right, strict=True)]
    return pairs[0] if len(pairs) == 1 else f"(and {' '.join(pairs)})"


class Translator:
    """Translates the expressions of one checked model against one layout."""

    def __init__(self, checked: CheckedModel, layout: Layout) -> None:
        self.checked = checked
        self.layout = layout

    def scalar_value(self, value: Any, dsl_type: DslType) -> str:
        """A constant or initial value of a scalar, enum or array type."""
        if isinstance(dsl_type, EnumType):
            return str(dsl_type.values.index(value))
        if isinstance(dsl_type, ArrayType):
            term = f"((as const {z3_sort(dsl_type)}) false)"
            for item in value:
                term = f"(store {term} {self.scalar_value(item, dsl_type.element)} true)"
            return term
        assert isinstance(dsl_type, ScalarType)
        if dsl_type.type == "Bool":
            return bool_term(value)
        if dsl_type.type == "Int":
            return int_term(value)
        if dsl_type.type == "Real":
            return real_term(value)
        return str(self.layout.id_of(value))

    def value_parts(self, value: ConstValue, dsl_type: DslType) -> list[str]:
        """A constant value as leaf terms (one for non-records)."""
        if isinstance(dsl_type, RecordType):
            assert isinstance(value, dict)
            return [part for f in dsl_type.fields for part in self.value_parts(value[f.name], f.field_type)]
        return [self.scalar_value(value, dsl_type)]

    def parts(self, expr: Expr, step: Step, slots: dict[str, Slot]) -> list[str]:
        """Leaf terms of an expression (a record has several, anything else one)."""
        expr_type = self.checked.type_of(expr)
        if isinstance(expr, VarRef | NextRef):
            const = self.checked.model.const(expr.name)
            if const is not None:
                return self.value_parts(const.value, const.const_type)
            boundary: Step = step
            if isinstance(expr, NextRef):
                boundary = step + 1 if isinstance(step, int) else "{j}"
            return [self.layout.state(boundary, n) for n in self.layout.leaves_of(expr.name)]
        if isinstance(expr, FieldAccess):
            record_type = self.checked.type_of(expr.record)
            if isinstance(record_type, ListType):
                raise AssertionError("a list's field is a list term")  # pragma: no cover - see list_term
            assert isinstance(record_type, RecordType)
            parts = self.parts(expr.record, step, slots)
            offset = 0
            for f in record_type.fields:
                width = len(flatten("", f.field_type))
                if f.name == expr.name:
                    return parts[offset : offset + width]
                offset += width
            raise AssertionError("type checker guarantees the field")  # pragma: no cover
        return [self.term(expr, step, slots, expr_type)]

    def term(self, expr: Expr, step: Step, slots: dict[str, Slot], expected: DslType | None = None) -> str:
        """The SMT-LIB term of a non-record expression; ``expected`` REAL coerces an Int operand."""
        expr_type = self.checked.type_of(expr)
        text = self._term(expr, step, slots, expr_type)
        if expected == REAL and expr_type == INT:
            return f"(to_real {text})"
        return text

    def _term(self, expr: Expr, step: Step, slots: dict[str, Slot], expr_type: DslType) -> str:
        if isinstance(expr, Lit):
            value = expr.value
            if isinstance(expr_type, EnumType):
                return str(expr_type.values.index(value))
            if isinstance(value, bool):
                return bool_term(value)
            if isinstance(value, str):
                return str(self.layout.id_of(value))
            return int_term(value) if isinstance(value, int) else real_term(value)
        if isinstance(expr, ParamRef):
            return slots[expr.name].var(step)
        if isinstance(expr, VarRef | NextRef | FieldAccess):
            (single,) = self.parts(expr, step, slots)
            return single
        if isinstance(expr, Contains):
            array_type = self.checked.type_of(expr.array)
            assert isinstance(array_type, ArrayType | ListType)
            if isinstance(array_type.element, RecordType):
                return self._member(expr.array, tuple(self.parts(expr.element, step, slots)), step, slots)
            element = self.term(expr.element, step, slots, array_type.element)
            return self._member(expr.array, (element,), step, slots)
        if isinstance(expr, CollectionOp):
            return self._collection(expr, step, slots, expr_type)
        assert isinstance(expr, OpApp)
        return self._op(expr, step, slots, expr_type)

    # --- lists -----------------------------------------------------------------------------------------------------

    def list_term(self, expr: Expr, step: Step, slots: dict[str, Slot]) -> ListTerm:
        """The terms of a list-valued expression."""
        list_type = self.checked.type_of(expr)
        assert isinstance(list_type, ListType)
        if isinstance(expr, ParamRef):
            slot = slots[expr.name]
            items = [tuple(c.var(step, k) for c in slot.columns) for k in range(slot.width)]
            return ListTerm(slot.var(step), tuple(items))
        if isinstance(expr, ListLit):
            items = [(self.term(item, step, slots, list_type.element),) for item in expr.items]
            return ListTerm(str(len(expr.items)), tuple(items))
        if isinstance(expr, FieldAccess):  # (field l f) on a list of records
            inner = self.checked.type_of(expr.record)
            assert isinstance(inner, ListType) and isinstance(inner.element, RecordType)
            names = [f.name for f in inner.element.fields]
            return self.list_term(expr.record, step, slots).column(names.index(expr.name))
        assert isinstance(expr, VarRef), "lists are parameters, literals, constants or fields of those"
        const = self.checked.model.const(expr.name)
        assert const is not None and isinstance(const.value, list)
        element = list_type.element
        return ListTerm(str(len(const.value)), tuple(tuple(self.value_parts(v, element)) for v in const.value))

    def _member(self, collection: Expr, element: tuple[str, ...], step: Step, slots: dict[str, Slot]) -> str:
        """Whether ``element`` (its leaf terms: one per record field, or one) is in an array or a list."""
        if isinstance(self.checked.type_of(collection), ArrayType):
            (key,) = element
            return f"(select {self.term(collection, step, slots)} {key})"
        found = self.list_term(collection, step, slots)
        parts = [_guarded(found.guard(k), _equal(item, element)) for k, item in enumerate(found.items)]
        parts = [part for part in parts if not part.startswith("(and false")]
        return "false" if not parts else parts[0] if len(parts) == 1 else f"(or {' '.join(parts)})"

    def _collection(self, expr: CollectionOp, step: Step, slots: dict[str, Slot], expr_type: DslType) -> str:
        symbol, args = expr.symbol, expr.args
        if symbol in ("union", "difference"):
            array = self.term(args[0], step, slots)
            if isinstance(self.checked.type_of(args[1]), ArrayType):
                other = self.term(args[1], step, slots)
                if symbol == "union":
                    return f"((_ map or) {array} {other})"
                return f"((_ map and) {array} ((_ map not) {other}))"
            value = "true" if symbol == "union" else "false"
            added = self.list_term(args[1], step, slots)
            guarded = sum(added.guard(k) != "true" for k in range(len(added.items)))
            if guarded > MAX_GUARDED_STORES:  # each guarded store repeats the array's term: 2^guarded copies
                where = f" (line {expr.span.line})" if expr.span is not None else ""
                raise TermsTooLarge(
                    f"({symbol} ...){where} adds a list argument of {guarded} element slots, more than the "
                    f"{MAX_GUARDED_STORES} an update of an array by a list argument may have (its term doubles "
                    "with each slot): pin shorter lists in the checks or name fewer values"
                )
            for k, item in enumerate(added.items):
                stored = f"(store {array} {item[0]} {value})"
                guard = added.guard(k)
                array = stored if guard == "true" else f"(ite {guard} {stored} {array})"
            return array
        found = self.list_term(args[0], step, slots)
        if symbol == "length":
            return found.length
        if symbol == "empty":
            return f"(= {found.length} 0)"
        if symbol == "sum":
            zero = "0.0" if expr_type == REAL else "0"
            terms = [
                item[0] if found.guard(k) == "true" else f"(ite {found.guard(k)} {item[0]} {zero})"
                for k, item in enumerate(found.items)
            ]
            return zero if not terms else terms[0] if len(terms) == 1 else f"(+ {' '.join(terms)})"
        assert symbol == "subset"
        parts = []
        for k, item in enumerate(found.items):
            member = self._member(args[1], item, step, slots)
            guard = found.guard(k)
            parts.append(member if guard == "true" else f"(=> {guard} {member})")
        return "true" if not parts else parts[0] if len(parts) == 1 else f"(and {' '.join(parts)})"

    def _op(self, expr: OpApp, step: Step, slots: dict[str, Slot], expr_type: DslType) -> str:
        symbol, args = expr.symbol, expr.args
        if symbol == "=":
            left, right = args
            left_type, right_type = self.checked.type_of(left), self.checked.type_of(right)
            if isinstance(left_type, RecordType):
                pairs = zip(self.parts(left, step, slots), self.parts(right, step, slots), strict=True)
                return "(and " + " ".join(f"(= {a} {b})" for a, b in pairs) + ")"
            common = REAL if REAL in (left_type, right_type) else None
            return f"(= {self.term(left, step, slots, common)} {self.term(right, step, slots, common)})"
        if symbol in ("<", "<=", ">", ">="):
            common = REAL if any(self.checked.type_of(arg) == REAL for arg in args) else None
            return f"({symbol} {' '.join(self.term(arg, step, slots, common) for arg in args)})"
        if symbol in ("and", "or", "not", "=>"):
            return f"({symbol} {' '.join(self.term(arg, step, slots) for arg in args)})"
        operands = " ".join(self.term(arg, step, slots, expr_type) for arg in args)
        head = "div" if symbol == "/" and expr_type == INT else symbol
        return f"({head} {operands})"
