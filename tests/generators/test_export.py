"""Each exported case's own first-valid round, from its validation history (not its sample's rounds)."""

from __future__ import annotations

import pytest
from pydantic import JsonValue

from mantra_env.generators.export import first_valid_round

History = list[dict[str, JsonValue]]


def query(number: int, kind: str, status: str, check: str | None = None) -> dict[str, JsonValue]:
    entry: dict[str, JsonValue] = {"round": number, "scenario": "s", "query": kind, "status": status}
    return entry | ({"check": check} if check else {})


def valid_in(number: int) -> History:
    return [query(number, "forward", "consistent"), query(number, "backward", "consistent", "c1"),
            query(number, "backward", "consistent", "c2")]  # fmt: skip


HISTORIES: dict[str, tuple[History, int | None]] = {
    "first round": (valid_in(1), 1),
    "repaired forward conflict": ([query(1, "forward", "conflict"), *valid_in(2)], 2),
    # forward consistent in R2 but the backward audit waited (another scenario had a conflict) until R3, asked on
    # the same artifacts (the forward result memoized, so not asked again)
    "memoized forward": (
        [query(1, "forward", "conflict"), query(2, "forward", "consistent"), query(3, "backward", "consistent", "c1")],
        3,
    ),
    "backward conflict repaired": (
        [*valid_in(1)[:2], query(1, "backward", "conflict", "c2"), *valid_in(2)],
        2,
    ),
    # valid only at the re-check after the last round (R5): it counts in R5, whose repairs it checks
    "final re-check": (
        [
            query(1, "forward", "conflict"),
            query(2, "forward", "conflict"),
            query(3, "forward", "conflict"),
            query(4, "forward", "conflict"),
            query(5, "forward", "conflict"),
            *valid_in(6),
        ],
        5,
    ),
    "never valid": ([query(1, "forward", "consistent"), query(1, "backward", "conflict", "c1")], None),
    "hand-written (no rounds)": ([{"query": "forward", "status": "consistent"}], None),
    "repair entries only": ([{"round": 1, "stage": "backward_audit", "scenario": "s", "applied": True}], None),
}


@pytest.mark.parametrize("name", HISTORIES)
def test_first_valid_round_is_the_case_s_own(name: str) -> None:
    history, expected = HISTORIES[name]
    # the sample used 5 rounds; the case's own round comes from its history
    assert first_valid_round(history, 5) == expected


def test_the_final_re_check_counts_in_the_last_round_the_sample_used() -> None:
    """A sample that stopped at a fixpoint after round 2 re-checks in round 3: that checks round 2's repairs."""
    assert first_valid_round([{"round": 1, "query": "forward", "status": "conflict"}, *valid_in(3)], 2) == 2
