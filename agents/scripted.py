"""Scripted agents that calibrate a suite: an oracle that proves every case solvable, baselines that must
fail (no-op, random, write-first), and baselines that show the floor a model's score reads against (decline,
read-all; never part of the export screen: on a refusal case decline *is* the oracle).

Every scripted agent is a *policy* over the environment's own action format (one JSON tool call or a final
answer per step), so it runs through exactly the code path a model-backed agent does.

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
    :mod:`generators.oracle_arguments`).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mantra_env.answers import REFUSAL_TEXT, final_answer
from mantra_env.case import Case
from mantra_env.checks import Check
from mantra_env.errors import MantraError
from mantra_env.smt import CaseSolver, Witness
from mantra_env.smt.queries import PLACEHOLDER_PREFIXES
from mantra_env.spaces import random_call
from mantra_env.tools import ToolSpec, fits_schema
from mantra_env.trace import ToolCall, ToolError, ToolKind

Action = dict[str, Any]
FINAL = {"final_answer": "done"}
REFUSAL = {"final_answer": REFUSAL_TEXT}


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


class ScriptedPolicy(ABC):
    """A policy that acts from the case, the tool specs and the observations; ``start`` begins an episode."""

    name: str = "scripted"

    @abstractmethod
    def start(self, case: Case, tools: Sequence[ToolSpec], rng: np.random.Generator) -> None: ...

    @abstractmethod
    def act(self, observation: str) -> Action: ...


def _is_placeholder(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(PLACEHOLDER_PREFIXES)


_PLANS: dict[str, list[Action]] = {}  # the plan is a pure function of the case, the tools and the bound


def oracle_plan(case: Case, tools: Sequence[ToolSpec], bound: int | None = None) -> list[Action]:
    """The oracle's tool calls for ``case`` (see the module docstring); computed once per case and bound. A case
    exported with its plan (``Case.oracle_plan``, the domain's tools at the case's own bound) is answered from it:
    solving the canonical witness can take minutes on a large case, and the screen replayed the stored plan."""
    if case.oracle_plan is not None and bound in (None, case.validation.trace_bound):
        return [call.model_dump(mode="json") for call in case.oracle_plan]  # fresh lists: policies pop their copy
    horizon = bound or case.validation.trace_bound or 16
    key = json.dumps([case.model_dump(mode="json"), [t.model_dump(mode="json") for t in tools], horizon])
    if key not in _PLANS:
        _PLANS[key] = _solve_plan(case, tools, horizon)
    return [{"tool": a["tool"], "arguments": dict(a["arguments"])} for a in _PLANS[key]]  # policies pop their copy


_WITNESSES: dict[str, Witness] = {}  # the witness does not depend on the bindings: filling them never re-solves


def _solve_plan(case: Case, tools: Sequence[ToolSpec], horizon: int) -> list[Action]:
    return plan_from_witness(case, compliant_witness(case, tools, horizon), tools)


def compliant_witness(case: Case, tools: Sequence[ToolSpec], horizon: int) -> Witness:
    """The case's canonical compliant witness within ``horizon`` steps (see the module docstring)."""
    key = json.dumps(
        [case.world_model, [c.model_dump(mode="json") for c in case.checks], case.scenario.valuation,
         [t.model_dump(mode="json") for t in tools], horizon],
        sort_keys=True, default=str,
    )  # fmt: skip
    if key not in _WITNESSES:
        solver = CaseSolver(case.world_model, case.checks, horizon, case.scenario.valuation, tools)
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
    gaps: list[ArgumentGap] = []
    for step, call in enumerate(witness.calls):
        args: dict[str, Any] = {
            name: value if _paired(specs, call.tool, name) else _in_pinned_order(value, pinned[call.tool][name])
            for name, value in call.args.items()
            if name in pinned.get(call.tool, {}) and not _is_placeholder(value)
        }
        for name, value in case.argument_bindings.get(call.tool, {}).items():
            args.setdefault(name, value)
        for name, value in call.args.items():
            if not _is_placeholder(value):
                args.setdefault(name, value)
        spec = specs.get(call.tool)
        missing = tuple(name for name in (spec.required if spec else []) if name not in args)
        if missing:
            gaps.append(ArgumentGap(step, call.tool, missing))
        plan.append({"tool": call.tool, "arguments": args})
    if gaps:
        raise MissingArguments(case.id, gaps, plan)
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


class OraclePolicy(ScriptedPolicy):
    """Replays the compliant SMT witness with arguments filled as the module docstring says, then answers with
    :func:`mantra_env.answers.final_answer` over the results its calls returned (the facts the case's ANSWER
    checks ask for, a summary of its writes, or a refusal)."""

    name = "oracle"

    def __init__(self) -> None:
        self._plan: list[Action] = []
        self._checks: list[Check] = []
        self._kinds: dict[str, ToolKind] = {}
        self._made: list[ToolCall] = []
        self._pending: Action | None = None

    def start(self, case: Case, tools: Sequence[ToolSpec], rng: np.random.Generator) -> None:
        self._plan = oracle_plan(case, tools)
        self._checks = [entry.check for entry in case.checks]
        self._kinds = {spec.name: spec.kind for spec in tools}
        self._made, self._pending = [], None

    def act(self, observation: str) -> Action:
        if self._pending is not None:  # the observation is the result of the call made last
            self._made.append(_observed(len(self._made), self._pending, observation, self._kinds))
        self._pending = self._plan.pop(0) if self._plan else None
        if self._pending is not None:
            return self._pending
        return {"final_answer": final_answer(self._checks, self._made)}


