"""Success-rate statistics over tasks with repeated attempts (paper App. "Success Rate Statistics").

For a suite of N tasks, task ``i`` has ``n_i`` scored attempts of which ``alpha_i`` passed. Attempts that ended
in an infrastructure error are not scored: callers leave them out of ``n_i`` and count them separately.

* Pass@1 = mean over tasks of ``alpha_i / n_i``.
* Pass@k = mean over tasks of ``1 - C(n_i - alpha_i, k) / C(n_i, k)`` (the unbiased estimator of Chen et al.).
* Pass^k = mean over tasks of ``C(alpha_i, k) / C(n_i, k)`` (all k attempts pass).

A metric is NaN when any task has fewer than ``k`` scored attempts (for Pass@1: no scored attempt), or when
there are no tasks: a number computed from fewer attempts than it claims would be silently wrong.

Confidence intervals are 95 % percentile bootstrap intervals over tasks (tasks resampled with replacement,
attempts kept together), seeded so that the same rows give the same interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import product

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


def _mean(values: Sequence[float]) -> float:
    if not values or any(math.isnan(v) for v in values):
        return math.nan
    return math.fsum(values) / len(values)


def pass_at_1(tasks: Sequence[TaskCounts]) -> float:
    """Mean single-attempt success rate; NaN if there are no tasks or a task has no scored attempt."""
    _validate(tasks)
    return _mean([alpha / n if n else math.nan for n, alpha in tasks])


def pass_at_k(tasks: Sequence[TaskCounts], k: int) -> float:
    """Mean unbiased Pass@k; NaN if any task has fewer than k scored attempts."""
    _validate(tasks)
    return _mean([task_pass_at_k(n, alpha, k) for n, alpha in tasks])


def pass_hat_k(tasks: Sequence[TaskCounts], k: int) -> float:
    """Mean Pass^k; NaN if any task has fewer than k scored attempts."""
    _validate(tasks)
    return _mean([task_pass_hat_k(n, alpha, k) for n, alpha in tasks])


@dataclass(frozen=True, slots=True)
class Estimate:
    """A point estimate with a 95 % confidence interval (NaN bounds when undefined)."""

    value: float
    low: float
    high: float

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2


def bootstrap_ci(
    per_task: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> Estimate:
    """Mean of per-task values with a percentile bootstrap interval over tasks."""
    values = np.asarray(per_task, dtype=float)
    if values.size == 0 or np.isnan(values).any():
        return Estimate(math.nan, math.nan, math.nan)
    point = float(values.mean())
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, values.size, size=(resamples, values.size))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Estimate(point, float(low), float(high))


def _per_task(tasks: Sequence[TaskCounts], metric: Callable[[int, int], float]) -> list[float]:
    _validate(tasks)
    return [metric(n, alpha) for n, alpha in tasks]


def pass_at_1_ci(tasks: Sequence[TaskCounts], **kwargs: int) -> Estimate:
    return bootstrap_ci(_per_task(tasks, lambda n, a: a / n if n else math.nan), **kwargs)


def pass_at_k_ci(tasks: Sequence[TaskCounts], k: int, **kwargs: int) -> Estimate:
    return bootstrap_ci(_per_task(tasks, lambda n, a: task_pass_at_k(n, a, k)), **kwargs)


def pass_hat_k_ci(tasks: Sequence[TaskCounts], k: int, **kwargs: int) -> Estimate:
    return bootstrap_ci(_per_task(tasks, lambda n, a: task_pass_hat_k(n, a, k)), **kwargs)


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
