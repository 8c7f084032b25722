"""The grader's typed output: a verdict per case with per-check evidence.

These are slotted dataclasses rather than pydantic models (and not frozen ones: treat them as immutable)
because the grader builds eleven of them per graded trace and must grade tens of thousands of traces per
second; :data:`VERDICT_ADAPTER` gives them a JSON form, a JSON schema and validation when they are read back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

from mantra_env.checks.semantics import CheckOutcome, FailureCategory
from mantra_env.errors import GradingError
from mantra_env.unrequested import UnrequestedWrite


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
    """A case passes iff every check passes and the agent made no unrequested write.

    ``checks_passed`` is the checks' verdict alone; ``unrequested_writes`` the accepted writes the case never asks
    for (:mod:`mantra_env.unrequested`), or None when the episode was not graded for writes (a case without a
    stored oracle plan, or a verdict of the checks alone from :func:`mantra_env.grading.grade`). ``passed`` is
    stored too (readers of the JSON need not recompute it) and must equal ``checks_passed and not
    unrequested_writes``: build verdicts with :meth:`combined`.
    """

    passed: bool
    checks: tuple[CheckVerdict, ...]
    checks_passed: bool
    unrequested_writes: tuple[UnrequestedWrite, ...] | None = None

    def __post_init__(self) -> None:
        if self.passed != (self.checks_passed and not self.unrequested_writes):
            raise GradingError(
                f"a verdict with passed={self.passed}, checks_passed={self.checks_passed} and "
                f"{len(self.unrequested_writes or ())} unrequested write(s) contradicts itself; "
                "build it with Verdict.combined"
            )

    @classmethod
    def combined(
        cls, checks: tuple[CheckVerdict, ...], unrequested_writes: tuple[UnrequestedWrite, ...] | None = None
    ) -> Verdict:
        """The verdict of these check verdicts and unrequested writes (None: not graded for writes)."""
        checks_passed = all(verdict.evidence.passed for verdict in checks)
        return cls(checks_passed and not unrequested_writes, checks, checks_passed, unrequested_writes)

    def with_writes(self, unrequested_writes: tuple[UnrequestedWrite, ...] | None) -> Verdict:
        """This verdict's checks with ``unrequested_writes`` (None: not graded for writes)."""
        passed = self.checks_passed and not unrequested_writes
        return Verdict(passed, self.checks, self.checks_passed, unrequested_writes)

    @property
    def graded_for_writes(self) -> bool:
        return self.unrequested_writes is not None

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


VERDICT_SCHEMA_VERSION = 2
"""2: ``checks_passed`` and ``unrequested_writes`` beside ``passed``; 1: ``passed`` and ``checks`` only."""

VERDICT_ADAPTER: TypeAdapter[Verdict] = TypeAdapter(Verdict)


def read_verdict(data: dict[str, Any]) -> Verdict:
    """A verdict from its JSON object, either version: a version-1 verdict (no ``checks_passed``, graded on its
    checks alone) reads as checks_passed = passed, not graded for writes."""
    if "checks_passed" not in data:
        data = {**data, "checks_passed": data.get("passed"), "unrequested_writes": None}
    return VERDICT_ADAPTER.validate_python(data)


OUTCOME_ADAPTER: TypeAdapter[CheckOutcome] = TypeAdapter(CheckOutcome)
