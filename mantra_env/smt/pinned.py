"""The check encoding evaluated on a concrete trace: every step variable pinned to the trace.

This is how the Z3 encoding is held to the normative semantics: for any trace, ``evaluate_checks`` must give
the Python grader's verdict for every check (``tests/smt/test_agreement.py``). It also lets a witness be
replayed against the formula.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import z3

from mantra_env.checks import Check
from mantra_env.checks.semantics import CallLike
from mantra_env.smt.encode import Encoding
from mantra_env.smt.layout import Slot, id_value, value_key
from mantra_env.smt.queries import SmtInputError
from mantra_env.tools import ToolSpec
from mantra_env.worldmodel import WorldModel, check_model
from mantra_env.worldmodel.typecheck import CheckedModel


def evaluate_checks(
    checks: Sequence[Check],
    calls: Sequence[CallLike],
    model: WorldModel | CheckedModel | None = None,
    tools: Sequence[ToolSpec] | Mapping[str, ToolSpec] | None = None,
) -> list[bool]:
    """Whether each check holds on the trace ``calls``, decided by Z3 on the check encoding.

    Raises:
        SmtInputError: if a call's argument does not fit the type the world model gives its parameter.
    """
    checked = model if isinstance(model, CheckedModel) else check_model(model or WorldModel(), tools)
    longest = max((len(v) for call in calls for v in call.args.values() if isinstance(v, list)), default=0)
    specs = checked.tools or {}
    # Free-text values are interned, so that a pin matches each one equal to it after normalisation.
    texts = [
        value
        for call in calls
        if call.tool in specs
        for name, value in call.args.items()
        if isinstance(value, str) and specs[call.tool].free_text(name)
    ]
    extra_tools = {call.tool for call in calls}
    encoding = Encoding(checked, checks, max(1, len(calls)), extra_tools=extra_tools, extra_values=texts)
    if encoding.layout.list_bound < longest:  # room for every list the trace holds
        encoding = Encoding(
            checked, checks, max(1, len(calls)), extra_tools=extra_tools, list_bound=longest, extra_values=texts
        )
    ctx = z3.Context()
    solver = z3.Solver(ctx=ctx)
    solver.add(z3.parse_smt2_string(encoding.text, ctx=ctx))
    layout = encoding.layout
    fresh: dict[str, int] = {}
    for i in range(encoding.bound):
        tool = calls[i].tool if i < len(calls) else None
        solver.add(z3.Int(f"t_{i}", ctx) == (layout.index[tool] if tool is not None else layout.noop))
        if tool is None:
            continue
        args = calls[i].args
        for name, slot in layout.slots[tool].items():
            present = name in args
            if slot.optional:
                solver.add(z3.Bool(slot.flag(i), ctx) == present)
            if present or not slot.optional:
                solver.add(_pin(slot, i, args.get(name), present, layout.interned, fresh, ctx))
    if solver.check() != z3.sat:  # pragma: no cover - the definitions always have exactly one model here
        raise SmtInputError("the pinned trace contradicts the world model's structural constraints")
    found = solver.model()
    return [z3.is_true(found.eval(z3.Bool(f"c_{j}", ctx), model_completion=True)) for j in range(len(checks))]


def _pin(
    slot: Slot, step: int, value: Any, present: bool, interned: dict[str, int], fresh: dict[str, int], ctx: z3.Context
) -> z3.BoolRef:
    if slot.sort == "List":
        return _pin_list(slot, step, value, interned, fresh, ctx)
    if slot.sort == "Id" and slot.enum is None:
        key = value_key(id_value(value, slot)) if present else None
        if key is not None and key in interned:
            number = interned[key]
        else:  # a value no check pins (or a missing required argument): unequal to every pinned value
            key = key if key is not None else f"<missing or not JSON #{len(fresh)}>"
            number = fresh.setdefault(key, -1 - len(fresh))
        return z3.Int(slot.var(step), ctx) == number
    if slot.enum is not None:
        if value not in slot.enum:
            raise SmtInputError(f"step {step}: {json.dumps(value)} is not one of {list(slot.enum)}")
        return z3.Int(slot.var(step), ctx) == slot.enum.index(value)
    if slot.sort == "Bool" and isinstance(value, bool):
        return z3.Bool(slot.var(step), ctx) == value
    if slot.sort == "Int" and isinstance(value, int) and not isinstance(value, bool):
        return z3.Int(slot.var(step), ctx) == value
    if slot.sort == "Real" and isinstance(value, int | float) and not isinstance(value, bool):
        return z3.Real(slot.var(step), ctx) == z3.RealVal(value, ctx)
    raise SmtInputError(f"step {step}: argument {json.dumps(value)} does not fit a {slot.sort} parameter")


def _pin_list(
    slot: Slot, step: int, value: Any, interned: dict[str, int], fresh: dict[str, int], ctx: z3.Context
) -> z3.BoolRef:
    if not isinstance(value, list):
        if not slot.bound and slot.columns and slot.columns[0].sort == "Id":
            # a list only checks pair, given something else: longer than any pinned list, its value in the
            # first element slot (as the encoding pins a non-list value there)
            first = Slot("Id", slot.columns[0].index, optional=False)
            return z3.And(
                z3.Int(slot.var(step), ctx) == slot.width + 1, _pin(first, step, value, True, interned, fresh, ctx)
            )
        raise SmtInputError(f"step {step}: argument {json.dumps(value)} does not fit a list parameter")
    parts = [z3.Int(slot.var(step), ctx) == len(value)]
    for k, item in enumerate(value):
        for column in slot.columns:
            if column.field is not None and not (isinstance(item, dict) and column.field in item):
                raise SmtInputError(f"step {step}: list element {json.dumps(item)} has no field {column.field}")
            part = item if column.field is None else item[column.field]
            as_slot = Slot(column.sort, column.index + k, column.enum, optional=False)
            parts.append(_pin(as_slot, step, part, True, interned, fresh, ctx))
    return z3.And(*parts)
