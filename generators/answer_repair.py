"""Stage ``answer_repair`` (config ``checks.repair_answer_checks``): ANSWER checks that name facts the case's
database does not hold are sent back to the checks writer with the reads' real results.

The checks writer names an ANSWER check's read and path without seeing a result, so a path is a guess at the
result's shape (``payment_history[0].amount``, ``variants[1001].price``); a path the result does not have, or a
request that asks to be told facts with no ANSWER check at all, made the export refuse the case
(``answer_unresolved``, ``missing_answer_check``), losing exactly the information requests the ANSWER checks are
for. Before the export, such a case's writer gets one request (``answer_repair/<scenario id>``, role ``checks``):
the scenario, its ANSWER checks with what is wrong with each, and the JSON result of every read they name (or of
the reads of the oracle's plan, when there are none), as the compliant run sees them on the case's database. The
answer lists the case's ANSWER checks anew; each must resolve on those results (the answer check says which does
not), and they replace the case's old ones. ANSWER checks are outside the trace formula, so the case's validation
stands as it is.

Two gated additions (off when absent, so older recordings replay): ``checks.refuse_echoed_facts`` also sends back an
ANSWER check whose every fact the customer's request already states (a zip code the customer typed is no evidence
the agent read the address), and refuses a rewritten one that does; ``checks.answer_on_refusals`` sends a case whose
compliant run declines (its oracle writes nothing) and that has no ANSWER check once, for the fact that decides the
refusal (an agent that claims the refused change was made then fails); its writer may answer none.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cached_property

from pydantic import BaseModel, ConfigDict, Field

from mantra_env.case import Case, CaseCheck
from mantra_env.checks import Answer, call_matches, parse_check
from mantra_env.checks.facts import last_field, stated
from mantra_env.domains import Domain, load_domain
from mantra_env.errors import MantraError
from mantra_env.generators.answer_gate import AnswerUnresolved, replayed, unresolved_answers, with_answer_facts
from mantra_env.generators.llm import AnswerCheck, LLMClient, RepairNeeded
from mantra_env.generators.prompts import SINGLE_TURN, Messages, check_language
from mantra_env.trace import ToolCall

STAGE = "answer_repair"
RESULT_CHARS = 6_000
"""How much of one read's JSON result the request shows (a long order history is cut, with a note)."""


class AnswerChecks(BaseModel):
    """The answer: the case's ANSWER checks, in the check language's text form."""

    model_config = ConfigDict(extra="forbid")

    answers: list[str] = Field(
        description="The ANSWER checks, one per fact the customer asked to be told, e.g. ANSWER CALL "
        'get_order_details(order_id="#W1").status AS enum'
    )


class AnswerRepairCheck(AnswerCheck[AnswerChecks]):
    """Each answer parses as an ANSWER check whose read is a read tool of the domain and whose path resolves on
    the case's database (as the export resolves it)."""

    case: Case
    domain: str
    refuse_echoes: bool = Field(default=False, exclude_if=lambda on: not on)
    may_be_empty: bool = Field(default=False, exclude_if=lambda on: not on)

    @cached_property
    def _domain(self) -> Domain:
        return load_domain(self.domain)

    def output(self) -> type[AnswerChecks]:
        return AnswerChecks

    def check(self, value: AnswerChecks) -> AnswerChecks:
        problems = []
        if not value.answers and not self.may_be_empty:
            problems.append("give at least one ANSWER check: the customer asked to be told something")
        reads = {spec.name for spec in self._domain.tool_specs() if spec.kind == "read"}
        trial: list[CaseCheck] = []  # the well-formed answers, resolved below on one replay of the case
        for k, text in enumerate(value.answers):
            try:
                parsed = parse_check(text)
            except MantraError as error:
                problems.append(f"answers[{k}]: {error}")
                continue
            if not isinstance(parsed, Answer):
                problems.append(f"answers[{k}] is not an ANSWER check; write ANSWER CALL read(args).path AS kind")
            elif parsed.read.tool not in reads:
                problems.append(f"answers[{k}]: {parsed.read.tool!r} is not a read tool of the domain")
            elif self.may_be_empty and _record_key(parsed):
                problems.append(
                    f"answers[{k}]: {parsed.path} is a record's internal id, which a compliant agent that declines "
                    "need not tell the customer; name what decides the refusal in words the customer knows (a "
                    "status, a method's kind or brand, an amount, a date), or answer with none"
                )
            else:
                trial.append(CaseCheck(id=f"answer{k}", check=parsed))
        if trial:
            tried = self.case.model_copy(update={"checks": trial})
            calls = replayed(tried, self._domain)  # one replay for both questions
            unresolved = unresolved_answers(tried, self._domain, calls)
            echoed = echoed_answers(tried, self._domain, calls) if self.refuse_echoes and not unresolved else []
            for problem in [*unresolved, *echoed]:
                number, _, why = problem.removeprefix("check answer").partition(": ")
                problems.append(f"answers[{number}]: {why}")
        if problems:
            raise RepairNeeded.listing(problems)
        return value

    def statement(self) -> str:
        return "one JSON object fitting the schema whose answers are ANSWER checks resolving on the results shown"


