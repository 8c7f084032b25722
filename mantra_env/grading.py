"""The deterministic trace grader: no LLM, no randomness, the same verdict on every machine."""

from __future__ import annotations

from collections.abc import Sequence

from mantra_env.case import Case, CaseCheck
from mantra_env.checks import Check, evaluate
from mantra_env.checks.semantics import NO_RULES
from mantra_env.errors import GradingError
from mantra_env.tools import ToolSpec, argument_rules
from mantra_env.trace import Trace
from mantra_env.unrequested import unrequested_writes
from mantra_env.verdict import CheckVerdict, Verdict

GRADER_VERSION: int = 2
"""What a stored verdict means: 1 = the checks alone (every run stored before unrequested writes were graded);
2 = :func:`grade_case`, the checks and no unrequested write (:mod:`mantra_env.unrequested`)."""


def grade(trace: Trace, checks: Sequence[CaseCheck | Check], *, tools: Sequence[ToolSpec] | None = None) -> Verdict:
    """Grade ``trace`` against ``checks``; the case passes iff every check passes.

    ``checks`` may be a case's :class:`CaseCheck` entries or bare checks (ids ``c0``, ``c1``, ...). ``tools``:
    the domain's tool specs, whose schema defaults and free-text marks argument matching honours (see
    :mod:`mantra_env.checks.semantics`); without them a pinned argument the call omits never matches and
    strings compare exactly.

    Raises:
        GradingError: if ``checks`` is empty (a case with no checks cannot pass or fail).
    """
    if not checks:
        raise GradingError("cannot grade against an empty check list: a case needs at least one check")
    entries = [
        (entry.id, entry.check) if isinstance(entry, CaseCheck) else (f"c{position}", entry)
        for position, entry in enumerate(checks)
    ]
    rules = argument_rules(tools) if tools is not None else NO_RULES
    index = trace.index([atom for _, check in entries for atom in check.atoms], rules)
    verdicts = [CheckVerdict(check_id, check.text, evaluate(check, index)) for check_id, check in entries]
    passed = all(v.evidence.passed for v in verdicts)
    return Verdict(passed, tuple(verdicts), passed)


def grade_case(trace: Trace, case: Case, tools: Sequence[ToolSpec]) -> Verdict:
    """The one verdict of an episode on ``case``: its checks, and no unrequested write (judged against the case's
    stored oracle plan; a case without one is graded on its checks alone: ``unrequested_writes`` is None).

    ``tools`` are the domain's tool specs (which tools write, and which arguments name a write's record).
    """
    writes = unrequested_writes(trace, case.checks, case.oracle_plan, tools)
    return grade(trace, case.checks, tools=tools).with_writes(writes)
