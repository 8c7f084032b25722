"""Stage ``check_generation``: the trace-level checks of one scenario, parsed and checked against the tools."""

from __future__ import annotations

from collections.abc import Sequence

from generators import prompts
from generators.artifacts import CheckSet, CheckSetWithFacts, Scenario
from generators.llm import AnswerCheck, LLMClient, RepairNeeded
from generators.scenarios import scenario_text
from mantra_env.case import CaseCheck
from mantra_env.checks import Answer, parse_check
from mantra_env.errors import MantraError
from mantra_env.tools import ToolSpec, call_problem, with_list_order


def parse_check_set(answer: CheckSet, tools: Sequence[ToolSpec]) -> list[CaseCheck]:
    """The answer's checks as case checks; every problem (syntax with its position, unknown tools or
    parameters, repeated ids) at once, as :class:`RepairNeeded`."""
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
        if bad:
            problems.append(f"check {draft.id} ({draft.check}) {bad[0]}")
            continue
        # Pinned lists compare as the tool schema says (x-ordered), whether or not the model wrote PAIRED.
        entries.append(CaseCheck(id=draft.id, check=with_list_order(check, specs)))
    if problems:
        raise RepairNeeded.listing(problems)
    return entries


class ChecksCheck(AnswerCheck[CheckSet]):
    """Stage ``check_generation``: every check parses and names only the tools and parameters of the request."""

    tools: list[ToolSpec]
    answer_checks: bool = False

    def output(self) -> type[CheckSet]:
        return CheckSetWithFacts if self.answer_checks else CheckSet

    def check(self, value: CheckSet) -> CheckSet:
        parse_check_set(value, self.tools)
        return value

    def statement(self) -> str:
        return (
            "one JSON object fitting the schema whose checks have distinct ids and each parse in the check grammar, "
            "calling only the request's tools with parameters (and types) their schemas declare"
        )


async def generate_checks(
    client: LLMClient, scenario: Scenario, excerpt: str, tools: Sequence[ToolSpec], answer_checks: bool = False
) -> tuple[list[CaseCheck], bool | None]:
    """The checks of ``scenario`` (request key ``check_generation/<scenario id>``), and whether the request asks
    to be told facts (None unless ``answer_checks``: config ``checks.answer_checks``)."""
    messages = prompts.checks(excerpt, tools, scenario_text(scenario), answer_checks)
    check = ChecksCheck(tools=list(tools), answer_checks=answer_checks)
    answer = await client.generate("check_generation", scenario.id, messages, check)
    asks = answer.asks_for_information if isinstance(answer, CheckSetWithFacts) else None
    return parse_check_set(answer, tools), asks
