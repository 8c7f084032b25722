"""The deterministic trace grader: no LLM, no randomness, the same verdict on every machine."""

from __future__ import annotations

from collections.abc import Sequence

from mantra_env.verdict import CheckVerdict, Evidence, Verdict
from mantra_env.case import CaseCheck
from mantra_env.checks import Check, CheckOutcome, evaluate, format_check
from mantra_env.errors import GradingError
from mantra_env.trace import Trace


def _evidence(outcome: CheckOutcome) -> Evidence:
    return Evidence.model_construct(
        matched_steps={role: list(steps) for role, steps in outcome.matched.items()},
        violating_step=outcome.violating_step,
        explanation=outcome.explanation,
        branches=[_evidence(branch) for branch in outcome.branches],
        branch_categories=[branch.category for branch in outcome.branches],
    )


def grade(trace: Trace, checks: Sequence[CaseCheck | Check]) -> Verdict:
    """Grade ``trace`` against ``checks``; the case passes iff every check passes.

    ``checks`` may be a case's :class:`CaseCheck` entries or bare checks (ids ``c0``, ``c1``, ...).

    Raises:
        GradingError: if ``checks`` is empty (a case with no checks cannot pass or fail).
    """
    if not checks:
        raise GradingError("cannot grade against an empty check list: a case needs at least one check")
    index = trace.index()
    verdicts = []
    for position, entry in enumerate(checks):
        if isinstance(entry, CaseCheck):
            check_id, check = entry.id, entry.check
        else:
            check_id, check = f"c{position}", entry
        outcome = evaluate(check, index)
        # model_construct: the fields come from our own typed outcome, so re-validating would only cost time.
        verdicts.append(
            CheckVerdict.model_construct(
                check_id=check_id,
                check=format_check(check),
                passed=outcome.passed,
                category=outcome.category,
                evidence=_evidence(outcome),
            )
        )
    return Verdict.model_construct(passed=all(v.passed for v in verdicts), checks=verdicts)
