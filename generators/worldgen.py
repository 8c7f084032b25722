"""Stages ``smt_schema_prepass`` and ``smt_full_pass``: the sample's world model, generated independently of the
checks (the LLM sees the excerpt, the tools and the scenarios, never the checks).

The pre-pass declares the state: the scenario variables the rules depend on and the model's own progress
variables with their initial values. The full pass writes the whole model, and a goal per scenario. Both are
parsed and type-checked against the tool schemas; every diagnostic (code, line, caret, hint) goes back to the
LLM in the repair loop.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence

from pydantic import Field, JsonValue

from mantra_env.errors import MantraError
from mantra_env.generators import prompts
from mantra_env.generators.artifacts import Scenario, WorldModelAnswer, WorldModelArtifact, WorldModelSchema
from mantra_env.generators.llm import AnswerCheck, LLMClient, RepairNeeded
from mantra_env.generators.scenarios import scenario_text
from mantra_env.lints import insensitive_writes
from mantra_env.smt import CaseSolver
from mantra_env.tools import ToolSpec
from mantra_env.worldmodel import DslError, WorldModel, check_model, format_model, parse_expr, parse_model

log = logging.getLogger("mantra.generators.worldgen")


def with_goal(model: WorldModel, goal: Sequence[str]) -> WorldModel:
    """``model`` with a scenario's goal conditions (DSL expression texts)."""
    return dataclasses.replace(model, goal=tuple(parse_expr(text, "goal") for text in goal))


def _check_schema(answer: WorldModelSchema, tools: Sequence[ToolSpec]) -> WorldModelSchema:
    text = f"(model\n{answer.declarations}\n)"
    try:
        model = parse_model(text, "declarations")
        check_model(model, tools, text, "declarations")
    except DslError as error:
        raise RepairNeeded(str(error)) from None
    if model.transitions:
        raise RepairNeeded.listing(["the first pass declares variables and constants only; leave transitions out"])
    problems = _undeclared(answer.initial, model)
    if problems:
        raise RepairNeeded.listing(problems)
    return answer


def _undeclared(initial: Mapping[str, JsonValue], model: WorldModel) -> list[str]:
    unknown = sorted(set(initial) - {v.name for v in model.vars})
    return [f"initial names {', '.join(unknown)}, which are not declared variables"] if unknown else []


def _check_full(
    answer: WorldModelAnswer, tools: Sequence[ToolSpec], scenario_ids: Sequence[str], encode_bound: int | None = None
) -> WorldModelAnswer:
    try:
        model = parse_model(answer.model)
        check_model(model, tools, answer.model)
    except DslError as error:
        raise RepairNeeded(str(error)) from None
    problems = []
    if model.goal:
        problems.append("write goals under `goals` per scenario, not as (goal ...) in the model")
    problems += _undeclared(answer.initial, model)
    missing = [sid for sid in scenario_ids if not answer.goals.get(sid)]
    if missing:
        problems.append(f"no goal for scenario(s) {', '.join(missing)}")
    for sid, goal in answer.goals.items():
        if sid not in scenario_ids:
            problems.append(f"goals names {sid!r}, which is not a scenario; scenarios: {', '.join(scenario_ids)}")
            continue
        try:
            goaled = with_goal(model, goal)  # parses the goal: a syntax error is the writer's to repair too
            check_model(goaled, tools)
        except DslError as error:
            problems.append(f"goal of {sid}: {error}")
            continue
        if encode_bound is not None:
            problem = _unencodable(goaled, tools, answer.initial, encode_bound)
            if problem and problem not in problems:
                problems.append(problem)
    if problems:
        raise RepairNeeded.listing(problems)
    return answer.model_copy(update={"model": format_model(model)})


def _unencodable(
    model: WorldModel, tools: Sequence[ToolSpec], initial: Mapping[str, JsonValue], bound: int
) -> str | None:
    """Why the solver cannot encode ``model`` at ``bound`` (too many list slots, a term past its size limit...),
    or ``None``: found here, the writer repairs it; found in validation, only a person could."""
    try:
        CaseSolver(model, [], bound, dict(initial), tools)
    except MantraError as error:
        return f"the solver cannot encode the model: {error}"
    return None


