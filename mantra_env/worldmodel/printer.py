""":class:`WorldModel` → canonical text. ``parse_model(format_model(m)) == m`` for every model, and a model
written in the canonical layout (the paper's own example is) prints back character for character.

Layout: constants, then state variables (names padded to one column), then transitions and the goal, with a
blank line between groups; the first pre/post entry sits on the section's line and the rest align under it.
Comments are not part of the AST and are not printed.
"""

from __future__ import annotations

import json
from typing import Any

from mantra_env.worldmodel.ast import (
    CollectionOp,
    ConstValue,
    Contains,
    Expr,
    FieldAccess,
    ListLit,
    Lit,
    NextRef,
    OpApp,
    ParamRef,
    Transition,
    VarRef,
    WorldModel,
    type_text,
)


def format_literal(value: bool | int | float | str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int):
        return _int_text(value)
    return repr(value)


def _int_text(value: int) -> str:
    """``repr(value)``, also for integers longer than ``sys.get_int_max_str_digits()`` (a model built in code or
    loaded from JSON may hold one; the type checker and the parser reject it, but the printer must not crash)."""
    try:
        return repr(value)
    except ValueError:
        chunks: list[int] = []
        rest = abs(value)
        while rest:
            rest, chunk = divmod(rest, 10**500)
            chunks.append(chunk)
        digits = str(chunks[-1]) + "".join(f"{chunk:0500d}" for chunk in reversed(chunks[:-1]))
        return "-" + digits if value < 0 else digits


def format_value(value: ConstValue) -> str:
    """A constant's value: a literal, ``(v ...)`` for an array, ``((field v) ...)`` for a record.

    Iterative: a value loaded from JSON is not limited in depth by its type."""
    out: list[str] = []
    todo: list[tuple[bool, Any]] = [(False, value)]  # (is text to emit, item), popped from the end
    while todo:
        is_text, item = todo.pop()
        if is_text:
            out.append(item)
        elif isinstance(item, list | dict):
            parts: list[tuple[bool, Any]] = []
            for i, element in enumerate(item.items() if isinstance(item, dict) else item):
                if isinstance(item, dict):
                    parts += [(True, f"{' ' if i else ''}({element[0]} "), (False, element[1]), (True, ")")]
                else:
                    parts += [(True, " ")] * bool(i) + [(False, element)]
            todo += reversed([(True, "("), *parts, (True, ")")])
        else:
            out.append(format_literal(item))
    return "".join(out)


def format_expr(expr: Expr) -> str:
    """One expression on one line."""
    if isinstance(expr, Lit):
        return format_literal(expr.value)
    if isinstance(expr, VarRef):
        return expr.name
    if isinstance(expr, ParamRef):
        return f"(param {expr.name})"
    if isinstance(expr, NextRef):
        return f"(next {expr.name})"
    if isinstance(expr, OpApp):
        return "(" + " ".join([expr.symbol, *(format_expr(arg) for arg in expr.args)]) + ")"
    if isinstance(expr, FieldAccess):
        return f"(field {format_expr(expr.record)} {expr.name})"
    if isinstance(expr, Contains):
        return f"(contains {format_expr(expr.array)} {format_expr(expr.element)})"
    if isinstance(expr, ListLit):
        return "(" + " ".join(["list", *(format_expr(item) for item in expr.items)]) + ")"
    if isinstance(expr, CollectionOp):
        return "(" + " ".join([expr.symbol, *(format_expr(arg) for arg in expr.args)]) + ")"
    raise TypeError(f"not a DSL expression: {expr!r}")  # pragma: no cover - the union is closed


def _section(indent: str, keyword: str, exprs: tuple[Expr, ...], width: int) -> list[str]:
    if not exprs:
        return [f"{indent}({keyword})"]
    opener = f"{indent}({keyword.ljust(width)} "
    lines = [opener + format_expr(exprs[0])]
    lines += [" " * len(opener) + format_expr(expr) for expr in exprs[1:]]
    lines[-1] += ")"
    return lines


def _transition(transition: Transition) -> list[str]:
    params = " ".join(f"({bind.tool_param} {bind.local})" for bind in transition.params)
    lines = [f"  (transition {transition.tool}", f"    (params{' ' + params if params else ''})"]
    lines += _section("    ", "pre", transition.pre, 4)
    lines += _section("    ", "post", transition.post, 4)
    lines[-1] += ")"
    return lines


def format_model(model: WorldModel) -> str:
    """The canonical text of ``model`` (ends with a newline)."""
    groups: list[list[str]] = []
    if model.consts:
        pad = max(len(c.name) for c in model.consts)
        groups.append(
            [f"  (const {c.name.ljust(pad)} {type_text(c.const_type)} {format_value(c.value)})" for c in model.consts]
        )
    if model.vars:
        pad = max(len(v.name) for v in model.vars)
        groups.append([f"  (var {v.name.ljust(pad)} {type_text(v.var_type)})" for v in model.vars])
    groups += [_transition(transition) for transition in model.transitions]
    if model.goal:
        groups.append(_section("  ", "goal", model.goal, 4))
    if not groups:
        return "(model)\n"
    lines = ["(model"]
    for i, group in enumerate(groups):
        if i:
            lines.append("")
        lines += group
    lines[-1] += ")"
    return "\n".join(lines) + "\n"
