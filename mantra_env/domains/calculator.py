"""The ``calculate`` tool's arithmetic, shared by the domains that give agents a calculator: numbers,
``+ - * /`` and parentheses, evaluated from Python's expression tree (nothing else is evaluated)."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable

from mantra_env.toolkit import ToolFailure

_OPERATORS: dict[type, Callable[..., float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def money(amount: float) -> float:
    """``amount`` rounded to cents."""
    return round(amount, 2) + 0.0  # + 0.0: no "-0.0" in results


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.operand))
    raise ValueError("only numbers, + - * / and parentheses are allowed")


def calculate(expression: str) -> float:
    """The value of an arithmetic expression, rounded to cents, or the ``invalid_request`` tool error."""
    try:
        return money(_evaluate(ast.parse(expression.strip(), mode="eval")))
    except ZeroDivisionError:
        raise ToolFailure("division by zero", code="invalid_request") from None
    except (SyntaxError, ValueError, RecursionError, OverflowError) as exc:
        raise ToolFailure(f"cannot calculate {expression!r}: {exc}", code="invalid_request") from None
