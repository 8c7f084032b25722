"""The leaderboard: one row per model and suite, runs pooled only when they ran the same suite content with the
same settings, with its columns defined once (:func:`leaderboard_columns`, shown as a scores table and a behaviour
table so that each fits a 1280 px page), one overall row per model across the suites (:func:`overall_rows`), the
paired test between the top two different models of each suite, Pass@k / Pass^k curves over k and per-domain
views of Pass@1 and Pass^k."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial

from mantra_env.graders.analysis import Prices, RunSummary, summarize_runs
from mantra_env.graders.intervals import format_estimate
from mantra_env.graders.metrics import (
    Estimate,
    PairedComparison,
    TaskCounts,
    compare_paired,
    macro_estimate,
    pass_at_1_ci,
    pass_at_k,
    pass_hat_k,
    pass_hat_k_ci,
    task_pass_at_k,
    task_pass_hat_k,
)
from mantra_env.graders.table import Column, Table, make_table, number, percent
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


def score_columns(k: int) -> list[Column[LeaderboardRow]]:
    """The leaderboard's score columns; at k = 1 Pass@k and Pass^k are Pass@1 and are not repeated."""
    at_k: list[Column[LeaderboardRow]] = [
        Column(f"Pass@{k} (%)", lambda r: r.summary.pass_at_k, format_estimate),
        Column(f"Pass^{k} (%)", lambda r: r.summary.pass_hat_k, format_estimate),
    ]
    return [
        Column("model", lambda r: r.summary.model),
        Column("suite", lambda r: r.summary.suite),
        Column("cases run / in suite", lambda r: r.coverage),
        Column("attempts", lambda r: r.summary.attempts),
        Column("errors", lambda r: r.summary.errors),
        Column("Pass@1 (%)", lambda r: r.summary.pass_at_1, format_estimate),
        *(at_k if k > 1 else []),
    ]


def behaviour_columns() -> list[Column[LeaderboardRow]]:
    """The leaderboard's behaviour columns (the same rows as :func:`score_columns`, in the same order)."""
    return [
        Column("model", lambda r: r.summary.model),
        Column("suite", lambda r: r.summary.suite),
        Column("runs", lambda r: r.summary.run_id),
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


def leaderboard_columns(k: int) -> list[Column[LeaderboardRow]]:
    """Every column of a leaderboard row (scores, then behaviour, each once)."""
    scores = score_columns(k)
    return scores + [column for column in behaviour_columns() if column.label not in {c.label for c in scores}]


LEADERBOARD_TITLE = "Leaderboard"
BEHAVIOUR_TITLE = "Leaderboard: behaviour, errors and cost"


def leaderboard_table(rows: Sequence[LeaderboardRow], k: int) -> Table:
    """The scores of each model and suite (a table narrow enough for a 1280 px page)."""
    return make_table(LEADERBOARD_TITLE, score_columns(k), rows)


def behaviour_table(rows: Sequence[LeaderboardRow]) -> Table:
    """The behaviour, grading and cost of the same rows as :func:`leaderboard_table`."""
    return make_table(BEHAVIOUR_TITLE, behaviour_columns(), rows)


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
        k = min(first.summary.k, second.summary.k)  # only tasks scored at least k times for both models
        shared = sorted(c for c in set(a) & set(b) if a[c][0] >= k and b[c][0] >= k)
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
        "Pass@1 difference (points) [95% interval]",
        lambda c: c.result.difference,
        lambda d: format_estimate(d, signed=True),
    ),
    Column("p-value", lambda c: c.result.p_value, lambda p: "n/a" if math.isnan(p) else f"{p:.3g}"),
    Column("tasks", lambda c: c.result.tasks),
    Column("test", lambda c: c.result.method),
    Column("verdict", lambda c: c.verdict),
]

COMPARISON_TITLE = "Is first place ahead? (paired test of the top two different models per suite)"


def comparison_table(found: Sequence[Comparison]) -> Table:
    return make_table(COMPARISON_TITLE, COMPARISON_COLUMNS, found)


def curve_label(row: LeaderboardRow, rows: Sequence[LeaderboardRow]) -> str:
    """The row's series name in the curves: model @ suite, with its runs when another row has the same name."""
    return row.label if sum(r.label == row.label for r in rows) == 1 else f"{row.label} ({row.summary.run_id})"


def curves(rows: Sequence[LeaderboardRow]) -> dict[str, dict[str, list[float]]]:
    """``{"Pass@k": {label: [k = 1, 2, ...]}, "Pass^k": {...}}`` up to the most scored attempts of a case; the
    value at k is over the tasks scored at least k times (see :mod:`mantra_env.graders.metrics`)."""
    found: dict[str, dict[str, list[float]]] = {"Pass@k": {}, "Pass^k": {}}
    for row in rows:
        tasks = [t for t in row.summary.task_counts.values() if t[0] > 0]
        most = max((n for n, _ in tasks), default=0)
        label = curve_label(row, rows)
        found["Pass@k"][label] = [pass_at_k(tasks, j) for j in range(1, most + 1)]
        found["Pass^k"][label] = [pass_hat_k(tasks, j) for j in range(1, most + 1)]
    return found


def curve_domains(rows: Sequence[LeaderboardRow]) -> dict[str, str]:
    """Each curve's domain (the facet of the Pass@k figure it is drawn in)."""
    return {curve_label(row, rows): row.domain for row in rows}


