"""Stage ``scenario_generation``: m scenarios per sample, each a prompt with named entities and exact quantities,
a valuation of external and internal variables, a database patch and the argument values of a compliant run."""

from __future__ import annotations

import json
from collections.abc import Sequence

from generators import prompts
from generators.artifacts import Scenario, ScenarioBatch
from generators.llm import LLMClient, RepairNeeded
from mantra_env.domains import Domain, DomainError
from mantra_env.tools import ToolSpec, call_problem

DATABASE_EXCERPT_CHARS = 3_000  # fits an 8k-context local model beside the excerpt, the tools and the schema


def database_excerpt(domain: Domain) -> str:
    """The domain's base database as compact JSON, cut at a size a prompt can hold."""
    text = json.dumps(domain.base_data, separators=(",", ":"), ensure_ascii=False)
    return text if len(text) <= DATABASE_EXCERPT_CHARS else text[:DATABASE_EXCERPT_CHARS] + " ...(cut)"


async def generate_scenarios(
    client: LLMClient,
    sample_id: str,
    excerpt: str,
    tools: Sequence[ToolSpec],
    domain: Domain,
    count: int,
    bindings: str = "",
    existing: Sequence[str] = (),
) -> list[Scenario]:
    """``count`` scenarios for one sample, ids ``<sample>-1`` ... (database patches are applied to the domain's
    database and argument bindings checked against the tool schemas before they are accepted)."""
    specs = {spec.name: spec for spec in tools}

    def check(batch: ScenarioBatch) -> ScenarioBatch:
        problems: list[str] = []
        for number, draft in enumerate(batch.scenarios, start=1):
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
        if len(batch.scenarios) < count:
            problems.append(f"{len(batch.scenarios)} scenarios given; write {count}")
        if problems:
            raise RepairNeeded.listing(problems)
        return batch

    messages = prompts.scenarios(excerpt, tools, count, database_excerpt(domain), bindings, existing)
    batch = await client.generate("scenario_generation", sample_id, messages, ScenarioBatch, check)
    return [
        Scenario(id=f"{sample_id}-{number}", sample_id=sample_id, draft=draft)
        for number, draft in enumerate(batch.scenarios[:count], start=1)
    ]


def scenario_text(scenario: Scenario) -> str:
    """A scenario as the later stages' prompts show it."""
    draft = scenario.draft
    lines = [f"[{scenario.id}] {draft.prompt}"]
    if draft.external:
        lines.append(f"  external: {json.dumps(draft.external, ensure_ascii=False)}")
    if draft.internal:
        lines.append(f"  internal: {json.dumps(draft.internal, ensure_ascii=False)}")
    return "\n".join(lines)