def _observed(step: int, action: Action, observation: str, kinds: dict[str, ToolKind]) -> ToolCall:
    """The call ``action`` as the trace records it, from the env's observation of it (``{"result": ...}``)."""
    try:
        data = json.loads(observation)
    except ValueError:
        data = None
    ok = isinstance(data, dict) and "result" in data
    return ToolCall.model_construct(
        step=step, tool=action["tool"], args=action.get("arguments", {}), result=data["result"] if ok else None,
        error=None if ok else ToolError(code="error", message=observation), kind=kinds.get(action["tool"]),
        raw_arguments=None,
    )  # fmt: skip


class NoopPolicy(ScriptedPolicy):
    """Answers at once without calling a tool: fails every case with a required call."""

    name = "noop"

    def start(self, case: Case, tools: Sequence[ToolSpec], rng: np.random.Generator) -> None:
        pass

    def act(self, observation: str) -> Action:
        return dict(FINAL)


class RandomPolicy(ScriptedPolicy):
    """Calls random tools with random schema-valid arguments, then answers (a floor for every metric)."""

    name = "random"

    def __init__(self, calls: int = 6) -> None:
        self.calls = calls

    def start(self, case: Case, tools: Sequence[ToolSpec], rng: np.random.Generator) -> None:
        self._plan = [random_call(tools, rng) for _ in range(self.calls)]

    def act(self, observation: str) -> Action:
        return self._plan.pop(0) if self._plan else dict(FINAL)


class WriteFirstPolicy(ScriptedPolicy):
    """The premature-write baseline: the oracle's calls with every write moved before every read. Where the
    oracle writes nothing (a refusal), the eager agent writes anyway: first the write a check forbids (the
    action the customer asked for, named by a NO-CALL atom of a write tool), with the atom's arguments and the
    scenario's values by parameter name, then the oracle's reads."""

    name = "write-first"

    def start(self, case: Case, tools: Sequence[ToolSpec], rng: np.random.Generator) -> None:
        kinds = {spec.name: spec.kind for spec in tools}
        plan = oracle_plan(case, tools)
        writes = [a for a in plan if kinds.get(a["tool"]) == "write"]
        if not writes:
            writes = _forbidden_write(case, tools)
        self._plan = writes + [a for a in plan if kinds.get(a["tool"]) != "write"]

    def act(self, observation: str) -> Action:
        return self._plan.pop(0) if self._plan else dict(FINAL)


def _forbidden_write(case: Case, tools: Sequence[ToolSpec]) -> list[Action]:
    """The first write a NO-CALL atom of the case forbids, as a call (none if no check forbids a write)."""
    specs = {spec.name: spec for spec in tools}
    valuation = case.scenario.valuation
    for entry in case.checks:
        for atom in entry.check.atoms:
            spec = specs.get(atom.tool)
            if atom.op != "no_call" or spec is None or spec.kind != "write":
                continue
            arguments = {**dict(atom.args)}
            for name, value in case.argument_bindings.get(atom.tool, {}).items():
                arguments.setdefault(name, value)
            for name in spec.properties:
                if name not in arguments and name in valuation:
                    arguments[name] = valuation[name]
            return [{"tool": atom.tool, "arguments": arguments}]
    return []


class DeclinePolicy(ScriptedPolicy):
    """Reads what the oracle reads, writes nothing and refuses: the oracle's reads in order with the same arguments,
    then a polite refusal as the answer. On a refusal case (an oracle plan without a write) it *is* the oracle, so
    its Pass@1 is the suite's refusal share, the best any policy that never writes can score. A case without a
    stored plan (the hand-written starter suite) gets the plan solved as the oracle solves it."""

    name = "decline"

    def __init__(self) -> None:
        self._plan: list[Action] = []

    def start(self, case: Case, tools: Sequence[ToolSpec], rng: np.random.Generator) -> None:
        kinds = {spec.name: spec.kind for spec in tools}
        self._plan = [action for action in oracle_plan(case, tools) if kinds.get(action["tool"]) == "read"]

    def act(self, observation: str) -> Action:
        return self._plan.pop(0) if self._plan else dict(REFUSAL)


class ReadAllPolicy(ScriptedPolicy):
    """The naive floor: every read tool that the request's identifiers can call (:func:`stated_reads`), once,
    then an answer; no write."""

    name = "read-all"

    def __init__(self) -> None:
        self._plan: list[Action] = []

    def start(self, case: Case, tools: Sequence[ToolSpec], rng: np.random.Generator) -> None:
        self._plan = stated_reads(case, tools)

    def act(self, observation: str) -> Action:
        return self._plan.pop(0) if self._plan else dict(FINAL)


def stated_reads(case: Case, tools: Sequence[ToolSpec]) -> list[Action]:
    """One call per read tool, in the order of ``tools``, binding each parameter named like one of the scenario's
    external values (the identifiers the request states) to that value when the value fits the parameter's schema.
    A tool is called only when that binding gives at least one argument and every required one (so each call is
    one the environment accepts as well formed); tools without parameters state nothing and are left out."""
    stated = case.scenario.external
    plan: list[Action] = []
    for spec in tools:
        if spec.kind != "read":
            continue
        defs = spec.parameters.get("$defs")
        arguments = {
            name: stated[name]
            for name, schema in spec.properties.items()
            if name in stated and isinstance(schema, dict) and fits_schema(stated[name], schema, _mapping(defs))
        }
        if arguments and all(name in arguments for name in spec.required):
            plan.append({"tool": spec.name, "arguments": arguments})
    return plan


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


SCRIPTED: dict[str, type[ScriptedPolicy]] = {
    policy.name: policy
    for policy in (OraclePolicy, NoopPolicy, RandomPolicy, WriteFirstPolicy, DeclinePolicy, ReadAllPolicy)
}


def action_text(action: Action) -> str:
    return json.dumps(action, ensure_ascii=False)