class SchemaCheck(AnswerCheck[WorldModelSchema]):
    """Stage ``smt_schema_prepass``: declarations that parse and type-check, no transitions, initial values of
    declared variables only."""

    tools: list[ToolSpec]

    def output(self) -> type[WorldModelSchema]:
        return WorldModelSchema

    def check(self, value: WorldModelSchema) -> WorldModelSchema:
        return _check_schema(value, self.tools)

    def statement(self) -> str:
        return (
            "one JSON object fitting the schema whose declarations parse and type-check in the world-model DSL against "
            "the request's tools, declare variables and constants only (no transitions), and whose initial values "
            "name declared variables only"
        )


class FullPassCheck(AnswerCheck[WorldModelAnswer]):
    """Stage ``smt_full_pass``: a model that parses and type-checks, and a goal per scenario that does too."""

    tools: list[ToolSpec]
    scenario_ids: list[str]
    encode_bound: int | None = Field(default=None, exclude_if=lambda bound: bound is None)
    """With ``validation.encode_world_models``: the trace bound at which the solver must be able to encode the
    model with each goal (absent from older requests, which keep their bytes)."""

    def output(self) -> type[WorldModelAnswer]:
        return WorldModelAnswer

    def check(self, value: WorldModelAnswer) -> WorldModelAnswer:
        return _check_full(value, self.tools, self.scenario_ids, self.encode_bound)

    def statement(self) -> str:
        encodable = "" if self.encode_bound is None else ", which the solver can encode with each goal"
        return (
            "one JSON object fitting the schema whose model parses and type-checks in the world-model DSL against the "
            f"request's tools{encodable}, has no (goal ...) of its own, gives initial values of declared variables "
            f"only, and gives a type-checking goal for each scenario ({', '.join(self.scenario_ids)}) and for no other"
        )


async def generate_world_model(
    client: LLMClient,
    sample_id: str,
    excerpt: str,
    tools: Sequence[ToolSpec],
    scenarios: Sequence[Scenario],
    encode_bound: int | None = None,
) -> WorldModelArtifact:
    """The sample's world model (canonical text), its initial values and each scenario's goal; with
    ``encode_bound``, a model the solver cannot encode at that bound goes back to its writer."""
    listing = "\n".join(scenario_text(s) for s in scenarios)
    schema = await client.generate(
        "smt_schema_prepass",
        sample_id,
        prompts.schema_prepass(excerpt, tools, listing),
        SchemaCheck(tools=list(tools)),
    )
    ids = [s.id for s in scenarios]
    full = await client.generate(
        "smt_full_pass",
        sample_id,
        prompts.full_pass(excerpt, tools, listing, schema.declarations),
        FullPassCheck(tools=list(tools), scenario_ids=ids, encode_bound=encode_bound),
    )
    warnings = insensitive_writes(parse_model(full.model), tools)
    for lint in warnings:
        log.warning("world model of %s: %s", sample_id, lint.render())
    return WorldModelArtifact(
        sample_id=sample_id,
        schema_prepass=schema,
        model=full.model,
        initial={**schema.initial, **full.initial},
        goals=full.goals,
        warnings=warnings,
    )


def case_internal(initial: Mapping[str, JsonValue], scenario: Scenario) -> dict[str, JsonValue]:
    """The internal variables a case stores: the world model's own initial values, then the scenario's internal
    ones; a name the scenario gives as external stays external (the scenario's valuation wins)."""
    own = {name: value for name, value in initial.items() if name not in scenario.draft.external}
    return {**own, **scenario.draft.internal}


def initial_state(initial: Mapping[str, JsonValue], scenario: Scenario) -> dict[str, JsonValue]:
    """The initial state a case is solved from (what its exported valuation holds)."""
    return {**scenario.draft.external, **case_internal(initial, scenario)}
