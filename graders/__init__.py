"""Grading: the deterministic trace grader, its verdicts, and success-rate statistics."""

from mantra_env.checks import CheckOutcome, FailureCategory
from mantra_env.grading import grade  # the grader lives in the core; re-exported here
from mantra_env.verdict import VERDICT_ADAPTER, CheckVerdict, Verdict

__all__ = ["VERDICT_ADAPTER", "CheckOutcome", "CheckVerdict", "FailureCategory", "Verdict", "grade"]
