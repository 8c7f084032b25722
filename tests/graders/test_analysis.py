"""Analysis over stored rows, against hand-computed values."""

import math

import pytest

from mantra_env.checks import parse_check
from mantra_env.graders import grade
from mantra_env.graders.analysis import failure_categories, run_k, summarize_run, top_tools_per_category
from mantra_env.graders.intervals import format_estimate
from mantra_env.graders.metrics import pass_at_k, pass_hat_k
from mantra_env.store import EpisodeRecord, RolloutStore, RunRecord, Usage
from mantra_env.trace import ToolCall, Trace
from mantra_env.unrequested import UnrequestedWrite
from mantra_env.verdict import Verdict

CHECKS = [
    parse_check("CALL check_inventory() PRECEDES CALL assign_picker()"),
    parse_check("NO-CALL create_po()"),
]
KINDS = {"check_inventory": "read", "assign_picker": "write", "create_po": "write"}
GOOD = ["check_inventory", "assign_picker"]
WRITE_FIRST = ["assign_picker", "check_inventory"]  # ordering violation, premature write
FORBIDDEN = ["check_inventory", "create_po"]  # forbidden call + missing anchor


def episode(case: str, attempt: int, tools: list[str] | None, run: str = "r1") -> EpisodeRecord:
    if tools is None:
        return EpisodeRecord(run_id=run, case_id=case, attempt=attempt, status="error", error_kind="timeout")
    trace = Trace(calls=tuple(ToolCall(step=i, tool=t, kind=KINDS[t]) for i, t in enumerate(tools)))  # type: ignore[arg-type]
    verdict = grade(trace, CHECKS)
    return EpisodeRecord(run_id=run, case_id=case, attempt=attempt, status="passed" if verdict.passed else "failed",
                         verdict=verdict, trace=trace, usage=Usage(input_tokens=100, output_tokens=10))  # fmt: skip


@pytest.fixture
def store() -> RolloutStore:
    store = RolloutStore(":memory:")
    store.start_run(RunRecord(run_id="r1", suite="ops", model="m", agent="a"))
    # case A: 2/2 pass; case B: 1 pass, 1 premature write, 1 infrastructure error; case C: forbidden, empty
    for record in [
        episode("A", 0, GOOD), episode("A", 1, GOOD),
        episode("B", 0, GOOD), episode("B", 1, WRITE_FIRST), episode("B", 2, None),
        episode("C", 0, FORBIDDEN), episode("C", 1, []),
    ]:  # fmt: skip
        store.record_episode(record)
    return store


def test_summary_matches_hand_computation(store: RolloutStore) -> None:
    summary = summarize_run(store, "r1", k=2)
    assert (summary.tasks, summary.attempts, summary.scored, summary.errors) == (3, 7, 6, 1)
    assert summary.pass_at_1.value == pytest.approx((1 + 0.5 + 0) / 3)
    assert summary.pass_at_k.value == pytest.approx(pass_at_k([(2, 2), (2, 1), (2, 0)], 2))
    assert summary.pass_hat_k.value == pytest.approx(pass_hat_k([(2, 2), (2, 1), (2, 0)], 2))
    assert summary.premature_write_rate == pytest.approx(1 / 6)
    assert summary.empty_trace_rate == pytest.approx(1 / 6)
    assert summary.crash_rate == pytest.approx(1 / 7)
    assert summary.read_calls_per_pass == 1.0
    assert summary.mean_steps == pytest.approx((2 + 2 + 2 + 2 + 2 + 0) / 6)


def test_pass_at_k_is_nan_only_when_no_task_has_k_scored_attempts(store: RolloutStore) -> None:
    summary = summarize_run(store, "r1", k=3)  # B has 3 attempts but only 2 scored
    assert math.isnan(summary.pass_at_k.value) and math.isnan(summary.pass_hat_k.value)
    assert (summary.pass_hat_k.tasks, summary.pass_hat_k.of) == (0, 3)
    assert not math.isnan(summary.pass_at_1.value)


