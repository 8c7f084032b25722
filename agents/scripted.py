"""Scripted agents that calibrate a suite: an oracle that proves every case solvable, baselines that must
fail (no-op, random, write-first), and baselines that show the floor a model's score reads against (decline,
read-all; never part of the export screen: on a refusal case decline *is* the oracle).

Every scripted agent is a *policy* over the environment's own action format (one JSON tool call or a final
answer per step), so it runs through exactly the code path a model-backed agent does.

The oracle's plan
    The plan, the witness it replays, the argument gaps and the action format live in the core
    (:mod:`mantra_env.oracle`, re-exported here); :class:`OraclePolicy` replays the plan.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from mantra_env.answers import REFUSAL_TEXT, final_answer
from mantra_env.case import Case
from mantra_env.checks import Check
from mantra_env.oracle import (  # re-exported: the oracle's plan lived here before it moved into the core
    Action,
    ArgumentGap,
    MissingArguments,
    OracleError,
    action_text,
    argument_gaps,
    compliant_witness,
    oracle_plan,
    plan_from_witness,
)
from mantra_env.spaces import random_call
from mantra_env.tools import ToolSpec, fits_schema
from mantra_env.trace import ToolCall, ToolError, ToolKind

__all__ = [
    "CLAIM_DONE",
    "FINAL",
    "REFUSAL",
    "SCRIPTED",
    "Action",
    "ArgumentGap",
    "ClaimDonePolicy",
    "DeclinePolicy",
    "MissingArguments",
    "NoopPolicy",
    "OracleError",
    "OraclePolicy",
    "RandomPolicy",
    "ReadAllPolicy",
    "ScriptedPolicy",
    "WriteFirstPolicy",
    "action_text",
    "argument_gaps",
    "compliant_witness",
    "oracle_plan",
    "plan_from_witness",
    "stated_reads",
]
FINAL = {"final_answer": "done"}
REFUSAL = {"final_answer": REFUSAL_TEXT}
CLAIM_DONE = {"final_answer": "Done: I've made the change you asked for. Is there anything else I can help with?"}


class ScriptedPolicy(ABC):
    """A policy that acts from the case, the tool specs and the observations; ``start`` begins an episode."""

    name: str = "scripted"

    @abstractmethod
    def start(self, case: Case, tools: Sequence[ToolSpec], rng: np.random.Generator) -> None: ...

    @abstractmethod
    def act(self, observation: str) -> Action: ...


class OraclePolicy(ScriptedPolicy):
    """Replays the oracle's plan (:func:`mantra_env.oracle.oracle_plan`), then answers with
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


class DeclinePolicy(OraclePolicy):
    """Reads what the oracle reads and writes nothing: the oracle's reads in order with the same arguments, then
    the oracle's kind of answer over them (:func:`mantra_env.answers.final_answer`: the facts an ANSWER check asks
    for, else a polite refusal). On a case whose oracle plan makes no write (a refusal, or an information request)
    it *is* the oracle, so its Pass@1 is the suite's refusal share, the best any policy that never writes can
    score. A case without a stored plan (the hand-written starter suite) gets the plan solved as the oracle solves
    it."""

    name = "decline"

    def start(self, case: Case, tools: Sequence[ToolSpec], rng: np.random.Generator) -> None:
        super().start(case, tools, rng)
        self._plan = [action for action in self._plan if self._kinds.get(action["tool"]) == "read"]


class ClaimDonePolicy(DeclinePolicy):
    """The false "done": makes the reads the decline baseline makes, writes nothing, and tells the customer the
    change was made (:data:`CLAIM_DONE`). It fails every case whose oracle writes, and passes a refusal only where
    nothing grades what the agent tells the customer (no ANSWER check on the fact that decides the refusal, which
    the generation key ``checks.answer_on_refusals`` asks for): how far a suite believes an agent's word."""

    name = "claim-done"

    def act(self, observation: str) -> Action:
        action = super().act(observation)
        return dict(CLAIM_DONE) if "final_answer" in action else action


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
    for policy in (
        OraclePolicy,
        NoopPolicy,
        RandomPolicy,
        WriteFirstPolicy,
        DeclinePolicy,
        ClaimDonePolicy,
        ReadAllPolicy,
    )
}
