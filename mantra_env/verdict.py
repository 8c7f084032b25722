"""The grader's typed output: a verdict per case with per-check evidence."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from mantra_env.checks import FailureCategory


class Evidence(BaseModel):
    """Why a check passed or failed: which steps matched each role and which step violated it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    matched_steps: dict[str, list[int]] = Field(default_factory=dict)
    violating_step: int | None = None
    explanation: str = ""
    branches: list[Evidence] = Field(default_factory=list, description="Per-operand evidence of an OR.")
    branch_categories: list[FailureCategory | None] = Field(default_factory=list)


class CheckVerdict(BaseModel):
    """The verdict of one check on one trace."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    check_id: str
    check: str = Field(description="The check in canonical text form.")
    passed: bool
    category: FailureCategory | None = Field(default=None, description="Failure category (None if passed).")
    evidence: Evidence


class Verdict(BaseModel):
    """A case passes iff every check passes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    passed: bool
    checks: list[CheckVerdict]

    @property
    def passed_count(self) -> int:
        return sum(1 for verdict in self.checks if verdict.passed)

    @property
    def fraction_passed(self) -> float:
        return self.passed_count / len(self.checks)

    def failures(self) -> list[CheckVerdict]:
        return [verdict for verdict in self.checks if not verdict.passed]