def _model(row: LeaderboardRow) -> str:
    """The model's name, with its grader version when older: rows of different graders are never combined."""
    version = row.summary.grader_version
    return row.summary.model if version == GRADER_VERSION else f"{row.summary.model} (grader {version})"


def domain_table(rows: Sequence[LeaderboardRow], k: int = 1) -> Table:
    """Pass@1 (k = 1) or Pass^k (%) per model and domain over the cases of all the domain's rows (a case counted
    once per row); a model's rows graded by an older grader version are a line of their own (``MODEL (grader
    1)``), never pooled."""
    domains = sorted({row.domain for row in rows})
    models = sorted({_model(row) for row in rows})
    per_task: dict[tuple[str, str], list[TaskCounts]] = {}
    for row in rows:
        per_task.setdefault((_model(row), row.domain), []).extend(row.summary.task_counts.values())

    def cell(model: str, *, domain: str) -> str:
        tasks = per_task.get((model, domain))
        if tasks is None:
            return ""
        estimate = pass_at_1_ci(tasks) if k == 1 else pass_hat_k_ci(tasks, k)
        shown = format_estimate(estimate)
        return shown if estimate.tasks < estimate.of else f"{shown} ({len(tasks)} cases)"

    columns: list[Column[str]] = [Column("model", lambda m: m)]
    columns += [Column(domain, partial(cell, domain=domain)) for domain in domains]
    return make_table(f"{'Pass@1' if k == 1 else f'Pass^{k}'} (%) by domain", columns, models)


@dataclass(frozen=True, slots=True)
class OverallRow:
    """A model across suites: the macro mean (each suite weighs the same) of its per-suite scores over the tasks
    that every model which ran the suite scored at least k times; n/a unless it ran every compared suite."""

    model: str
    suites: tuple[str, ...]
    missing: tuple[str, ...]
    pass_at_1: Estimate
    pass_at_k: Estimate
    pass_hat_k: Estimate


def _chosen_rows(rows: Sequence[LeaderboardRow]) -> dict[tuple[str, str], LeaderboardRow]:
    """Per (model, suite), the row with the most scored episodes (rows a pool key kept apart are not mixed)."""
    chosen: dict[tuple[str, str], LeaderboardRow] = {}
    for row in rows:
        key = (_model(row), row.summary.suite)
        if key not in chosen or row.summary.scored > chosen[key].summary.scored:
            chosen[key] = row
    return chosen


def overall_rows(rows: Sequence[LeaderboardRow], k: int) -> list[OverallRow]:
    """One row per model over every suite of ``rows``: only tasks scored at least ``k`` times by every model that
    ran the suite count, so the models are compared on the same tasks (the coverage says how many)."""
    chosen = _chosen_rows(rows)
    suites = sorted({suite for _, suite in chosen})
    models = sorted({model for model, _ in chosen})
    common: dict[str, list[str]] = {}
    for suite in suites:
        counts = [row.summary.task_counts for (_, s), row in chosen.items() if s == suite]
        every = set.intersection(*(set(c) for c in counts))
        common[suite] = sorted(case for case in every if all(c[case][0] >= k for c in counts))
    metrics: dict[str, Callable[[int, int], float]] = {
        "pass_at_1": lambda n, a: a / n,
        "pass_at_k": lambda n, a: task_pass_at_k(n, a, k),
        "pass_hat_k": lambda n, a: task_pass_hat_k(n, a, k),
    }
    found = []
    for model in models:
        ran = tuple(suite for suite in suites if (model, suite) in chosen)
        missing = tuple(suite for suite in suites if suite not in ran)
        of = sum(len(chosen[model, suite].summary.task_counts) for suite in ran)
        estimates: dict[str, Estimate] = {}
        for name, metric in metrics.items():
            per_suite = [[metric(*chosen[model, s].summary.task_counts[case]) for case in common[s]] for s in ran]
            tasks = sum(len(values) for values in per_suite)
            if missing:  # n/a, and the suites-not-run column says why
                estimates[name] = Estimate(math.nan, math.nan, math.nan)
                continue
            estimates[name] = replace(macro_estimate(per_suite), tasks=tasks, of=of, k=1 if name == "pass_at_1" else k)
        found.append(OverallRow(model, ran, missing, **estimates))
    return found


def _missing(row: OverallRow) -> str:
    return "none" if not row.missing else ", ".join(row.missing)


def overall_columns(k: int) -> list[Column[OverallRow]]:
    at_k: list[Column[OverallRow]] = [
        Column(f"Pass@{k} (%)", lambda r: r.pass_at_k, format_estimate),
        Column(f"Pass^{k} (%)", lambda r: r.pass_hat_k, format_estimate),
    ]
    return [
        Column("model", lambda r: r.model),
        Column("suites run", lambda r: ", ".join(r.suites)),
        Column("suites not run (n/a)", _missing),
        Column("Pass@1 (%)", lambda r: r.pass_at_1, format_estimate),
        *(at_k if k > 1 else []),
    ]


OVERALL_TITLE = "Overall per model (macro mean over the suites; tasks every model scored at least k times)"


def overall_table(found: Sequence[OverallRow], k: int) -> Table:
    return make_table(OVERALL_TITLE, overall_columns(k), found)
