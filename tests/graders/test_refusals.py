"""A suite's refusal share: cases whose stored oracle plan writes nothing; cases without a plan are n/a."""

from __future__ import annotations

import math

import pytest

from mantra_env.case import Case, CaseCheck, PlannedCall, Scenario
from mantra_env.domains import find_suite
from mantra_env.graders.refusals import RefusalShare, is_refusal, refusal_share

KINDS = {"look": "read", "act": "write"}


def case(plan: list[str] | None) -> Case:
    return Case(
        id="c",
        domain="d",
        scenario=Scenario(prompt="p"),
        checks=[CaseCheck(id="k", check="CALL look()")],
        oracle_plan=None if plan is None else [PlannedCall(tool=tool) for tool in plan],
    )


def test_a_plan_without_a_write_is_a_refusal_and_no_plan_is_unknown() -> None:
    assert is_refusal(case(["look", "look"]), KINDS) is True
    assert is_refusal(case([]), KINDS) is True
    assert is_refusal(case(["look", "act"]), KINDS) is False
    assert is_refusal(case(None), KINDS) is None


def test_the_share_counts_cases_without_a_plan_apart() -> None:
    share = refusal_share("s", [case(["look"]), case(["act"]), case(["look"]), case(None)], KINDS)
    assert share == RefusalShare("s", refusals=2, actions=1, unplanned=1)
    assert share.cases == 4 and share.share == pytest.approx(2 / 3)
    assert share.text() == "66.7% (2 of 3 cases with a stored plan; 1 case(s) without a stored plan: n/a)"
    unplanned = refusal_share("s", [case(None)], KINDS)
    assert math.isnan(unplanned.share) and unplanned.text() == "n/a (1 case(s) without a stored plan: n/a)"
    assert refusal_share("s", [], KINDS).text() == "n/a (no cases)"


@pytest.mark.parametrize(
    ("name", "refusals", "cases"),
    [("retail", 90, 260), ("airline", 30, 64), ("telecom", 25, 63), ("operations/generated", 4, 86)],
)
def test_the_shipped_suites_refusal_shares(name: str, refusals: int, cases: int) -> None:
    """The numbers the README and the issue quote (retail: 90 of 260 cases are refusals)."""
    domain, suite = find_suite(name)
    assert domain is not None
    share = refusal_share(name, suite.cases, domain.episode_constants.kinds)
    assert (share.refusals, share.cases, share.unplanned) == (refusals, cases, 0)
