"""Run-level analysis computed only from stored rows, so a resumed run gives the same numbers.

Everything here reads the store's ``v_*`` views; nothing is recomputed from traces in memory.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from mantra_env.checks import Answer, FailureCategory, atoms, parse_check
from mantra_env.checks.operators import charged_atom
from mantra_env.errors import MantraError
from mantra_env.graders.metrics import Estimate, TaskCounts, pass_at_1_ci, pass_at_k_ci, pass_hat_k_ci
from mantra_env.grading import GRADER_VERSION
from mantra_env.store import RolloutStore

Prices = Mapping[str, tuple[float, float]]
"""Model → (dollars per million input tokens, dollars per million output tokens)."""


@dataclass(frozen=True, slots=True)
class RunSummary:
    """The leaderboard row of one run, or of runs pooled because they ran one model on one suite alike."""

    run_ids: tuple[str, ...]
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
    """Input + output tokens per scored episode whose usage is known (NaN: none is; scripted agents report none)."""
    mean_cost: float = math.nan
    """Dollars per scored episode with known usage at the prices given (NaN: no price or no usage)."""
    grader_version: int = GRADER_VERSION
    """The grader that scored the runs (1: the checks alone; runs of different versions are never pooled)."""
    graded_for_writes: int = 0
    """Scored episodes graded for unrequested writes (none for grader version 1, nor on cases without an oracle
    plan, such as the hand-written starter suite's)."""
    unrequested_write_rate: float = math.nan
    """Share of the episodes graded for writes with at least one unrequested write (NaN: none was graded)."""
    task_counts: dict[str, TaskCounts] = field(default_factory=dict, compare=False)
    """Case id → (scored attempts, passed attempts), pooled over the runs (cases without a scored attempt too)."""

    @property
    def run_id(self) -> str:
        return ", ".join(self.run_ids)


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else math.nan


def _float(value: object) -> float:
    return float(value) if isinstance(value, int | float) else math.nan


def pooled_task_counts(store: RolloutStore, run_ids: Sequence[str]) -> dict[str, TaskCounts]:
    """Case id → (scored attempts, passed attempts) summed over ``run_ids``, ordered by case id."""
    pooled: dict[str, tuple[int, int]] = {}
    for run_id in run_ids:
        for case_id, n, passed, _ in store.task_counts(run_id):
            before = pooled.get(case_id, (0, 0))
            pooled[case_id] = (before[0] + n, before[1] + passed)
    return dict(sorted(pooled.items()))


def run_k(store: RolloutStore, run_ids: Sequence[str]) -> int:
    """The k of Pass@k and Pass^k for these runs, the one rule the run summary, the report and the notebooks share:
    the attempts each run was given (``--attempts``), the fewest of them so that every run can reach k; a run stored
    before runs recorded their settings counts with the most attempts of one of its cases. At least 1."""
    rows = store.query("SELECT run_id, settings FROM runs WHERE run_id IN (SELECT unnest(?))", [list(run_ids)])
    found = []
    for run_id, settings in rows:
        attempts = json.loads(settings).get("attempts") if settings else None
        if not isinstance(attempts, int):
            attempts = max((n + e for _, n, _, e in store.task_counts(str(run_id))), default=1)
        found.append(attempts)
    return max(1, min(found, default=1))


def summarize_run(store: RolloutStore, run_id: str, k: int = 5) -> RunSummary:
    """Pass@1, Pass@k, Pass^k (bootstrap 95 % intervals over tasks) and behaviour statistics of one run.

    Infrastructure errors are excluded from every score and counted in ``errors`` / ``crash_rate``.
    """
    return summarize_runs(store, [run_id], k)


def summarize_runs(store: RolloutStore, run_ids: Sequence[str], k: int = 5, prices: Prices | None = None) -> RunSummary:
    """:func:`summarize_run` over runs of one model on one suite, their attempts pooled per case.

    The caller decides that the runs may be pooled (same suite content and settings: see
    :mod:`mantra_env.graders.leaderboard`). Tokens and cost count only episodes with recorded token usage (scripted
    agents record none).
    """
    rows = store.query(
        "SELECT DISTINCT model, suite, coalesce(grader_version, 1) FROM runs WHERE run_id IN (SELECT unnest(?))",
        [list(run_ids)],
    )
    if not rows:
        raise KeyError(f"no run {', '.join(map(repr, run_ids))} in {store.path}")
    if len({(model, suite) for model, suite, _ in rows}) > 1:
        raise MantraError(f"runs {', '.join(run_ids)} are of different models or suites and cannot be pooled")
    if len(rows) > 1:
        versions = ", ".join(str(version) for version in sorted(row[2] for row in rows))
        raise MantraError(
            f"runs {', '.join(run_ids)} were graded by different grader versions ({versions}) and cannot be pooled"
        )
    model, suite, grader_version = rows[0]
    counts = pooled_task_counts(store, run_ids)
    scored_tasks = [(n, passed) for n, passed in counts.values() if n > 0]
    selected = [list(run_ids)]
    (attempts, scored, errors, premature, empty, steps) = store.query(
        """SELECT count(*), count(*) FILTER (WHERE scored), count(*) FILTER (WHERE NOT scored),
                  count(*) FILTER (WHERE scored AND premature_write), count(*) FILTER (WHERE empty_trace),
                  avg(steps) FILTER (WHERE scored)
           FROM v_attempt_behaviour WHERE run_id IN (SELECT unnest(?))""",
        selected,
    )[0]
    passing_reads = store.query(
        "SELECT avg(read_calls) FROM v_attempt_behaviour WHERE run_id IN (SELECT unnest(?)) AND status = 'passed'",
        selected,
    )[0][0]
    graded_for_writes, with_unrequested = store.query(
        """SELECT count(*) FILTER (WHERE graded_for_writes),
                  count(*) FILTER (WHERE graded_for_writes AND json_array_length(unrequested_writes) > 0)
           FROM v_episodes WHERE run_id IN (SELECT unnest(?)) AND scored""",
        selected,
    )[0]
    price_in, price_out = (prices or {}).get(str(model), (math.nan, math.nan))
    tokens, cost = store.query(
        """SELECT avg(input_tokens + output_tokens), avg(input_tokens * ? + output_tokens * ?) / 1e6
           FROM v_episodes WHERE run_id IN (SELECT unnest(?)) AND scored AND input_tokens + output_tokens > 0""",
        [0.0 if math.isnan(price_in) else price_in, 0.0 if math.isnan(price_out) else price_out, list(run_ids)],
    )[0]
    return RunSummary(
        run_ids=tuple(run_ids),
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
        grader_version=int(grader_version),
        graded_for_writes=int(graded_for_writes),
        unrequested_write_rate=_ratio(with_unrequested, graded_for_writes),
        empty_trace_rate=_ratio(empty, scored),
        crash_rate=_ratio(errors, attempts),
        read_calls_per_pass=_float(passing_reads),
        mean_steps=_float(steps),
        mean_tokens=_float(tokens),
        mean_cost=math.nan if math.isnan(price_in + price_out) else _float(cost),
        task_counts=counts,
    )


@dataclass(frozen=True, slots=True)
class CategoryCount:
    model: str
    suite: str
    category: str
    count: int
    share: float


_FAILURES = """
    SELECT run_id, model, suite, category, check_text, NULL AS tool FROM v_failed_checks
    UNION ALL
    SELECT run_id, model, suite, category, NULL, tool FROM v_unrequested_writes
"""
"""Every failure: each failed check, and each unrequested write (category ``unrequested_write``, a failure of its
own, charged to that call: its tool, at its step)."""


def failure_categories(store: RolloutStore, run_ids: list[str] | None = None) -> list[CategoryCount]:
    """Failures per (model, suite, category) with their share of that model's failures on that suite: failed
    checks by their category, and each unrequested write as one ``unrequested_write``."""
    where, params = ("WHERE run_id IN (SELECT unnest(?))", [run_ids]) if run_ids else ("", [])
    rows = store.query(
        f"""SELECT model, suite, category, count(*) AS n,
                   count(*) / sum(count(*)) OVER (PARTITION BY model, suite) AS share
            FROM ({_FAILURES}) {where}
            GROUP BY model, suite, category ORDER BY model, suite, n DESC, category""",
        params,
    )
    return [CategoryCount(str(m), str(s), str(c), int(n), float(sh)) for m, s, c, n, sh in rows]


UNREADABLE_CHECK = "(unreadable check text)"


def failed_tool(check_text: str, category: str | None = None) -> str:
    """The tool a failed check is charged to, read from the parsed check: for a ``category``, the atom the check
    operators table charges (:func:`~mantra_env.checks.operators.charged_atom`: the call that was missing, or that
    of the violating step); without one, the first atom. A stored text that no longer parses is shown as such."""
    try:
        check = parse_check(check_text)
    except (MantraError, ValueError):
        return UNREADABLE_CHECK
    if category is not None and category in FailureCategory.__members__.values():
        atom = charged_atom(check, FailureCategory(category))
        if atom is not None:
            return atom.tool
    if isinstance(check, Answer):  # no trace atom: a missing fact is charged to the read it comes from
        return check.read.tool
    return atoms(check)[0].tool


def top_tools_per_category(
    store: RolloutStore, run_ids: list[str] | None = None, limit: int = 3
) -> list[tuple[str, str, str, int]]:
    """(suite, category, tool, failures): the tools behind most failures of each category (paper Tables 5-6).

    The tool of a failed check is :func:`failed_tool` for its category; OR checks (no single tool) are left out.
    An unrequested write is charged to its own call's tool.
    """
    where, params = ("AND run_id IN (SELECT unnest(?))", [run_ids]) if run_ids else ("", [])
    rows = store.query(
        f"""SELECT suite, category, check_text, tool, count(*) FROM ({_FAILURES})
            WHERE category <> 'or_all_branches_failed' {where} GROUP BY suite, category, check_text, tool""",
        params,
    )
    tally: Counter[tuple[str, str, str]] = Counter()
    for suite, category, text, tool, n in rows:
        charged = str(tool) if text is None else failed_tool(str(text), str(category))
        tally[str(suite), str(category), charged] += int(n)
    ranked = sorted(tally.items(), key=lambda item: (item[0][0], item[0][1], -item[1], item[0][2]))
    kept: Counter[tuple[str, str]] = Counter()
    found = []
    for (suite, category, tool), n in ranked:
        kept[suite, category] += 1
        if kept[suite, category] <= limit:
            found.append((suite, category, tool, n))
    return found
