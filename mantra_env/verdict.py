"""The grader's typed output: a verdict per case with per-check evidence.

These are slotted dataclasses rather than pydantic models (and not frozen ones: treat them as immutable)
because the grader builds eleven of them per graded trace and must grade tens of thousands of traces per
second; :data:`VERDICT_ADAPTER` gives them a JSON form, a JSON schema and validation when they are read back.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import TypeAdapter

from mantra_env.checks.semantics import CheckOutcome, FailureCategory


@dataclass(slots=True)
class CheckVerdict:
    """The verdict of one check on one trace: the check, and its outcome with evidence."""

    check_id: str
    check: str
    """The check in canonical text form."""
    evidence: CheckOutcome
    """Pass/fail, failure category, matched steps per role, violating step, explanation, OR branches."""

    @property
    def passed(self) -> bool:
        return self.evidence.passed

    @property
    def category(self) -> FailureCategory | None:
        return self.evidence.category


@dataclass(slots=True)
class Verdict:
    """A case passes iff every check passes."""

    passed: bool
    checks: tuple[CheckVerdict, ...]

    @property
    def passed_count(self) -> int:
        return sum(1 for verdict in self.checks if verdict.passed)

    @property
    def fraction_passed(self) -> float:
        return self.passed_count / len(self.checks)

    def failures(self) -> list[CheckVerdict]:
        return [verdict for verdict in self.checks if not verdict.passed]

    def to_json(self) -> str:
        return VERDICT_ADAPTER.dump_json(self).decode()


VERDICT_ADAPTER: TypeAdapter[Verdict] = TypeAdapter(Verdict)
OUTCOME_ADAPTER: TypeAdapter[CheckOutcome] = TypeAdapter(CheckOutcome)
