"""Checks the other checks of a case already imply (issue 16: they do not count as checks of their own).

Check ``j`` is implied when no trace satisfies every other check and breaks ``j``: the backward query over the
checks alone, with no world model (every call of every tool is possible). ``NO-CALL x(a=1)`` beside
``NO-CALL x()`` is the typical case; so is ``CALL a()`` beside ``CALL a() PRECEDES CALL b()``. The search is
bounded like every query; a counterexample longer than ``bound`` calls is not looked for, so the bound should
exceed the number of atoms (the default does for the check sets the pipeline writes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mantra_env.case import CaseCheck
from mantra_env.checks.operators import in_trace_formula
from mantra_env.smt.queries import CaseSolver
from mantra_env.tools import ToolSpec

DEFAULT_BOUND = 8


def implied_checks(
    checks: Sequence[CaseCheck],
    tools: Sequence[ToolSpec] | Mapping[str, ToolSpec] | None = None,
    bound: int = DEFAULT_BOUND,
) -> list[str]:
    """The ids of the checks that the others imply, in order (a lone check is never implied; a check whose query
    times out is counted as not implied; a check outside the trace formula, an ANSWER on the final answer, is
    never implied and implies nothing: the query cannot break it)."""
    checks = [entry for entry in checks if in_trace_formula(entry.check)]
    if len(checks) < 2:
        return []
    solver = CaseSolver(None, checks, bound, tools=tools)
    return [
        entry.id for entry, result in zip(checks, solver.backward_all(), strict=True) if result.status == "consistent"
    ]
