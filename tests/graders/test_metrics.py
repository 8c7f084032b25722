import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mantra_env.graders.metrics import (
    bootstrap_ci,
    compare_paired,
    pass_at_1,
    pass_at_1_ci,
    pass_at_k,
    pass_at_k_ci,
    pass_hat_k,
    pass_hat_k_ci,
    task_estimate,
    task_pass_at_k,
    task_pass_hat_k,
)

# Three tasks, five attempts each, with 0, 2 and 5 passes (computed by hand).
TASKS = [(5, 0), (5, 2), (5, 5)]


def test_pass_at_1_by_hand() -> None:
    assert pass_at_1(TASKS) == pytest.approx((0 + 0.4 + 1) / 3)


def test_pass_at_k_by_hand() -> None:
    # k=2: task 1 -> 1 - C(5,2)/C(5,2) = 0; task 2 -> 1 - C(3,2)/C(5,2) = 1 - 3/10; task 3 -> 1.
    assert pass_at_k(TASKS, 2) == pytest.approx((0 + 0.7 + 1) / 3)
    # k=5 equals "any pass among all five".
    assert pass_at_k(TASKS, 5) == pytest.approx(2 / 3)


def test_pass_hat_k_by_hand() -> None:
    # k=2: task 2 -> C(2,2)/C(5,2) = 1/10.
    assert pass_hat_k(TASKS, 2) == pytest.approx((0 + 0.1 + 1) / 3)
    assert pass_hat_k(TASKS, 5) == pytest.approx(1 / 3)


def test_tasks_with_fewer_than_k_scored_attempts_are_left_out_and_counted() -> None:
    # One infrastructure error in the second task (3 of 4 attempts scored) used to make Pass@4 n/a for all.
    tasks = [(4, 4), (3, 1), (4, 2)]
    assert pass_hat_k(tasks, 4) == pytest.approx((1 + 0) / 2)
    assert pass_at_k(tasks, 4) == pytest.approx((1 + 1) / 2)
    estimate = pass_hat_k_ci(tasks, 4)
    assert (estimate.value, estimate.tasks, estimate.of, estimate.k) == (0.5, 2, 3, 4)
    assert pass_at_1_ci(tasks).tasks == 3  # every task has a scored attempt
    assert pass_at_k([(5, 1), (3, 1)], 5) == pytest.approx(task_pass_at_k(5, 1, 5))


def test_no_eligible_task_is_nan() -> None:
    assert math.isnan(pass_hat_k([(4, 4)], 5))
    assert math.isnan(task_pass_at_k(2, 1, 3))
    assert math.isnan(pass_at_1([(0, 0)]))
    assert math.isnan(pass_at_1([]))
    assert math.isnan(pass_at_k_ci([(2, 1)], 5).value)


def test_all_pass_and_all_fail_edges() -> None:
    assert pass_at_1([(5, 5)] * 4) == 1.0
    assert pass_at_k([(5, 5)] * 4, 5) == 1.0
    assert pass_hat_k([(5, 5)] * 4, 5) == 1.0
    assert pass_at_1([(5, 0)] * 4) == 0.0
    assert pass_at_k([(5, 0)] * 4, 5) == 0.0
    assert pass_hat_k([(5, 0)] * 4, 5) == 0.0


def test_invalid_counts_are_rejected_with_the_task() -> None:
    with pytest.raises(ValueError, match="task 1: need 0 <= passed <= attempts"):
        pass_at_1([(5, 1), (2, 3)])
    with pytest.raises(ValueError, match="k must be at least 1"):
        task_pass_hat_k(5, 1, 0)


@given(st.integers(1, 12).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))), st.integers(1, 12))
def test_pass_at_k_bounds_and_monotonicity(task: tuple[int, int], k: int) -> None:
    n, alpha = task
    at_k, hat_k = task_pass_at_k(n, alpha, k), task_pass_hat_k(n, alpha, k)
    if n < k:
        assert math.isnan(at_k) and math.isnan(hat_k)
        return
    eps = 1e-12
    assert 0.0 <= hat_k <= alpha / n + eps and alpha / n <= at_k + eps and at_k <= 1.0
    if k == 1:
        assert at_k == pytest.approx(alpha / n) and hat_k == pytest.approx(alpha / n)


def test_bootstrap_interval_contains_mean_and_is_seeded() -> None:
    estimate = pass_at_1_ci(TASKS)
    assert estimate.low <= estimate.value <= estimate.high
    assert pass_at_1_ci(TASKS) == estimate
    assert bootstrap_ci([0.5] * 10).low == bootstrap_ci([0.5] * 10).high == 0.5
    assert estimate.method == "bootstrap"  # per-task shares 0, 0.4, 1: not binary


def test_binary_tasks_get_a_wilson_interval_with_n_tasks() -> None:
    everything = pass_at_1_ci([(1, 1)] * 80)
    assert everything.method == "Wilson" and everything.tasks == 80
    assert (everything.value, everything.high) == (1.0, 1.0)
    assert everything.low == pytest.approx(80 / (80 + 1.959964**2), abs=1e-6)  # Wilson at 100 %: n / (n + z²)
    nothing = pass_hat_k_ci([(3, 0)] * 10, 3)
    assert (nothing.low, nothing.value) == (0.0, 0.0) and nothing.high == pytest.approx(0.2775, abs=1e-4)
    half = task_estimate([1.0, 0.0] * 10)
    assert half.method == "Wilson" and half.low == pytest.approx(0.2993, abs=1e-4)  # textbook 10 of 20


def test_bootstrap_is_deterministic_across_calls_and_orders_of_calls() -> None:
    values = [0.2, 0.5, 0.9, 1.0, 0.0, 0.7]
    first = task_estimate(values)
    task_estimate([0.3, 0.1])  # no shared random state between calls
    assert task_estimate(values) == first and first.method == "bootstrap"


def test_paired_comparison_detects_a_clear_winner() -> None:
    strong = [(5, 5)] * 12
    weak = [(5, 0)] * 12
    result = compare_paired(strong, weak)
    assert result.difference.value == 1.0
    assert result.p_value == pytest.approx(2 / 2**12)
    assert result.method == "exact sign-flip permutation test"


def test_paired_comparison_of_identical_models() -> None:
    result = compare_paired(TASKS, TASKS)
    assert result.difference.value == 0.0 and result.p_value == 1.0


def test_paired_comparison_needs_same_tasks() -> None:
    with pytest.raises(ValueError, match="same tasks"):
        compare_paired(TASKS, TASKS[:2])
