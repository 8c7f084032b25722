"""The leaderboard: one row per model and suite, runs pooled only when they ran the same suite content with the
same settings, with its columns defined once (:func:`leaderboard_columns`), the paired test between the top two
different models of each suite, Pass@k / Pass^k curves over k and a per-domain view."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from graders.analysis import Prices, RunSummary, summarize_runs
from graders.metrics import Estimate, PairedComparison, compare_paired, pass_at_1_ci, pass_at_k, pass_hat_k
from graders.table import Column, Table, ci, make_table, number, percent
from mantra_env.grading import GRADER_VERSION
from mantra_env.store import RolloutStore


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    """A model on a suite: the summary of its pooled runs and how much of the suite they ran."""

    summary: RunSummary
    suite_cases: int | None
    """Cases in the suite (its manifest's ``case_count``); None when the suite cannot be found."""

    @property
    def domain(self) -> str:
        return self.summary.suite.partition("/")[0]

    @property
    def partial(self) -> bool:
        return self.suite_cases is not None and self.summary.tasks < self.suite_cases

    @property
    def coverage(self) -> str:
        """``cases run / cases in the suite``, flagged when partial."""
        total = "?" if self.suite_cases is None else str(self.suite_cases)
        return f"{self.summary.tasks} / {total}" + (" (partial)" if self.partial else "")

    @property
    def label(self) -> str:
        return f"{self.summary.model} @ {self.summary.suite}"

    @property
    def grader(self) -> str:
        """The grader version, and whether the row's episodes were graded for unrequested writes."""
        version = self.summary.grader_version
        if version < 2:
            return f"{version} (checks only: not graded for writes)"
        return f"{version}" if self.summary.graded_for_writes else f"{version} (no oracle plans: checks only)"

    @property
    def unrequested_writes(self) -> str:
        """Share (%) of the episodes graded for writes that made an unrequested write, or why there is none."""
        if not self.summary.scored:
            return "n/a"
        return (
            "not graded for writes"
            if not self.summary.graded_for_writes
            else percent(self.summary.unrequested_write_rate)
        )


def pool_key(
    run_id: str, model: str, suite: str, suite_hash: str | None, settings: str | None, grader_version: int
) -> tuple[str, ...]:
    """Runs with equal keys are pooled: same model, suite, suite content hash, settings and grader version (a run
    graded on the checks alone is never pooled with one graded for unrequested writes too). A run stored before
    runs recorded their hash and settings (schema 3) cannot be shown to agree with another and stays alone."""
    if suite_hash is None or settings is None:
        return (model, suite, "run", run_id)
    canonical = json.dumps(json.loads(settings), sort_keys=True)
    return (model, suite, suite_hash, canonical, f"grader {grader_version}")


def run_groups(store: RolloutStore, runs: Sequence[str]) -> list[list[str]]:
    """The runs grouped by :func:`pool_key`, in the order of each group's first run."""
    rows = store.query(
        "SELECT run_id, model, suite, suite_hash, settings, coalesce(grader_version, 1) FROM runs "
        "WHERE run_id IN (SELECT unnest(?))",
        [list(runs)],
    )
    keys = {str(r[0]): pool_key(str(r[0]), str(r[1]), str(r[2]), r[3], r[4], int(r[5])) for r in rows}
    groups: dict[tuple[str, ...], list[str]] = {}
    for run in runs:
        groups.setdefault(keys[run], []).append(run)
    return list(groups.values())


def _rank_value(estimate: Estimate) -> float:
    return -1.0 if math.isnan(estimate.value) else estimate.value


def ranked(rows: Sequence[LeaderboardRow]) -> list[LeaderboardRow]:
    """By suite, then Pass@1 (highest first; n/a last), then model and run ids (so ties have a fixed order)."""
    return sorted(
        rows, key=lambda r: (r.summary.suite, -_rank_value(r.summary.pass_at_1), r.summary.model, r.summary.run_ids)
    )


def leaderboard(
    store: RolloutStore,
    runs: Sequence[str],
    k: int,
    suite_cases: Mapping[str, int | None],
    prices: Prices | None = None,
) -> list[LeaderboardRow]:
    """One row per pool of runs (:func:`run_groups`); ``suite_cases``: cases per suite, by run id."""
    return ranked(
        [
            LeaderboardRow(summarize_runs(store, group, k, prices), suite_cases.get(group[0]))
            for group in run_groups(store, runs)
        ]
    )


def leaderboard_columns(k: int) -> list[Column[LeaderboardRow]]:
    """The leaderboard's columns; at k = 1 Pass@k and Pass^k are Pass@1 and are not repeated."""
    at_k: list[Column[LeaderboardRow]] = [
        Column(f"Pass@{k} (%)", lambda r: r.summary.pass_at_k, ci),
        Column(f"Pass^{k} (%)", lambda r: r.summary.pass_hat_k, ci),
    ]
    return [
        Column("model", lambda r: r.summary.model),
        Column("suite", lambda r: r.summary.suite),
        Column("runs", lambda r: r.summary.run_id),
        Column("cases run / in suite", lambda r: r.coverage),
        Column("attempts", lambda r: r.summary.attempts),
        Column("errors", lambda r: r.summary.errors),
        Column("Pass@1 (%)", lambda r: r.summary.pass_at_1, ci),
        *(at_k if k > 1 else []),
        Column("grader", lambda r: r.grader),
        Column("unrequested write (%)", lambda r: r.unrequested_writes),
        Column("premature write (%)", lambda r: r.summary.premature_write_rate, percent),
        Column("empty trace (%)", lambda r: r.summary.empty_trace_rate, percent),
        Column("crash (%)", lambda r: r.summary.crash_rate, percent),
        Column("reads / pass", lambda r: r.summary.read_calls_per_pass, number(2)),
        Column("steps", lambda r: r.summary.mean_steps, number(1)),
        Column("tokens / episode", lambda r: r.summary.mean_tokens, number(0)),
        Column("cost / episode ($)", lambda r: r.summary.mean_cost, number(4)),
    ]


def leaderboard_table(rows: Sequence[LeaderboardRow], k: int) -> Table:
    return make_table("Leaderboard", leaderboard_columns(k), rows)


@dataclass(frozen=True, slots=True)
class Comparison:
    """The paired test of a suite's top row against the best row of another model."""

    suite: str
    first: LeaderboardRow
    second: LeaderboardRow
    result: PairedComparison
    tied_with_second: tuple[str, ...] = ()
    """Other models whose best row has the second's Pass@1: second place is shared (the order is alphabetical)."""

    @property
    def tie(self) -> bool:
        return self.first.summary.pass_at_1.value == self.second.summary.pass_at_1.value

    @property
    def verdict(self) -> str:
        verdict = "tie: equal Pass@1 (the order shown is alphabetical)" if self.tie else self._significance()
        return verdict + (f"; tied with second: {', '.join(self.tied_with_second)}" if self.tied_with_second else "")

    def _significance(self) -> str:
        if math.isnan(self.result.p_value):
            return "no shared scored task"
        if self.result.p_value < 0.05:
            return "first is ahead (p < 0.05)"
        return "not distinguishable (p ≥ 0.05)"


def comparisons(rows: Sequence[LeaderboardRow]) -> list[Comparison]:
    """Per suite: its first row against the highest row of a *different* model graded by the same grader version
    (none when there is no such row), paired over the cases both ran."""
    found = []
    by_suite: dict[str, list[LeaderboardRow]] = {}
    for row in ranked(rows):
        by_suite.setdefault(row.summary.suite, []).append(row)
    for suite, group in by_suite.items():
        first = group[0]
        group = [row for row in group if row.summary.grader_version == first.summary.grader_version]
        second = next((row for row in group if row.summary.model != first.summary.model), None)
        if second is None:
            continue
        a, b = first.summary.task_counts, second.summary.task_counts
        shared = sorted(set(a) & set(b))
        result = compare_paired([a[c] for c in shared], [b[c] for c in shared])
        value = second.summary.pass_at_1.value
        tied = {row.summary.model for row in group if row.summary.pass_at_1.value == value} - {
            first.summary.model,
            second.summary.model,
        }
        found.append(Comparison(suite, first, second, result, tuple(sorted(tied))))
    return found


COMPARISON_COLUMNS: list[Column[Comparison]] = [
    Column("suite", lambda c: c.suite),
    Column("first", lambda c: c.first.summary.model),
    Column("second", lambda c: c.second.summary.model),
    Column(
        "Pass@1 difference (points)",
        lambda c: c.result.difference.value,
        lambda v: "n/a" if math.isnan(v) else f"{100 * v:+.1f}",
    ),
    Column(
        "95% interval",
        lambda c: c.result.difference,
        lambda d: "n/a" if math.isnan(d.value) else f"[{100 * d.low:+.1f}, {100 * d.high:+.1f}]",
    ),
    Column("p-value", lambda c: c.result.p_value, lambda p: "n/a" if math.isnan(p) else f"{p:.3g}"),
    Column("tasks", lambda c: c.result.tasks),
    Column("test", lambda c: c.result.method),
    Column("verdict", lambda c: c.verdict),
]

COMPARISON_TITLE = "Is first place ahead? (paired test of the top two different models per suite)"


def comparison_table(found: Sequence[Comparison]) -> Table:
    return make_table(COMPARISON_TITLE, COMPARISON_COLUMNS, found)


def curves(rows: Sequence[LeaderboardRow]) -> dict[str, dict[str, list[float]]]:
    """``{"Pass@k": {label: [k = 1, 2, ...]}, "Pass^k": {...}}`` up to the most scored attempts of a case."""
    found: dict[str, dict[str, list[float]]] = {"Pass@k": {}, "Pass^k": {}}
    for row in rows:
        tasks = [t for t in row.summary.task_counts.values() if t[0] > 0]
        most = max((n for n, _ in tasks), default=0)
        label = row.label if sum(r.label == row.label for r in rows) == 1 else f"{row.label} ({row.summary.run_id})"
        found["Pass@k"][label] = [pass_at_k(tasks, j) for j in range(1, most + 1)]
        found["Pass^k"][label] = [pass_hat_k(tasks, j) for j in range(1, most + 1)]
    return found


def domain_table(rows: Sequence[LeaderboardRow]) -> Table:
    """Pass@1 (%) per model and domain over the cases of all the domain's rows (a case counted once per row); a
    model's rows graded by an older grader version are a line of their own (``MODEL (grader 1)``), never pooled."""
    domains = sorted({row.domain for row in rows})

    def model(row: LeaderboardRow) -> str:
        version = row.summary.grader_version
        return row.summary.model if version == GRADER_VERSION else f"{row.summary.model} (grader {version})"

    models = sorted({model(row) for row in rows})
    per_task: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for row in rows:
        per_task.setdefault((model(row), row.domain), []).extend(
            t for t in row.summary.task_counts.values() if t[0] > 0
        )

    def cell(model: str, *, domain: str) -> str:
        tasks = per_task.get((model, domain))
        return "" if tasks is None else f"{ci(pass_at_1_ci(tasks))} ({len(tasks)} cases)"

    columns: list[Column[str]] = [Column("model", lambda m: m)]
    columns += [Column(domain, partial(cell, domain=domain)) for domain in domains]
    return make_table("Pass@1 (%) by domain", columns, models)
