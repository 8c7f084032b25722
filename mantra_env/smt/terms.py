"""DSL expressions → SMT-LIB terms (the homomorphic translation of paper App. "Bounded SMT compilation").

A term is evaluated at one step ``i``: bare names read the state at boundary ``i``, ``(next v)`` at ``i + 1``,
``(param x)`` the argument slot of the transition's tool at step ``i``; constants are inlined (pinned). The
step may be the placeholder ``"{i}"`` (then ``next`` reads ``{j}``): a transition is translated once into a
template and formatted per step, which keeps building the encoding linear in the bound with a small constant.
Record-valued expressions translate to their list of leaf terms; ``=`` on records compares leaf by leaf.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from mantra_env.smt.layout import Layout, Slot, flatten, z3_sort
from mantra_env.worldmodel.ast import (
    INT,
    REAL,
    ArrayType,
    ConstValue,
    Contains,
    DslType,
    EnumType,
    Expr,
    FieldAccess,
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


def int_term(value: int) -> str:
    return str(value) if value >= 0 else f"(- {-value})"


def real_term(value: float | int) -> str:
    fraction = Fraction(value)
    magnitude = f"{abs(fraction.numerator)}.0" if fraction.denominator == 1 else None
    text = magnitude or f"(/ {abs(fraction.numerator)}.0 {fraction.denominator}.0)"
    return text if fraction >= 0 else f"(- {text})"


def bool_term(value: bool) -> str:
    return "true" if value else "false"


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
            assert isinstance(array_type, ArrayType)
            array = self.term(expr.array, step, slots)
            return f"(select {array} {self.term(expr.element, step, slots, array_type.element)})"
        assert isinstance(expr, OpApp)
        return self._op(expr, step, slots, expr_type)

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
