"""Success-rate statistics over tasks with repeated attempts (paper App. "Success Rate Statistics").

For a suite of N tasks, task ``i`` has ``n_i`` scored attempts of which ``alpha_i`` passed. Attempts that ended
in an infrastructure error are not scored: callers leave them out of ``n_i`` and count them separately.

* Pass@1 = mean over tasks of ``alpha_i / n_i``.
* Pass@k = mean over tasks of ``1 - C(n_i - alpha_i, k) / C(n_i, k)`` (the unbiased estimator of Chen et al.).
* Pass^k = mean over tasks of ``C(alpha_i, k) / C(n_i, k)`` (all k attempts pass).

Each metric is the mean over the tasks *eligible* for it: those with at least ``k`` scored attempts (for Pass@1:
one). A task whose attempts partly ended in infrastructure errors still counts with its scored attempts; a task
with fewer than ``k`` is left out of that metric and the estimate says how many of how many tasks it covers
(:attr:`Estimate.tasks` of :attr:`Estimate.of`). A metric is NaN only when no task is eligible. Leaving tasks out
may bias the estimate (upward when errors hit the hard tasks more), which is why the coverage is always shown.

Confidence intervals are 95 % intervals over tasks: a percentile bootstrap over tasks (tasks resampled with
replacement, attempts kept together: a cluster bootstrap), seeded so that the same rows give the same interval;
when every eligible task's value is 0 or 1 (a bootstrap then collapses to one point at 0 % or 100 %), a Wilson
score interval with n = tasks instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import product
from statistics import NormalDist

import numpy as np

TaskCounts = tuple[int, int]
"""``(n, alpha)``: scored attempts and passing attempts of one task."""

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 20260


def _validate(tasks: Sequence[TaskCounts]) -> None:
    for position, (n, alpha) in enumerate(tasks):
        if n < 0 or alpha < 0 or alpha > n:
            raise ValueError(f"task {position}: need 0 <= passed <= attempts, got attempts={n}, passed={alpha}")


def task_pass_at_k(n: int, alpha: int, k: int) -> float:
    """Unbiased probability that at least one of k attempts passes, from n attempts with alpha passes."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if n < k:
        return math.nan
    return 1.0 - math.comb(n - alpha, k) / math.comb(n, k)