def test_a_task_with_errored_attempts_still_counts_and_the_others_get_pass_hat_k() -> None:
    """Issue 34, point 1: one infrastructure error in one task made Pass@k and Pass^k n/a for the whole run."""
    store = RolloutStore(":memory:")
    store.start_run(RunRecord(run_id="r1", suite="ops", model="m", agent="a", settings={"attempts": 3}))
    for record in [
        episode("A", 0, GOOD), episode("A", 1, GOOD), episode("A", 2, GOOD),
        episode("B", 0, GOOD), episode("B", 1, None), episode("B", 2, GOOD),  # one error: 2 of 3 scored
        episode("C", 0, GOOD), episode("C", 1, WRITE_FIRST), episode("C", 2, GOOD),
    ]:  # fmt: skip
        store.record_episode(record)
    k = run_k(store, ["r1"])
    summary = summarize_run(store, "r1", k)
    assert (k, summary.k, summary.errors, summary.scored) == (3, 3, 1, 8)
    assert summary.pass_hat_k.value == pytest.approx((1 + 0) / 2)  # A and C, each with 3 scored attempts
    assert summary.pass_at_k.value == 1.0
    assert (summary.pass_hat_k.tasks, summary.pass_hat_k.of) == (2, 3)
    assert summary.pass_at_1.value == pytest.approx((1 + 1 + 2 / 3) / 3)  # B counts with its 2 scored attempts
    assert format_estimate(summary.pass_hat_k).endswith(", 2 of 3 tasks")


def test_k_is_the_runs_attempts() -> None:
    store = RolloutStore(":memory:")
    store.start_run(RunRecord(run_id="five", suite="ops", model="m", agent="a", settings={"attempts": 5}))
    store.start_run(RunRecord(run_id="three", suite="ops", model="n", agent="a", settings={"attempts": 3}))
    store.start_run(RunRecord(run_id="old", suite="ops", model="o", agent="a"))  # no settings: its most attempts
    for attempt in range(2):
        store.record_episode(episode("A", attempt, GOOD, run="old"))
    store.record_episode(episode("A", 2, None, run="old"))  # an errored attempt was an attempt too
    assert run_k(store, ["five"]) == 5
    assert run_k(store, ["five", "three"]) == 3  # the fewest, so that every run can reach k
    assert run_k(store, ["old"]) == 3


def test_failure_categories_by_hand(store: RolloutStore) -> None:
    counts = {(c.category, c.count) for c in failure_categories(store)}
    # WRITE_FIRST: ordering; FORBIDDEN: missing anchor (assign never called) + forbidden call;
    # empty trace: missing required call.
    assert counts == {
        ("ordering_violation", 1), ("missing_anchor", 1), ("forbidden_call", 1), ("missing_required_call", 1)
    }  # fmt: skip
    assert sum(c.share for c in failure_categories(store)) == pytest.approx(1.0)


def test_top_tools_per_category(store: RolloutStore) -> None:
    tools = top_tools_per_category(store)
    assert ("ops", "forbidden_call", "create_po", 1) in tools
    assert ("ops", "missing_required_call", "check_inventory", 1) in tools


def test_unknown_run(store: RolloutStore) -> None:
    with pytest.raises(KeyError, match="no run 'nope'"):
        summarize_run(store, "nope")


def test_an_unrequested_write_is_a_failure_category_of_its_own_charged_to_its_call(store: RolloutStore) -> None:
    """Issue 31: the checks pass, the write nobody asked for fails the episode and is counted on its own."""
    trace = Trace(calls=(*episode("D", 0, GOOD).trace.calls, ToolCall(step=2, tool="refund", kind="write")))
    write = UnrequestedWrite(step=2, tool="refund", args={"order_id": "O1"})
    verdict = Verdict.combined(grade(trace, CHECKS).checks, (write,))
    assert verdict.checks_passed and not verdict.passed
    store.record_episode(EpisodeRecord(run_id="r1", case_id="D", attempt=0, status="failed", verdict=verdict,
                                       trace=trace))  # fmt: skip
    counts = {(c.category, c.count) for c in failure_categories(store)}
    assert ("unrequested_write", 1) in counts and len(counts) == 5
    assert sum(c.share for c in failure_categories(store)) == pytest.approx(1.0)
    assert ("ops", "unrequested_write", "refund", 1) in top_tools_per_category(store)
    summary = summarize_run(store, "r1", k=1)
    assert summary.pass_at_1.value == pytest.approx((1 + 0.5 + 0 + 0) / 4)
    assert (summary.graded_for_writes, summary.unrequested_write_rate) == (1, 1.0)  # the others: checks only
