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
from mantra_env.checks.semantics import CallLike, bag_equal, paired_equal, values_equal

_MISSING = object()
_Matcher = Callable[[Sequence[CallLike]], dict[str, tuple[int, ...]]]
_CACHE: dict[tuple[str, ...], _Matcher] = {}
_CACHE_LIMIT = 4096


def _condition(name: str, value: JsonValue, constants: dict[str, Any]) -> str:
    got = f"(v := a.get({name!r}, M))"
    if isinstance(value, bool):
        return f"{got} is {value!r}"
    if value is None:
        return f"{got} is None"
    if isinstance(value, str):
        return f"({got}.__class__ is str and (v == {value!r} or v.strip() == {value!r}))"
    if isinstance(value, int | float):
        return f"({got}.__class__ in NUM and v == {value!r})"
    slot = f"C{len(constants)}"
    constants[slot] = value
    if isinstance(value, list):
        return f"BAG({slot}, {got})"
    return f"EQ({slot}, {got})"


def _paired_condition(atom: Call | NoCall, constants: dict[str, Any]) -> str:
    slot = f"C{len(constants)}"
    constants[slot] = [atom.args[name] for name in atom.ordered]
    return f"PAIRED({slot}, [{', '.join(f'a.get({name!r})' for name in atom.ordered)}])"


def _compile(atoms: Sequence[Call | NoCall]) -> _Matcher:
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
                tests = [
                    _condition(name, value, constants) for name, value in atom.args.items() if name not in atom.ordered
                ]
                if atom.ordered:
                    tests.append(_paired_condition(atom, constants))
                test = " and ".join(tests)
                lines.append(f"            if {test}:")
                lines.append(f"                found[{slot}].append(step)")
            else:
                lines.append(f"            found[{slot}].append(step)")
        lines.append("            continue")
    lines.append("    return {" + ", ".join(f"K{slot}: tuple(found[{slot}])" for slot in range(len(keys))) + "}")
    namespace: dict[str, Any] = {"M": _MISSING, "NUM": (int, float), "EQ": values_equal, "BAG": bag_equal}
    namespace.update({"PAIRED": paired_equal, **constants})
    namespace.update({f"K{slot}": key for slot, key in enumerate(keys)})
    exec(compile("\n".join(lines), "<compiled check atoms>", "exec"), namespace)
    run: _Matcher = namespace["run"]
    return run


def match_all(atoms: Sequence[Call | NoCall], calls: Sequence[CallLike]) -> dict[str, tuple[int, ...]]:
    """Steps matching each atom (keyed by ``match_key``) in one pass over ``calls``."""
    signature = tuple(atom.match_key for atom in atoms)
    compiled = _CACHE.get(signature)
    if compiled is None:
        if len(_CACHE) >= _CACHE_LIMIT:
            _CACHE.clear()
        compiled = _CACHE[signature] = _compile(atoms)
    return compiled(calls)
