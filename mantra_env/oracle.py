"""The oracle: the plan that proves a case solvable, from the case's canonical compliant SMT witness.

The oracle's plan
The tool sequence is the canonical compliant witness of the case's SMT encoding (world model ∧ goal ∧ every
check; only calls the world model accepts; the shortest trace, then reads as early as the model allows,
then tool-index order), so the oracle is reproducible and reads before it writes wherever the model
allows. Arguments are filled per call, in this order:

1. arguments that some check pins for that tool take the witness's value (the solver chose the pinned
   value, so the call matches the check); a list the checks pin in another order of the same items takes
   the check's order (the solver's order of an unordered list is arbitrary);
2. the case's ``argument_bindings[tool]`` fill the arguments the checks leave open (addresses, dates,
   free text: values the checks deliberately do not pin, see the paper on brittle checks);
3. any other concrete witness value (e.g. a quantity the world model fixes) is used as is; a value nothing
   in the case asks for is a placeholder in the witness (never another parameter's literal) and left out.

A required parameter still missing is a :class:`MissingArguments` error naming the case, tool and parameter
(the generation pipeline asks the scenario writer for those values before it exports, see
:mod:`mantra_env.generators.oracle_arguments`).

The plan is a pure function of the case, the tool specs and the bound; a case exported with its plan
(``Case.oracle_plan``) is answered from it. The scripted oracle policy (:mod:`mantra_env.agents.scripted`), the export,
``mantra author``, the unrequested-write rule's plan and the viewer's expected trace all read this one plan; generation
and the viewer import it from here, never from ``agents`` (``tests/test_layers.py``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mantra_env.case import Case
from mantra_env.errors import MantraError
from mantra_env.smt import CaseSolver, Witness
from mantra_env.smt.queries import is_placeholder
from mantra_env.tools import ToolSpec

Action = dict[str, Any]
"""One step in the env's action format: ``{"tool": ..., "arguments": {...}}`` or ``{"final_answer": ...}``."""


def action_text(action: Action) -> str:
    """``action`` as the text ``MantraEnv.step`` takes."""
    return json.dumps(action, ensure_ascii=False)


class OracleError(MantraError, ValueError):
    """The oracle cannot build a plan for a case (no compliant witness, or an argument it cannot fill)."""


@dataclass(frozen=True)
class ArgumentGap:
    """A call of the oracle's plan whose required parameters nothing in the case gives."""

    step: int
    tool: str
    names: tuple[str, ...]


class MissingArguments(OracleError):
    """Required arguments of the plan that no check, binding or witness value gives (every gap, in step order)."""

    def __init__(self, case_id: str, gaps: Sequence[ArgumentGap], plan: Sequence[Action]) -> None:
        self.gaps, self.plan = list(gaps), list(plan)
        first = gaps[0]
        more = f" (and {len(gaps) - 1} more call(s))" if len(gaps) > 1 else ""
        super().__init__(
            f"case {case_id}: step {first.step} calls {first.tool} but nothing gives {', '.join(first.names)}; "
            f"add them to argument_bindings.{first.tool}{more}"
        )


_PLANS: dict[str, list[Action]] = {}  # the plan is a pure function of the case, the tools and the bound


def oracle_plan(case: Case, tools: Sequence[ToolSpec], bound: int | None = None) -> list[Action]:
    """The oracle's tool calls for ``case`` (see the module docstring); computed once per case and bound. A case
    exported with its plan (``Case.oracle_plan``, the domain's tools at the case's own bound) is answered from it:
    solving the canonical witness can take minutes on a large case, and the screen replayed the stored plan."""
    if case.oracle_plan is not None and bound in (None, case.validation.trace_bound):
        return [call.model_dump(mode="json") for call in case.oracle_plan]  # fresh lists: policies pop their copy
    horizon = bound or case.validation.trace_bound or 16
    # the solver modes too: the case's JSON leaves out witness_at_own_length (carried, never written)
    tools_json = [t.model_dump(mode="json") for t in tools]
    key = json.dumps([case.model_dump(mode="json"), tools_json, horizon, case.validation.solver_modes])
    if key not in _PLANS:
        _PLANS[key] = _solve_plan(case, tools, horizon)
    return [{"tool": a["tool"], "arguments": dict(a["arguments"])} for a in _PLANS[key]]  # policies pop their copy


