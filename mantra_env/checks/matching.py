"""Compiled atom matching: one pass over a trace finds the steps matching every atom of a check set.

This is an optimisation of :func:`mantra_env.checks.semantics.args_match`, not a second definition: the
generated code inlines the scalar cases of ``values_equal`` and calls ``values_equal`` itself for objects,
``bag_equal`` for lists and ``paired_equal`` for an atom's paired lists, and a property test asserts it agrees
with the lazy path on random atoms and traces. Grading is on the hot path of evaluation and RL loops; a generated ``if``
chain avoids a Python function call per (call, atom) pair, which is most of the cost of grading.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import JsonValue

from mantra_env.checks.ast import Call, NoCall
from mantra_env.checks.semantics import (
    NO_RULES,
    ArgRules,
    CallLike,
    ToolArgRules,
    bag_equal,
    normalise_text,
    paired_equal,
    values_equal,
)

_MISSING = object()
_Matcher = Callable[[Sequence[CallLike]], dict[str, tuple[int, ...]]]
_CACHE: dict[tuple[tuple[str, ...], int], _Matcher] = {}
_CACHE_LIMIT = 4096


def _constant(value: Any, constants: dict[str, Any]) -> str:
    slot = f"C{len(constants)}"
    constants[slot] = value
    return slot


def _fallback(name: str, rules: ToolArgRules, constants: dict[str, Any], missing: str = "M") -> str:
    """What an omitted argument compares as: the schema default, or ``missing`` (M: no value, no match)."""
    return _constant(rules.defaults[name], constants) if name in rules.defaults else missing


def _condition(name: str, value: JsonValue, rules: ToolArgRules, constants: dict[str, Any]) -> str:
    got = f"(v := a.get({name!r}, {_fallback(name, rules, constants)}))"
    if isinstance(value, bool):
        return f"{got} is {value!r}"
    if value is None:
        return f"{got} is None"
    if isinstance(value, str):
        if name in rules.free_text:
            return f"({got}.__class__ is str and (v == {value!r} or NORM(v) == {normalise_text(value)!r}))"
        return f"({got}.__class__ is str and (v == {value!r} or v.strip() == {value!r}))"
    if isinstance(value, int | float):
        return f"({got}.__class__ in NUM and v == {value!r})"
    slot = _constant(value, constants)
    if isinstance(value, list):
        return f"BAG({slot}, {got})"
    return f"EQ({slot}, {got})"


def _paired_condition(atom: Call | NoCall, rules: ToolArgRules, constants: dict[str, Any]) -> str:
    slot = _constant([atom.args[name] for name in atom.ordered], constants)
    lists = ", ".join(f"a.get({name!r}, {_fallback(name, rules, constants, 'None')})" for name in atom.ordered)
    return f"PAIRED({slot}, [{lists}])"


def _compile(atoms: Sequence[Call | NoCall], rules: ArgRules) -> _Matcher:
    keys: list[str] = []
    by_tool: dict[str, list[tuple[int, Call | NoCall]]] = {}
    for atom in atoms:
        if atom.match_key in keys:
            continue
        by_tool.setdefault(atom.tool, []).append((len(keys), atom))
        keys.append(atom.match_key)
    constants: dict[str, Any] = {}
    lines = ["def run(calls):", f"    found = tuple([] for _ in range({len(keys)}))"]
    lines.append("    for step, call in enumerate(calls):")
    lines.append("        t = call.tool")
    for tool, slots in by_tool.items():
        # Flat `if ...: continue` blocks, not an elif chain: CPython compiles an elif chain recursively, and a
        # check set naming thousands of tools would overflow the compiler's stack.
        lines.append(f"        if t == {tool!r}:")
        lines.append("            a = call.args")
        for slot, atom in slots:
            if atom.args:
                tool_rules = rules.of(tool)
                tests = [
                    _condition(name, value, tool_rules, constants)
                    for name, value in atom.args.items()
                    if name not in atom.ordered
                ]
                if atom.ordered:
                    tests.append(_paired_condition(atom, tool_rules, constants))
                test = " and ".join(tests)
                lines.append(f"            if {test}:")
                lines.append(f"                found[{slot}].append(step)")
            else:
                lines.append(f"            found[{slot}].append(step)")
        lines.append("            continue")
    lines.append("    return {" + ", ".join(f"K{slot}: tuple(found[{slot}])" for slot in range(len(keys))) + "}")
    namespace: dict[str, Any] = {"M": _MISSING, "NUM": (int, float), "EQ": values_equal, "BAG": bag_equal}
    namespace["NORM"] = normalise_text
    namespace.update({"PAIRED": paired_equal, **constants})
    namespace.update({f"K{slot}": key for slot, key in enumerate(keys)})
    exec(compile("\n".join(lines), "<compiled check atoms>", "exec"), namespace)
    run: _Matcher = namespace["run"]
    return run


def match_all(
    atoms: Sequence[Call | NoCall], calls: Sequence[CallLike], rules: ArgRules = NO_RULES
) -> dict[str, tuple[int, ...]]:
    """Steps matching each atom (keyed by ``match_key``) in one pass over ``calls``; ``rules``: what the tool
    schemas add to matching (defaults, free text)."""
    signature = (tuple(atom.match_key for atom in atoms), rules.token)
    compiled = _CACHE.get(signature)
    if compiled is None:
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        compiled = _CACHE[signature] = _compile(atoms, rules)
    return compiled(calls)