DECLINED = (
    "the compliant run declines this request (it changes nothing), and no ANSWER check grades what the agent tells "
    "the customer, so an agent that claims the change was made passes"
)


def _record_key(check: Answer) -> bool:
    """Whether ``check`` names an identifier read from a field named ``id`` or ``*_id`` (``payment_method_id``)."""
    field = last_field(check.path)
    return check.kind == "identifier" and (field == "id" or field.endswith("_id"))


def needs_repair(
    case: Case,
    domain: Domain,
    asks_for_information: bool,
    refuse_echoes: bool = False,
    answer_refusals: bool = False,
) -> list[str]:
    """What is wrong with ``case``'s ANSWER checks (empty: nothing): each that does not resolve, or none at all
    when the request asks to be told facts; with ``refuse_echoes`` each whose facts the request already states;
    with ``answer_refusals`` none at all on a case whose compliant run declines (:data:`DECLINED`)."""
    if not any(isinstance(entry.check, Answer) for entry in case.checks):
        if asks_for_information:
            return ["the request asks to be told facts, but no ANSWER check grades them"]
        return [DECLINED] if answer_refusals and declines(case, domain) else []
    calls = replayed(case, domain)  # one replay for both questions
    return unresolved_answers(case, domain, calls) or (echoed_answers(case, domain, calls) if refuse_echoes else [])


def declines(case: Case, domain: Domain) -> bool:
    """Whether ``case``'s compliant run makes calls and no write (False when the case has no plan)."""
    kinds = {spec.name: spec.kind for spec in domain.tool_specs()}
    calls = replayed(case, domain)
    return bool(calls) and all(kinds.get(call.tool) != "write" for call in calls)


def echoed_answers(case: Case, domain: Domain, calls: Sequence[ToolCall] | None = None) -> list[str]:
    """Each ANSWER check of ``case`` whose every fact its scenario prompt already states (by the grader's own
    matching): an agent that repeats the customer's words would pass it without a read. Checks that do not
    resolve are not reported here (:func:`~mantra_env.generators.answer_gate.unresolved_answers` reports them).
    ``calls``: the case's replay, if the caller made it."""
    try:
        resolved = with_answer_facts(case, domain, calls)
    except AnswerUnresolved:
        return []
    problems = []
    for entry in resolved.checks:
        check = entry.check
        if (
            isinstance(check, Answer)
            and check.expected
            and all(stated(check.kind, fact, case.scenario.prompt) for fact in check.expected)
        ):
            problems.append(
                f"check {entry.id}: the customer's request already states {', '.join(check.expected)} "
                f"({check.kind} at {check.path}), so an agent that repeats the request passes it without reading "
                "anything; name a fact only the read returns (another field of that record)"
            )
    return problems


def _shown(call: ToolCall) -> str:
    text = json.dumps(call.result if call.error is None else {"error": call.error.message}, ensure_ascii=False)
    if len(text) > RESULT_CHARS:
        text = text[:RESULT_CHARS] + f" ... (cut: {len(text)} characters in all)"
    return f"{call.tool}({json.dumps(call.args, ensure_ascii=False)}) returned:\n{text}"


def _reads(case: Case, domain: Domain) -> list[ToolCall]:
    """The results the writer needs: every read an ANSWER check names (from the compliant run's replay when it
    makes that read, else run alone on the case's database), then the compliant run's other reads."""
    kinds = {spec.name: spec.kind for spec in domain.tool_specs()}
    run = [call for call in replayed(case, domain) if kinds.get(call.tool) == "read"]
    named: list[ToolCall] = []
    for entry in case.checks:
        if isinstance(entry.check, Answer) and kinds.get(entry.check.read.tool) == "read":
            read = entry.check.read
            found = next((call for call in reversed(run) if call_matches(read, call)), None)
            if found is None:
                toolkit = domain.toolkit(domain.fresh_database(case.database_patch))
                result, error = toolkit.execute(read.tool, dict(read.args))
                found = ToolCall(step=len(named), tool=read.tool, args=dict(read.args), result=result, error=error)
            named.append(found)
    shown: list[ToolCall] = []
    for call in [*named, *run]:  # each read once (two facts of one read, a named read the run also makes)
        if not any(c.tool == call.tool and c.args == call.args for c in shown):
            shown.append(call)
    return shown