_WITNESSES: dict[str, Witness] = {}  # the witness does not depend on the bindings: filling them never re-solves


def _solve_plan(case: Case, tools: Sequence[ToolSpec], horizon: int) -> list[Action]:
    return plan_from_witness(case, compliant_witness(case, tools, horizon), tools)


def compliant_witness(case: Case, tools: Sequence[ToolSpec], horizon: int) -> Witness:
    """The case's canonical compliant witness within ``horizon`` steps (see the module docstring), in the solver
    modes the case was validated in (``case.validation.solver_modes``)."""
    modes = case.validation.solver_modes
    key = json.dumps(
        [case.world_model, [c.model_dump(mode="json") for c in case.checks], case.scenario.valuation,
         [t.model_dump(mode="json") for t in tools], horizon, modes],
        sort_keys=True, default=str,
    )  # fmt: skip
    if key not in _WITNESSES:
        solver = CaseSolver(case.world_model, case.checks, horizon, case.scenario.valuation, tools, **modes)
        result = solver.compliant_witness()
        if result.status != "found" or result.witness is None:
            raise OracleError(f"case {case.id}: no compliant trace within {horizon} steps ({result.status})")
        _WITNESSES[key] = result.witness
    return _WITNESSES[key]


def argument_gaps(case: Case, tools: Sequence[ToolSpec], bound: int | None = None) -> MissingArguments | None:
    """What the oracle's plan of ``case`` lacks (None: the plan is complete).

    Raises:
        OracleError: the case has no compliant witness within the bound.
    """
    try:
        oracle_plan(case, tools, bound)
    except MissingArguments as missing:
        return missing
    return None


def plan_from_witness(case: Case, witness: Witness, tools: Sequence[ToolSpec]) -> list[Action]:
    specs = {spec.name: spec for spec in tools}
    pinned: dict[str, dict[str, list[Any]]] = {}  # tool -> parameter -> the literals checks pin
    for entry in case.checks:
        for atom in entry.check.atoms:
            for name, literal in atom.args.items():
                pinned.setdefault(atom.tool, {}).setdefault(name, []).append(literal)
    plan: list[Action] = []
    for call in witness.calls:
        args: dict[str, Any] = {
            name: value if _paired(specs, call.tool, name) else _in_pinned_order(value, pinned[call.tool][name])
            for name, value in call.args.items()
            if name in pinned.get(call.tool, {}) and not is_placeholder(value)
        }
        for name, value in case.argument_bindings.get(call.tool, {}).items():
            args.setdefault(name, value)
        for name, value in call.args.items():
            if not is_placeholder(value):
                args.setdefault(name, value)
        plan.append({"tool": call.tool, "arguments": args})
    return complete_plan(case.id, plan, specs)


def complete_plan(case_id: str, plan: list[Action], specs: Mapping[str, ToolSpec]) -> list[Action]:
    """``plan`` if every call gives its tool's required parameters.

    Raises:
        MissingArguments: every call that lacks some (in step order), with the plan as far as it is filled.
    """
    gaps = []
    for step, action in enumerate(plan):
        spec = specs.get(action["tool"])
        missing = tuple(name for name in (spec.required if spec else []) if name not in action["arguments"])
        if missing:
            gaps.append(ArgumentGap(step, action["tool"], missing))
    if gaps:
        raise MissingArguments(case_id, gaps, plan)
    return plan


def _paired(specs: dict[str, ToolSpec], tool: str, name: str) -> bool:
    spec = specs.get(tool)
    return spec is not None and spec.ordered(name)


def _in_pinned_order(value: Any, literals: list[Any]) -> Any:
    """``value``, or the first pinned literal holding the same items in another order (for a list matched as
    a set; a list paired by position with others keeps the solver's order, which keeps the pairs)."""
    if isinstance(value, list):
        key = sorted(map(json.dumps, value))
        for literal in literals:
            if isinstance(literal, list) and sorted(map(json.dumps, literal)) == key:
                return list(literal)
    return value
