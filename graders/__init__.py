"""Scoring and reporting over stored runs: what the numbers are and how they are shown. The grader itself (a trace's
verdict: :func:`~mantra_env.grading.grade`, :func:`~mantra_env.grading.grade_case`, the unrequested-write rule)
lives in the core and is re-exported here for the imports that name it so.

What the package holds: success-rate statistics with their intervals (``metrics``, ``intervals``: the one estimate
format), run-level analysis from the store's rows (``analysis``), the leaderboard and report with its tables and
figures (``leaderboard``, ``table``, ``figures``, ``report``), generated suites' funnel (``generation``), suite audits
and refusal shares (``suite_audit``, ``refusals``), and stored episodes as training records (``export``).
"""

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