def prompt(case: Case, domain: Domain, problems: Sequence[str]) -> Messages:
    answers = [entry.text for entry in case.checks if isinstance(entry.check, Answer)]
    results = "\n\n".join(_shown(call) for call in _reads(case, domain)) or "(the compliant run makes no read)"
    if list(problems) == [DECLINED]:
        return _refusal_prompt(case, results)
    return [
        {
            "role": "system",
            "content": "You wrote the checks of a test scenario for an agent that follows a manual with tools. The "
            "customer asks to be told facts, and ANSWER checks say which: each names a read, a path into that read's "
            "JSON result and the fact's kind; the pipeline then reads the expected value from the database. Some of "
            "yours cannot be resolved, or are missing. Below are the real results of the reads, as a compliant run "
            "sees them. List the case's ANSWER checks anew: one per fact the customer asked to be told, each with "
            "a path the result has (.name for a field, or for a mapping's key that is a name; [k] for a list's k-th "
            "element or a mapping's numeric key, e.g. variants[1001]; [*] for every element). Never free text "
            "(names, addresses): only date, time, money, number, identifier or enum. "
            + SINGLE_TURN
            + "\n\n"
            + check_language(True),
        },
        {
            "role": "user",
            "content": f"Scenario prompt:\n{case.scenario.prompt}\n\nYour ANSWER checks:\n"
            + ("\n".join(answers) or "(none)")
            + "\n\nWhat is wrong:\n"
            + "\n".join(f"- {problem}" for problem in problems)
            + f"\n\nResults of the reads:\n{results}",
        },
    ]


def _refusal_prompt(case: Case, results: str) -> Messages:
    return [
        {
            "role": "system",
            "content": "You wrote the checks of a test scenario for an agent that follows a manual with tools. A "
            "compliant agent declines this customer's request, and nothing grades what it tells the customer, so an "
            "agent that claims it made the change passes. An ANSWER check says which fact the final answer must "
            "state: it names a read, a path into that read's JSON result and the fact's kind; the pipeline then "
            "reads the expected value from the database. Below are the real results of the compliant run's reads. "
            "If a fact of those results decides the refusal (an order's status, a payment method's kind, a date "
            "past a limit), give one ANSWER check for it: a compliant agent states it when it explains why it "
            "declines. Use a path the result has (.name for a field, or for a mapping's key that is a name; [k] for a "
            "list's k-th element or a mapping's numeric key; [*] for every element). Never free text (names, "
            "addresses), and never a fact the customer's request already states. If the manual forbids the request "
            "whatever the records say, answer with an empty list. " + SINGLE_TURN + "\n\n" + check_language(True),
        },
        {
            "role": "user",
            "content": f"Scenario prompt:\n{case.scenario.prompt}\n\nResults of the reads:\n{results}",
        },
    ]


async def repair_answers(
    client: LLMClient,
    case: Case,
    scenario_id: str,
    domain: Domain,
    problems: Sequence[str],
    written_by: str | None,
    refuse_echoes: bool = False,
) -> Case:
    """``case`` with its ANSWER checks replaced by the writer's (ids ``answer_1``, ...; ``written_by`` when the
    export records provenance).

    Raises:
        AnswerPending: an exchange writer has not answered yet.
        GenerationError: the writer kept giving unusable answers.
    """
    check = AnswerRepairCheck(
        case=case, domain=domain.name, refuse_echoes=refuse_echoes, may_be_empty=list(problems) == [DECLINED]
    )
    answer = await client.generate(STAGE, scenario_id, prompt(case, domain, problems), check)
    kept = [entry for entry in case.checks if not isinstance(entry.check, Answer)]
    taken = {entry.id for entry in kept}
    fresh: list[CaseCheck] = []
    for text in answer.answers:
        number = len(fresh) + 1
        while f"answer_{number}" in taken:
            number += 1
        taken.add(f"answer_{number}")
        fresh.append(CaseCheck(id=f"answer_{number}", check=parse_check(text), written_by=written_by))
    return case.model_copy(update={"checks": [*kept, *fresh]})
