"""Run-level analysis computed only from stored rows, so a resumed run gives the same numbers.

Everything here reads the store's ``v_*`` views; nothing is recomputed from traces in memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from graders.metrics import Estimate, pass_at_1_ci, pass_at_k_ci, pass_hat_k_ci
from mantra_env.store import RolloutStore


@dataclass(frozen=True, slots=True)
class RunSummary:
    """The leaderboard row of one run (one model on one suite)."""

    run_id: str
    model: str
    suite: str
    tasks: int
    attempts: int
    scored: int
    errors: int
    k: int
    pass_at_1: Estimate
    pass_at_k: Estimate
    pass_hat_k: Estimate
    premature_write_rate: float
    empty_trace_rate: float
    crash_rate: float
    read_calls_per_pass: float
    mean_steps: float
    mean_tokens: float


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else math.nan


def summarize_run(store: RolloutStore, run_id: str, k: int = 5) -> RunSummary:
    """Pass@1, Pass@k, Pass^k (bootstrap 95 % intervals over tasks) and behaviour statistics of one run.

    Infrastructure errors are excluded from every score and counted in ``errors`` / ``crash_rate``.
    """
    rows = store.query("SELECT model, suite FROM runs WHERE run_id = ?", [run_id])
    if not rows:
        raise KeyError(f"no run {run_id!r} in {store.path}")
    model, suite = rows[0]
    counts = [(n, passed) for _, n, passed, _ in store.task_counts(run_id)]
    scored_tasks = [(n, passed) for n, passed in counts if n > 0]
    (attempts, scored, errors, premature, empty, steps, tokens) = store.query(
        """SELECT count(*), count(*) FILTER (WHERE scored), count(*) FILTER (WHERE NOT scored),
                  count(*) FILTER (WHERE scored AND premature_write), count(*) FILTER (WHERE empty_trace),
                  avg(steps) FILTER (WHERE scored), avg(tokens) FILTER (WHERE scored)
           FROM v_attempt_behaviour WHERE run_id = ?""",
        [run_id],
    )[0]
    passing_reads = store.query(
        "SELECT avg(read_calls) FROM v_attempt_behaviour WHERE run_id = ? AND status = 'passed'", [run_id]
    )[0][0]
    return RunSummary(
        run_id=run_id,
        model=str(model),
        suite=str(suite),
        tasks=len(counts),
        attempts=int(attempts),
        scored=int(scored),
        errors=int(errors),
        k=k,
        pass_at_1=pass_at_1_ci(scored_tasks),
        pass_at_k=pass_at_k_ci(scored_tasks, k),
        pass_hat_k=pass_hat_k_ci(scored_tasks, k),
        premature_write_rate=_ratio(premature, scored),
        empty_trace_rate=_ratio(empty, scored),
        crash_rate=_ratio(errors, attempts),
        read_calls_per_pass=float(passing_reads) if passing_reads is not None else math.nan,
        mean_steps=float(steps) if steps is not None else math.nan,
        mean_tokens=float(tokens) if tokens is not None else math.nan,
    )


@dataclass(frozen=True, slots=True)
class CategoryCount:
    model: str
    suite: str
    category: str
    count: int
    share: float


def failure_categories(store: RolloutStore, run_ids: list[str] | None = None) -> list[CategoryCount]:
    """Failed checks per (model, suite, category) with their share of that model's failures on that suite."""
    where, params = ("WHERE run_id IN (SELECT unnest(?))", [run_ids]) if run_ids else ("", [])
    rows = store.query(
        f"""SELECT model, suite, category, count(*) AS n,
                   count(*) / sum(count(*)) OVER (PARTITION BY model, suite) AS share
            FROM v_failed_checks {where}
            GROUP BY model, suite, category ORDER BY model, suite, n DESC, category""",
        params,
    )
    return [CategoryCount(str(m), str(s), str(c), int(n), float(sh)) for m, s, c, n, sh in rows]


def top_tools_per_category(
    store: RolloutStore, run_ids: list[str] | None = None, limit: int = 3
) -> list[tuple[str, str, str, int]]:
    """(suite, category, tool, failures): the tools behind most failures of each category (paper Tables 5-6).

    The tool of a failed check is the tool of its first atom (the call that was missing or forbidden).
    """
    where, params = ("AND run_id IN (SELECT unnest(?))", [run_ids]) if run_ids else ("", [])
    rows = store.query(
        f"""WITH failed AS (
                SELECT suite, category,
                       regexp_extract(check_text, '^(?:NO-)?CALL ([A-Za-z_][A-Za-z0-9_]*)', 1) AS tool
                FROM v_failed_checks WHERE category <> 'or_all_branches_failed' {where})
            SELECT suite, category, tool, n FROM (
                SELECT suite, category, tool, count(*) AS n,
                       row_number() OVER (PARTITION BY suite, category ORDER BY count(*) DESC, tool) AS rank
                FROM failed GROUP BY suite, category, tool)
            WHERE rank <= ? ORDER BY suite, category, n DESC, tool""",
        [*params, limit],
    )
    return [(str(s), str(c), str(t), int(n)) for s, c, t, n in rows]
