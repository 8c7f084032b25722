"""ANSWER checks at export (config ``checks.answer_checks``; issue 33 item 3): each ANSWER check gets the facts
it expects, read from the case's database, and a case whose request asks for information without an ANSWER check
is refused.

The facts are those the oracle's read returns: the oracle's plan is replayed on a fresh copy of the case's
database (its patch applied) and the path is resolved on the result of the last planned call matching the check's
read; a read the plan does not make is executed alone on the initial database with the check's pinned arguments.
Stored in the check, they make grading a pure function of the trace and the checks (see "Answer facts" in
:mod:`mantra_env.checks.semantics`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from mantra_env.case import Case, CaseCheck
from mantra_env.checks import Answer, call_matches
from mantra_env.checks.facts import resolve_path
from mantra_env.domains import Domain
from mantra_env.errors import MantraError
from mantra_env.oracle import OracleError, oracle_plan
from mantra_env.trace import ToolCall

ANSWER_REASONS = ("missing_answer_check", "answer_unresolved")
"""Why the gate refuses a case (counted as ``answer_refused`` in the funnel, not as trivially passed)."""


class AnswerUnresolved(MantraError, ValueError):
    """An ANSWER check's read or path finds no fact on the case's database."""


def replayed(case: Case, domain: Domain) -> list[ToolCall]:
    """The oracle's plan replayed on the case's database (empty if the case has no plan: the screen says why)."""
    try:
        plan = oracle_plan(case, domain.tool_specs())
    except (OracleError, MantraError):
        return []
    toolkit = domain.toolkit(domain.fresh_database(case.database_patch))
    calls = []
    for step, action in enumerate(plan):
        result, error = toolkit.execute(action["tool"], action["arguments"])
        calls.append(ToolCall(step=step, tool=action["tool"], args=action["arguments"], result=result, error=error))
    return calls


def _facts(check: Answer, calls: Sequence[ToolCall], case: Case, domain: Domain) -> tuple[Any, ...]:
    for call in reversed(calls):
        if call.error is None and call_matches(check.read, call):
            return tuple(resolve_path(call.result, check.path))
    toolkit = domain.toolkit(domain.fresh_database(case.database_patch))
    result, error = toolkit.execute(check.read.tool, dict(check.read.args))
    if error is not None:
        raise AnswerUnresolved(f"{check.read.text} fails on the case's database: {error.message}")
    return tuple(resolve_path(result, check.path))


def _resolved(entry: CaseCheck, calls: Sequence[ToolCall], case: Case, domain: Domain) -> CaseCheck:
    """``entry`` with its facts stored if it is an ANSWER check (else as it is).

    Raises:
        AnswerUnresolved: naming the check, when its read or path finds no fact.
    """
    check = entry.check
    if not isinstance(check, Answer):
        return entry
    try:
        expected = _facts(check, calls, case, domain)
        # Validated again: the facts fit the check's kind (a date path holding a price is refused here).
        check = Answer.model_validate({**check.model_dump(), "expected": list(expected)})
    except MantraError as error:
        raise AnswerUnresolved(f"check {entry.id}: {error}") from None
    except ValueError as error:  # pydantic's ValidationError: a fact that is not of the check's kind
        raise AnswerUnresolved(f"check {entry.id}: {error}") from None
    return entry.model_copy(update={"check": check})  # keeps the rest of the entry (its author, who wrote it)


def with_answer_facts(case: Case, domain: Domain, calls: Sequence[ToolCall] | None = None) -> Case:
    """``case`` with the facts of each of its ANSWER checks stored in the check (``expected``), read from
    ``calls`` (default: :func:`replayed`; a caller that already replayed the case passes its calls).

    Raises:
        AnswerUnresolved: naming the check whose read or path finds no fact.
    """
    if not any(isinstance(entry.check, Answer) for entry in case.checks):
        return case
    calls = replayed(case, domain) if calls is None else calls
    return case.model_copy(update={"checks": [_resolved(entry, calls, case, domain) for entry in case.checks]})


def unresolved_answers(case: Case, domain: Domain, calls: Sequence[ToolCall] | None = None) -> list[str]:
    """Why each of ``case``'s ANSWER checks finds no fact (empty: all resolve), from one replay of its plan
    (``calls``, as :func:`with_answer_facts` takes them)."""
    if not any(isinstance(entry.check, Answer) for entry in case.checks):
        return []
    calls = replayed(case, domain) if calls is None else calls
    problems = []
    for entry in case.checks:
        try:
            _resolved(entry, calls, case, domain)
        except AnswerUnresolved as error:
            problems.append(str(error))
    return problems


def answer_gate(
    candidates: Sequence[Case], domain: Domain, information: Collection[str]
) -> tuple[list[Case], dict[str, tuple[str, str]]]:
    """The candidates with their ANSWER facts resolved, and case id -> ``(reason, detail)`` of each refused: a case
    in ``information`` (its request asks to be told facts) without an ANSWER check, or one whose facts cannot be
    read from its database."""
    kept: list[Case] = []
    refused: dict[str, tuple[str, str]] = {}
    for case in candidates:
        if case.id in information and not any(isinstance(entry.check, Answer) for entry in case.checks):
            refused[case.id] = ("missing_answer_check", "the request asks for information but no check grades it")
            continue
        try:
            kept.append(with_answer_facts(case, domain))
        except AnswerUnresolved as error:
            refused[case.id] = ("answer_unresolved", str(error))
    return kept, refused
