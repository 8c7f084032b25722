"""Rewards pay for what an agent did: properties on random checks and traces, and the dense variant's sum."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mantra_env.case import CaseCheck
from mantra_env.checks import Check
from mantra_env.grading import grade
from mantra_env.rewards import REWARD_MODES, obligations, reward
from mantra_env.trace import Trace
from tests.checks.strategies import checks, traces
from tests.env.test_env import CALL_B2, CALL_CHECK, CALL_NOPE, CALL_ORDER, FINAL, make

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


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sampled_from([CALL_CHECK, CALL_ORDER, CALL_B2, CALL_NOPE]), max_size=6),
    st.sampled_from(REWARD_MODES),
    st.integers(1, 7),
)
def test_dense_rewards_sum_to_the_final_reward(actions: list[Any], mode: Any, max_steps: int) -> None:
    sparse, dense = make(case=0, reward_mode=mode, max_steps=max_steps), make(case=0, reward_mode=mode, dense=True)
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
