"""Grading: the deterministic trace grader, its verdicts, and success-rate statistics."""

from mantra_env.checks import CheckOutcome, FailureCategory
from mantra_env.grading import GRADER_VERSION, grade, grade_case  # the grader lives in the core; re-exported here
from mantra_env.namespace import adopt_legacy_name
from mantra_env.unrequested import UnrequestedWrite, unrequested_writes
from mantra_env.verdict import VERDICT_ADAPTER, CheckVerdict, Verdict

__all__ = [
    "GRADER_VERSION",
    "VERDICT_ADAPTER",
    "CheckOutcome",
    "CheckVerdict",
    "FailureCategory",
    "UnrequestedWrite",
    "Verdict",
    "grade",
    "grade_case",
    "unrequested_writes",
]

adopt_legacy_name(__name__, __file__)  # the old top-level name: see mantra_env/namespace.py
