"""A second compliant witness: a plan that differs from the oracle's in a write and should pass all the same.

The oracle passing its own replay proves little: its plan is where the case came from. The solver's
*alternative* witness (:meth:`mantra_env.smt.CaseSolver.alternative_witness`) is another trace the world model
accepts that reaches the goal and satisfies every check, but writes something the stored plan does not: another
value where the checks leave a write argument open, or the other branch of an OR over write tools. Replayed in the
env it must pass both verdicts (the checks, and no unrequested write); a case where it does not shows either a
grading rule that is too strict or a world model that admits what the case should not
(``tests/agents/test_alternative.py`` lists them).

Arguments are filled as the oracle's (:func:`mantra_env.oracle.plan_from_witness`), except that the solver's
concrete values come first (the one that differs is the point) and the case's bindings only fill what the solver
leaves open; the solver already took the stored plan's value wherever its call agrees with the plan's.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from mantra_env.agents.scripted import FINAL, Action, OracleError, ScriptedPolicy
from mantra_env.case import Case
from mantra_env.oracle import complete_plan
from mantra_env.smt import Alternative, CaseSolver, QueryResult, WitnessCall
from mantra_env.smt.queries import is_placeholder
from mantra_env.tools import ToolSpec

DEFAULT_BOUND = 16  # the oracle's bound for a case without a validation record


class Alternatives(BaseModel):
    """What the solver says about a case's second compliant witnesses: the query (``found``; ``infeasible``:
    unique but for free text; ``unknown``: out of work budget) and every alternative found."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    query: QueryResult
    alternatives: list[Alternative]


def alternative_witnesses(case: Case, tools: Sequence[ToolSpec]) -> Alternatives:
    """The solver's alternatives to the case's stored oracle plan: the query at the case's own bound, the
    one-write variations at the plan's length (:meth:`mantra_env.smt.CaseSolver.variations`), and the query's
    own trace when no variation of another value or tool fits.

    Raises:
        OracleError: the case has no stored oracle plan.
    """
    if case.oracle_plan is None:
        raise OracleError(f"case {case.id}: no stored oracle plan to differ from")
    plan = [WitnessCall(tool=call.tool, args=call.arguments) for call in case.oracle_plan]
    solve = partial(CaseSolver, case.world_model, case.checks, initial=case.scenario.valuation, tools=tools)
    query = solve(case.validation.trace_bound or DEFAULT_BOUND).alternative_witness(plan)
    if query.status == "unknown":
        return Alternatives(query=query, alternatives=[])
    found = solve(len(plan)).variations(plan, free_only=query.status != "found")
    if query.witness is not None and all(alternative.change in ("text", "unread") for alternative in found):
        found.append(Alternative(change="trace", calls=query.witness.calls))
    return Alternatives(query=query, alternatives=found)


def alternative_plan(case: Case, alternative: Alternative, tools: Sequence[ToolSpec]) -> list[Action]:
    """The alternative witness as env actions: its concrete values, then the case's bindings for what it leaves
    open; a value still open is left out.

    Raises:
        MissingArguments: a required parameter nothing gives (every gap, in step order).
    """
    specs = {spec.name: spec for spec in tools}
    plan: list[Action] = []
    for call in alternative.calls:
        bindings = case.argument_bindings.get(call.tool, {})
        args: dict[str, Any] = {}
        for name, value in call.args.items():
            if not is_placeholder(value):
                args[name] = value
            elif name in bindings:
                args[name] = bindings[name]
        spec = specs.get(call.tool)
        for name in spec.required if spec else []:
            if name not in args and name in bindings:
                args[name] = bindings[name]
        plan.append({"tool": call.tool, "arguments": args})
    return complete_plan(case.id, plan, specs)


class PlanPolicy(ScriptedPolicy):
    """Replays a fixed list of actions, then answers (the alternative plan, or any plan a test builds)."""

    name = "plan"

    def __init__(self, plan: Sequence[Action]) -> None:
        self._given = [dict(action) for action in plan]
        self._plan: list[Action] = []

    def start(self, case: Case, tools: Sequence[ToolSpec], rng: np.random.Generator) -> None:
        self._plan = [dict(action) for action in self._given]

    def act(self, observation: str) -> Action:
        return self._plan.pop(0) if self._plan else dict(FINAL)
