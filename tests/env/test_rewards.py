"""Rewards pay for what an agent did: properties on random checks and traces, and the dense variant's sum."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mantra_env.case import CaseCheck, PlannedCall, Suite, SuiteManifest
from mantra_env.checks import Check
from mantra_env.env import MantraEnv
from mantra_env.errors import MantraError
from mantra_env.grading import grade, grade_case
from mantra_env.rewards import REWARD_MODES, obligations, reward
from mantra_env.trace import Trace
from tests.checks.strategies import checks, traces
from tests.env.test_env import CALL_B2, CALL_CHECK, CALL_NOPE, CALL_ORDER, DOMAIN, FINAL, case, make

CHECK_LISTS = st.lists(checks(), min_size=1, max_size=4)


def entries(check_list: list[Check]) -> list[CaseCheck]:
    return [CaseCheck(id=f"c{number}", check=check) for number, check in enumerate(check_list)]


@settings(max_examples=150, deadline=None)
@given(CHECK_LISTS, traces(), st.integers(0, 3))
def test_rewards_pay_only_for_what_was_done(check_list: list[Check], trace: Trace, errors: int) -> None:
    cases = entries(check_list)
    owed = obligations(cases)
    verdict = grade(trace, cases)
    empty = grade(Trace(), cases)
    for mode in REWARD_MODES:
        value = reward(mode, verdict, owed, errors)
        assert 0.0 <= value <= 1.0
        if any(owed):
            assert reward(mode, empty, owed, 0) == 0.0  # the no-op agent earns nothing
    fraction = reward("fraction", verdict, owed, errors)
    assert (fraction == 1.0) is verdict.passed  # only a compliant trace earns full credit
    assert reward("shaped", verdict, owed, errors) == pytest.approx(max(0.0, fraction - 0.02 * errors))


# The shop case with a stored oracle plan (check A1, then order A1): graded for writes. Ordering C3 is a write
# nobody asked for (no check names it, the plan orders A1); ordering A1 twice is the plan's write again.
PLANNED = case("out-of-stock").model_copy(
    update={
        "oracle_plan": [
            PlannedCall(tool="check_inventory", arguments={"item_id": "A1"}),
            PlannedCall(tool="create_purchase_order", arguments={"item_id": "A1", "quantity": 1}),
        ]
    }
)
PLANNED_SUITE = Suite(manifest=SuiteManifest(name="shop", domain="shop", case_count=1), cases=[PLANNED])
CALL_C3 = {"tool": "create_purchase_order", "arguments": {"item_id": "C3", "quantity": 1}}


def planned(**kwargs: Any) -> MantraEnv:
    return MantraEnv(PLANNED_SUITE, DOMAIN, case=0, **kwargs)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sampled_from([CALL_CHECK, CALL_ORDER, CALL_B2, CALL_NOPE, CALL_C3]), max_size=6),
    st.sampled_from(REWARD_MODES),
    st.integers(1, 7),
    st.booleans(),
)
@example([CALL_CHECK, CALL_ORDER, CALL_NOPE], "shaped", 7, False)  # a tool error: shaped differs from binary
def test_dense_rewards_sum_to_the_final_reward(actions: list[Any], mode: Any, max_steps: int, plan: bool) -> None:
    build = planned if plan else lambda **kwargs: make(case=0, **kwargs)
    sparse, dense = build(reward_mode=mode, max_steps=max_steps), build(reward_mode=mode, dense=True)
    dense.max_steps = max_steps
    totals = []
    for env in (sparse, dense):
        env.reset()
        total = 0.0
        for action in [*actions, FINAL]:
            _, paid, terminated, truncated, _ = env.step(action)
            total += paid
            if terminated or truncated:
                break
        totals.append(total)
    assert totals[0] == sparse.last_reward == dense.last_reward
    assert totals[1] == pytest.approx(totals[0])
    other = build(reward_mode=next(m for m in REWARD_MODES if m != mode), max_steps=max_steps)
    other.reset()
    for action in [*actions, FINAL]:
        if any(other.step(action)[2:4]):
            break
    assert other.last_reward_in(mode) == sparse.last_reward  # one episode scored in another mode, as made in it
    assert sparse.case is not None and sparse.last_verdict == grade_case(
        sparse.last_trace, sparse.case, DOMAIN.tool_specs()
    )  # the env's verdict, judged call by call, is the one function's


def test_an_unrequested_write_fails_binary_and_counts_as_a_broken_prohibition() -> None:
    for mode, expected in (("binary", 0.0), ("fraction", 0.0), ("shaped", 0.0)):
        env = planned(reward_mode=mode)
        env.reset()
        for action in (CALL_CHECK, CALL_ORDER, CALL_C3):
            env.step(action)
        _, paid, _, _, info = env.step(FINAL)
        assert paid == expected, mode
        verdict = info["verdict"]
        assert verdict.checks_passed and not verdict.passed
        assert [(w.step, w.args["item_id"]) for w in verdict.unrequested_writes] == [(2, "C3")]
        assert info["verdict_json"]["unrequested_writes"][0]["tool"] == "create_purchase_order"
    env = planned(reward_mode="binary")
    env.reset()
    for action in (CALL_CHECK, CALL_ORDER, CALL_ORDER):
        env.step(action)
    assert env.step(FINAL)[1] == 1.0  # the plan's write again is no unrequested write
    unplanned = make(case=0)
    unplanned.reset()
    for action in (CALL_CHECK, CALL_ORDER, CALL_C3):
        unplanned.step(action)
    _, paid, _, _, info = unplanned.step(FINAL)
    assert paid == 1.0 and info["verdict"].unrequested_writes is None  # no stored plan: not graded for writes


def test_dense_rewards_charge_an_unrequested_write_on_its_step() -> None:
    env = planned(reward_mode="fraction", dense=True)
    env.reset()
    paid = [env.step(action)[1] for action in (CALL_CHECK, CALL_ORDER, CALL_C3, FINAL)]
    assert paid == [0.0, 1.0, -1.0, 0.0]


def test_dense_rewards_follow_progress_on_the_checks() -> None:
    env = make(case=0, reward_mode="fraction", dense=True)
    env.reset()
    paid = [env.step(action)[1] for action in (CALL_CHECK, CALL_ORDER, CALL_B2, FINAL)]
    assert paid == [0.0, 1.0, -1.0, 0.0]  # the obligation met, then a prohibition broken


def test_a_pinned_lookup_that_finds_nothing_is_no_tool_error_but_an_unpinned_one_is() -> None:
    from mantra_env.checks import parse_check
    from mantra_env.rewards import expected_misses
    from mantra_env.trace import ToolCall, ToolError

    missing = ToolError(code="not_found", message="no user with that email")
    calls = [
        ToolCall(step=0, tool="find_user_id_by_email", args={"email": "old@example.org"}, error=missing, kind="read"),
        ToolCall(step=1, tool="find_user_id_by_email", args={"email": "guess@example.org"}, error=missing, kind="read"),
        ToolCall(step=2, tool="cancel", args={"email": "old@example.org"}, error=missing, kind="write"),
    ]
    pinned = [CaseCheck(id="tried", check=parse_check('CALL find_user_id_by_email(email="old@example.org")'))]
    assert expected_misses(pinned, calls) == {0}  # the guess is not pinned, the write is no read
    unpinned = [CaseCheck(id="tried", check=parse_check("CALL find_user_id_by_email()"))]
    assert expected_misses(unpinned, calls) == set()
    assert expected_misses(pinned, calls[2:]) == set()


def test_last_reward_in_needs_a_finished_episode_and_a_known_mode() -> None:
    env = make(case=0)
    with pytest.raises(MantraError, match="needs a finished episode"):
        env.last_reward_in("binary")
    env.reset()
    env.step(CALL_CHECK)
    with pytest.raises(MantraError, match="needs a finished episode"):
        env.last_reward_in("binary")
    env.step(FINAL)
    with pytest.raises(MantraError, match="mode must be 'binary', 'fraction' or 'shaped', not 'dense'"):
        env.last_reward_in("dense")  # type: ignore[arg-type]
