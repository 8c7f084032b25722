"""What every domain package uses the same way: record lookups that become the agent's not-found tool error,
money rounding, the ``calculate`` tool's arithmetic (numbers, ``+ - * /`` and parentheses, evaluated from Python's
expression tree: nothing else is evaluated), and the command of a seeded ``make_db.py`` (write ``db.json``, or
``--check`` it)."""

from __future__ import annotations

import argparse
import ast
import operator
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from mantra_env.domains.overlay import peek
from mantra_env.files import write_atomic
from mantra_env.toolkit import ToolFailure

T = TypeVar("T")
R = TypeVar("R", bound=BaseModel)

_OPERATORS: dict[type, Callable[..., float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def lookup(table: Mapping[str, T], key: str, label: str) -> T:
    """``table[key]`` (a copy-on-write copy, to change), or the not-found tool error the agent sees."""
    if key not in table:
        raise ToolFailure(f"no {label} {key!r}", code="not_found")
    return table[key]


def read(table: Mapping[str, R], key: str, label: str) -> R:
    """A record to read (no copy), or the not-found tool error the agent sees."""
    if key not in table:
        raise ToolFailure(f"no {label} {key!r}", code="not_found")
    return peek(table, key)


def money(amount: float) -> float:
    """Dollars rounded to cents (``+ 0.0``: no "-0.0" in results)."""
    return round(amount, 2) + 0.0


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


def make_db_main(argv: list[str] | None, module: str, doc: str | None, path: Path, render: Callable[[], str]) -> int:
    """The command line of a domain's seeded database generator ``module``: write ``path`` from ``render()``, or
    with ``--check`` fail (exit 1) if the committed file differs."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=doc)
    parser.add_argument("--check", action="store_true", help="fail if db.json differs from what would be written")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            print(f"{path} is out of date: run `python -m {module}` and commit it")
            return 1
        print(f"{path} is up to date")
        return 0
    write_atomic(path, text)
    print(f"wrote {path} ({len(text) / 1e6:.1f} MB)")
    return 0
