"""Stage ``scenario_generation``: m scenarios per sample, each a prompt with named entities and exact quantities,
a valuation of external and internal variables, a database patch and the argument values of a compliant run. With
config ``scenarios.outcome_mix`` the writer is asked for that mix of intended outcomes and each scenario carries its
own (``Scenario.outcome``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from pydantic import PrivateAttr

from mantra_env.domains import Domain, DomainError, load_domain
from mantra_env.generators import prompts
from mantra_env.generators.artifacts import (
    Outcome,
    OutcomeScenarioBatch,
    OutcomeScenarioDraft,
    Scenario,
    ScenarioBatch,
    ScenarioDraft,
)
from mantra_env.generators.llm import AnswerCheck, LLMClient, RepairNeeded
from mantra_env.generators.records import DEFAULT_BUDGET_CHARS, database_view
from mantra_env.tools import ToolSpec, call_problem


class ScenarioCheck(AnswerCheck[ScenarioBatch]):
    """Stage ``scenario_generation``: ``count`` scenarios whose database patches apply to the domain's database and
    whose argument bindings fit the tool schemas."""

    domain: str
    tools: list[ToolSpec]
    count: int
    with_outcome: bool = False
    """Each scenario states its intended outcome (config ``scenarios.outcome_mix``)."""
    _domain: Domain | None = PrivateAttr(default=None)

    def output(self) -> type[ScenarioBatch]:
        return OutcomeScenarioBatch if self.with_outcome else ScenarioBatch

    def check(self, value: ScenarioBatch) -> ScenarioBatch:
        domain = self._domain or load_domain(self.domain)
        specs = {spec.name: spec for spec in self.tools}
        problems: list[str] = []
        for number, draft in enumerate(value.scenarios, start=1):
            patch = [op.model_dump(mode="json") for op in draft.database_patch]
            try:
                domain.fresh_database(patch)
            except DomainError as error:
                problems.append(f"scenario {number}: database_patch: {error}")
            for tool, arguments in draft.argument_bindings.items():
                if problem := call_problem(tool, arguments, specs):
                    problems.append(f"scenario {number}: argument_bindings {problem}")
            overlap = sorted(set(draft.external) & set(draft.internal))
            if overlap:
                problems.append(f"scenario {number}: {', '.join(overlap)} is both external and internal")
        problems += _type_problems(value)
        if len(value.scenarios) < self.count:
            problems.append(f"{len(value.scenarios)} scenarios given; write {self.count}")
        if problems:
            raise RepairNeeded.listing(problems)
        return value

    def statement(self) -> str:
        return (
            f"one JSON object fitting the schema with at least {self.count} scenarios, each with a database_patch "
            f"that applies to the {self.domain} database, argument_bindings that name tools of the request with "
            "parameters and types their schemas accept, and no variable both external and internal"
        )


def _json_kind(value: object) -> str | None:
    if value is None:
        return None  # unknown or not applicable: fits any type
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def _type_problems(batch: ScenarioBatch) -> list[str]:
    """A variable must have one JSON type across the scenarios of a sample: the world model declares it once."""
    seen: dict[str, tuple[str, int]] = {}
    problems = []
    for number, draft in enumerate(batch.scenarios, start=1):
        for name, value in {**draft.external, **draft.internal}.items():
            kind = _json_kind(value)
            if kind is None:
                continue
            first = seen.setdefault(name, (kind, number))
            if first[0] != kind:
                problems.append(
                    f"scenario {number}: variable {name} is {kind} but {first[0]} in scenario {first[1]}; give it "
                    "one type in every scenario (a list stays a list even with one element)"
                )
    return problems


async def generate_scenarios(
    client: LLMClient,
    sample_id: str,
    excerpt: str,
    tools: Sequence[ToolSpec],
    domain: Domain,
    count: int,
    bindings: str = "",
    existing: Sequence[str] = (),
    seed: int = 0,
    database_chars: int = DEFAULT_BUDGET_CHARS,
    outcome_mix: Mapping[Outcome, float] | None = None,
    anchor_by_fields: bool = False,
) -> list[Scenario]:
    """``count`` scenarios for one sample, ids ``<sample>-1`` ... (database patches are applied to the domain's
    database and argument bindings checked against the tool schemas before they are accepted). The writer sees
    the records of :func:`mantra_env.generators.records.database_view` for ``seed`` and the sample. ``outcome_mix``
    (config ``scenarios.outcome_mix``) asks for that mix of intended outcomes and keeps each scenario's;
    ``anchor_by_fields`` (``scenarios.anchor_by_fields``) also shows records the tools look up by value."""
    database = database_view(domain.base_data, tools, excerpt, seed, sample_id, database_chars, anchor_by_fields)
    messages = prompts.scenarios(excerpt, tools, count, database, bindings, existing, outcome_mix)
    check = ScenarioCheck(domain=domain.name, tools=list(tools), count=count, with_outcome=bool(outcome_mix))
    check._domain = domain
    batch = await client.generate("scenario_generation", sample_id, messages, check)
    return [
        _scenario(f"{sample_id}-{number}", sample_id, draft)
        for number, draft in enumerate(batch.scenarios[:count], start=1)
    ]


def _scenario(scenario_id: str, sample_id: str, draft: ScenarioDraft) -> Scenario:
    if isinstance(draft, OutcomeScenarioDraft):  # the outcome is the scenario's, not part of the stored draft
        plain = ScenarioDraft.model_validate(draft.model_dump(exclude={"outcome"}))
        return Scenario(id=scenario_id, sample_id=sample_id, draft=plain, outcome=draft.outcome)
    return Scenario(id=scenario_id, sample_id=sample_id, draft=draft)


def scenario_text(scenario: Scenario) -> str:
    """A scenario as the later stages' prompts show it."""
    draft = scenario.draft
    lines = [f"[{scenario.id}] {draft.prompt}"]
    if draft.external:
        lines.append(f"  external: {json.dumps(draft.external, ensure_ascii=False)}")
    if draft.internal:
        lines.append(f"  internal: {json.dumps(draft.internal, ensure_ascii=False)}")
    return "\n".join(lines)
