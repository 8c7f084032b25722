"""Grading: the deterministic trace grader and its verdicts (metrics and reports build on these)."""

from graders.trace_grader import grade
from mantra_env.verdict import CheckVerdict, Evidence, Verdict
from mantra_env.checks import FailureCategory

__all__ = ["CheckVerdict", "Evidence", "FailureCategory", "Verdict", "grade"]
