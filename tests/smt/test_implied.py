"""Checks the others imply (mantra_env.smt.implied), held to the grader by brute force on short traces."""

from __future__ import annotations

import itertools

import pytest

from mantra_env.case import CaseCheck
from mantra_env.checks import TraceIndex, evaluate
from mantra_env.smt import implied_checks
from mantra_env.trace import Trace


def _checks(*texts: str) -> list[CaseCheck]:
    return [CaseCheck(id=f"c{n}", check=text) for n, text in enumerate(texts)]


@pytest.mark.parametrize(
    ("texts", "implied"),
    [
        (['NO-CALL pay(card="x")', "NO-CALL pay()"], ["c0"]),
        (["CALL a()", "CALL a() PRECEDES CALL b()"], ["c0"]),
        (['CALL a(id="1")', "CALL a()"], ["c1"]),
        (["NO-CALL a()", "CALL b()"], []),
        (["CALL a() PRECEDES CALL b()", "CALL b() FOLLOWS CALL a()"], ["c0", "c1"]),  # the same check twice
        (["CALL a()"], []),
    ],
)
def test_implied_checks(texts: list[str], implied: list[str]) -> None:
    assert implied_checks(_checks(*texts)) == implied


def test_implication_agrees_with_brute_force_on_short_traces() -> None:
    """Over every trace of up to 3 calls of a() and b() with id 1 or 2: a check is implied exactly when no trace
    satisfies the others and breaks it."""
    texts = ['CALL a(id="1")', 'NO-CALL b(id="1")', 'CALL a() PRECEDES CALL b(id="2")', "CALL a()", "CALL b()"]
    checks = _checks(*texts)
    calls = [(tool, {"id": value}) for tool in ("a", "b") for value in ("1", "2")]
    traces = [Trace.of(*combo) for n in range(4) for combo in itertools.product(calls, repeat=n)]
    found = implied_checks(checks)
    for j in range(len(checks)):
        others = [c for k, c in enumerate(checks) if k != j]
        brute = not any(
            all(evaluate(c.check, TraceIndex(t.calls)).passed for c in others)
            and not evaluate(checks[j].check, TraceIndex(t.calls)).passed
            for t in traces
        )
        assert (checks[j].id in found) == brute, texts[j]
    assert found == ["c3", "c4"]  # both outcomes occur: a() and b() follow from the PRECEDES
