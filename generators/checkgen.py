"""Stage ``check_generation``: the trace-level checks of one scenario, parsed and checked against the tools."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from pydantic import Field

from mantra_env.case import CaseCheck
from mantra_env.checks import Answer, Call, NoCall, parse_check
from mantra_env.errors import MantraError
from mantra_env.generators import prompts
from mantra_env.generators.artifacts import CheckSet, CheckSetWithFacts, Scenario
from mantra_env.generators.llm import AnswerCheck, LLMClient, RepairNeeded
from mantra_env.generators.scenarios import scenario_text
from mantra_env.tools import ToolSpec, call_problem, fits_schema, with_list_order


def parse_check_set(answer: CheckSet, tools: Sequence[ToolSpec], refuse_unfit_pins: bool = False) -> list[CaseCheck]:
    """The answer's checks as case checks; every problem (syntax with its position, unknown tools or
    parameters, repeated ids; with ``refuse_unfit_pins``, pinned values that do not fit their parameter's schema)
    at once, as :class:`RepairNeeded`."""
    specs = {spec.name: spec for spec in tools}
    problems: list[str] = []
    entries: list[CaseCheck] = []
    seen: set[str] = set()
    for draft in answer.checks:
        if draft.id in seen:
            problems.append(f"check {draft.id}: the id is used twice")
            continue
        seen.add(draft.id)
        try:
            check = parse_check(draft.check)
        except MantraError as error:
            problems.append(f"check {draft.id}: {error}")
            continue
        atoms = [check.read] if isinstance(check, Answer) else check.atoms
        bad = [problem for atom in atoms if (problem := call_problem(atom.tool, atom.args, specs))]
        if not bad and isinstance(check, Answer) and specs[check.read.tool].kind != "read":
            bad = [f"reads its facts from {check.read.tool}, which is a write: name the read that returns them"]
        if refuse_unfit_pins and not bad:
            bad = [problem for atom in atoms if (problem := unfit_pin(atom, specs))]
        if bad:
            problems.append(f"check {draft.id} ({draft.check}) {bad[0]}")
            continue
        # Pinned lists compare as the tool schema says (x-ordered), whether or not the model wrote PAIRED.
        entries.append(CaseCheck(id=draft.id, check=with_list_order(check, specs)))
    if problems:
        raise RepairNeeded.listing(problems)
    return entries


def unfit_pin(atom: Call | NoCall, specs: Mapping[str, ToolSpec]) -> str | None:
    """Why a pinned value of ``atom`` does not fit its parameter's schema (None if every one fits): such a check
    names a value no call can send (``"90"`` for an integer), and loading the suite would refuse it."""
    spec = specs.get(atom.tool)
    if spec is None:
        return None
    defs = spec.parameters.get("$defs")
    for name, value in atom.args.items():
        schema = spec.param_schema(name)
        if schema is not None and not fits_schema(value, schema, defs if isinstance(defs, dict) else {}):
            allowed = json.dumps({k: v for k, v in schema.items() if k != "description"}, ensure_ascii=False)
            return (
                f"pins {name}={json.dumps(value, ensure_ascii=False)}, which does not fit {atom.tool}'s parameter "
                f"{name} (its schema allows {allowed}); write the value as that type (a number unquoted, a "
                "string quoted, one of the listed values)"
            )
    return None


class ChecksCheck(AnswerCheck[CheckSet]):
    """Stage ``check_generation``: every check parses and names only the tools and parameters of the request
    (with ``refuse_unfit_pins``: and pins values their schemas allow)."""

    tools: list[ToolSpec]
    # Each left out of the request's context when off, so that requests written before the key existed read the same.
    answer_checks: bool = Field(default=False, exclude_if=lambda on: not on)
    refuse_unfit_pins: bool = Field(default=False, exclude_if=lambda on: not on)

    def output(self) -> type[CheckSet]:
        return CheckSetWithFacts if self.answer_checks else CheckSet

    def check(self, value: CheckSet) -> CheckSet:
        parse_check_set(value, self.tools, self.refuse_unfit_pins)
        return value

    def statement(self) -> str:
        return (
            "one JSON object fitting the schema whose checks have distinct ids and each parse in the check grammar, "
            "calling only the request's tools with parameters (and types) their schemas declare"
        )


async def generate_checks(
    client: LLMClient,
    scenario: Scenario,
    excerpt: str,
    tools: Sequence[ToolSpec],
    answer_checks: bool = False,
    refuse_unfit_pins: bool = False,
) -> tuple[list[CaseCheck], bool | None]:
    """The checks of ``scenario`` (request key ``check_generation/<scenario id>``), and whether the request asks
    to be told facts (None unless ``answer_checks``: config ``checks.answer_checks``); ``refuse_unfit_pins`` as
    :class:`ChecksCheck` (config ``checks.refuse_unfit_pins``)."""
    messages = prompts.checks(excerpt, tools, scenario_text(scenario), answer_checks)
    check = ChecksCheck(tools=list(tools), answer_checks=answer_checks, refuse_unfit_pins=refuse_unfit_pins)
    answer = await client.generate("check_generation", scenario.id, messages, check)
    asks = answer.asks_for_information if isinstance(answer, CheckSetWithFacts) else None
    return parse_check_set(answer, tools, refuse_unfit_pins), asks
