""":class:`WorldModel` → canonical text. ``parse_model(format_model(m)) == m`` for every model, and a model
written in the canonical layout (the paper's own example is) prints back character for character.

Layout: constants, then state variables (names padded to one column), then transitions and the goal, with a
blank line between groups; the first pre/post entry sits on the section's line and the rest align under it.
Comments are not part of the AST and are not printed.
"""

from __future__ import annotations

import json

from mantra_env.worldmodel.ast import (
    ConstValue,
    Contains,
    Expr,
    FieldAccess,
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
    return repr(value)


def format_value(value: ConstValue) -> str:
    """A constant's value: a literal, ``(v ...)`` for an array, ``((field v) ...)`` for a record."""
    if isinstance(value, list):
        return "(" + " ".join(format_value(item) for item in value) + ")"
    if isinstance(value, dict):
        return "(" + " ".join(f"({name} {format_value(item)})" for name, item in value.items()) + ")"
    return format_literal(value)


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