def task_pass_hat_k(n: int, alpha: int, k: int) -> float:
    """Probability that all of k attempts pass, from n attempts with alpha passes."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if n < k:
        return math.nan
    return math.comb(alpha, k) / math.comb(n, k)


def eligible(tasks: Sequence[TaskCounts], k: int) -> list[TaskCounts]:
    """The tasks with at least ``k`` scored attempts: those a Pass@k or Pass^k estimate is computed over."""
    _validate(tasks)
    return [(n, alpha) for n, alpha in tasks if n >= max(k, 1)]


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else math.nan


def pass_at_1(tasks: Sequence[TaskCounts]) -> float:
    """Mean single-attempt success rate over the tasks with a scored attempt; NaN if there is none."""
    return _mean([alpha / n for n, alpha in eligible(tasks, 1)])


def pass_at_k(tasks: Sequence[TaskCounts], k: int) -> float:
    """Mean unbiased Pass@k over the tasks with at least k scored attempts; NaN if there is none."""
    return _mean([task_pass_at_k(n, alpha, k) for n, alpha in eligible(tasks, k)])


def pass_hat_k(tasks: Sequence[TaskCounts], k: int) -> float:
    """Mean Pass^k over the tasks with at least k scored attempts; NaN if there is none."""
    return _mean([task_pass_hat_k(n, alpha, k) for n, alpha in eligible(tasks, k)])


@dataclass(frozen=True, slots=True)
class Estimate:
    """A point estimate with a 95 % confidence interval (NaN bounds when undefined), how it was computed, and over
    how many of how many tasks (shown by :func:`mantra_env.graders.intervals.format_estimate`)."""

    value: float
    low: float
    high: float
    method: str = "bootstrap"
    """``bootstrap`` (percentile, over tasks) or ``Wilson`` (every task 0 or 1; n = tasks)."""
    tasks: int = 0
    """Tasks the estimate is computed over (those with at least :attr:`k` scored attempts)."""
    of: int = 0
    """Tasks there were; :attr:`tasks` < :attr:`of` when some had too few scored attempts."""
    k: int = 1
    """Scored attempts a task needs to count (k of Pass@k and Pass^k; 1 for Pass@1 and plain means)."""


def bootstrap_ci(
    per_task: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> Estimate:
    """Mean of per-task values with a percentile bootstrap interval over tasks."""
    values = np.asarray(per_task, dtype=float)
    size = int(values.size)
    if size == 0 or np.isnan(values).any():
        return Estimate(math.nan, math.nan, math.nan, tasks=0, of=size)
    point = float(values.mean())
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, size, size=(resamples, size))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    # a bound that differs from the point only by rounding would print as an interval that excludes it
    return Estimate(point, min(float(low), point), max(float(high), point), tasks=size, of=size)


def wilson_ci(successes: int, n: int, *, level: float = 0.95) -> Estimate:
    """The share ``successes / n`` with its Wilson score interval (sensible at 0 % and 100 %, unlike a bootstrap)."""
    if n <= 0 or not 0 <= successes <= n:
        return Estimate(math.nan, math.nan, math.nan, "Wilson", 0, max(n, 0))
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    share = successes / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    spread = z / (1 + z * z / n) * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
    low = 0.0 if successes == 0 else max(0.0, centre - spread)  # exact at the edges, not 1e-17 off
    high = 1.0 if successes == n else min(1.0, centre + spread)
    return Estimate(share, low, high, "Wilson", n, n)


def task_estimate(
    per_task: Sequence[float], *, of: int | None = None, k: int = 1, seed: int = DEFAULT_SEED
) -> Estimate:
    """Mean of per-task values with its interval: Wilson (n = tasks) when every value is 0 or 1, else the task
    bootstrap; ``of``: the tasks there were, eligible or not (default: ``len(per_task)``)."""
    binary = bool(per_task) and all(value in (0.0, 1.0) for value in per_task)
    found = wilson_ci(int(sum(per_task)), len(per_task)) if binary else bootstrap_ci(per_task, seed=seed)
    return replace(found, tasks=len(per_task), of=len(per_task) if of is None else of, k=k)


def _estimate(tasks: Sequence[TaskCounts], k: int, metric: Callable[[int, int], float]) -> Estimate:
    chosen = eligible(tasks, k)
    return task_estimate([metric(n, alpha) for n, alpha in chosen], of=len(tasks), k=k)


def pass_at_1_ci(tasks: Sequence[TaskCounts]) -> Estimate:
    """Pass@1 over the tasks with a scored attempt, with its interval and coverage."""
    return _estimate(tasks, 1, lambda n, a: a / n)


def pass_at_k_ci(tasks: Sequence[TaskCounts], k: int) -> Estimate:
    """Pass@k over the tasks with at least k scored attempts, with its interval and coverage."""
    return _estimate(tasks, k, lambda n, a: task_pass_at_k(n, a, k))


def pass_hat_k_ci(tasks: Sequence[TaskCounts], k: int) -> Estimate:
    """Pass^k over the tasks with at least k scored attempts, with its interval and coverage."""
    return _estimate(tasks, k, lambda n, a: task_pass_hat_k(n, a, k))


def macro_estimate(per_group: Sequence[Sequence[float]], *, seed: int = DEFAULT_SEED) -> Estimate:
    """The mean over groups (suites) of each group's mean over its tasks, with a stratified task bootstrap (tasks
    resampled within each group); NaN when a group has no task. Where the macro mean is the pooled mean of 0/1
    tasks (one group, or every task 0 or every task 1) the interval is Wilson's with n = tasks, as for a suite."""
    groups = [np.asarray(values, dtype=float) for values in per_group]
    tasks = sum(int(group.size) for group in groups)
    if not groups or any(group.size == 0 for group in groups):
        return Estimate(math.nan, math.nan, math.nan, tasks=tasks, of=tasks)
    pooled = np.concatenate(groups)
    if np.isin(pooled, (0.0, 1.0)).all() and (len(groups) == 1 or pooled.min() == pooled.max()):
        return wilson_ci(int(pooled.sum()), tasks)
    point = float(np.mean([group.mean() for group in groups]))
    rng = np.random.default_rng(seed)
    means = np.mean([g[rng.integers(0, g.size, size=(DEFAULT_RESAMPLES, g.size))].mean(axis=1) for g in groups], axis=0)
    low, high = np.percentile(means, [2.5, 97.5])
    return Estimate(point, min(float(low), point), max(float(high), point), tasks=tasks, of=tasks)


@dataclass(frozen=True, slots=True)
class PairedComparison:
    """Model A minus model B on the same tasks: Pass@1 difference, its interval and a two-sided p-value."""

    difference: Estimate
    p_value: float
    tasks: int
    method: str


def compare_paired(
    a: Sequence[TaskCounts],
    b: Sequence[TaskCounts],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> PairedComparison:
    """Paired comparison of two models' per-task Pass@1 on the same tasks (same order).

    The interval is a paired bootstrap over tasks; the p-value is a two-sided sign-flip permutation test on the
    per-task differences (exact enumeration up to 16 non-zero differences, else ``resamples`` seeded flips).
    Tasks without a scored attempt in either model are dropped.
    """
    if len(a) != len(b):
        raise ValueError(f"paired comparison needs the same tasks: got {len(a)} and {len(b)} tasks")
    _validate(a)
    _validate(b)
    diffs = [aa / na - ab / nb for (na, aa), (nb, ab) in zip(a, b, strict=True) if na and nb]
    estimate = bootstrap_ci(diffs, resamples=resamples, seed=seed)
    nonzero = np.asarray([d for d in diffs if d != 0.0])
    if nonzero.size == 0:
        return PairedComparison(estimate, 1.0 if diffs else math.nan, len(diffs), "no differing tasks")
    observed = abs(nonzero.sum())
    if nonzero.size <= 16:
        signs = np.asarray(list(product((1.0, -1.0), repeat=nonzero.size)))
        method = "exact sign-flip permutation test"
    else:
        signs = np.random.default_rng(seed).choice((1.0, -1.0), size=(resamples, nonzero.size))
        method = f"sign-flip permutation test ({resamples} resamples)"
    extreme = np.abs(signs @ nonzero) >= observed - 1e-12
    return PairedComparison(estimate, float(extreme.mean()), len(diffs), method)
