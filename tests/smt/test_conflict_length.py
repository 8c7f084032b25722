"""Conflicts looked for at their own length (``CaseSolver(conflicts_at_own_length=True)``, the generation config's
``validation.conflicts_at_own_length``; issue 32 item 2): the case encoded at bounds 2, 4, 8, ... is asked before
the bound, and the witness is shortened on encodings at its own length. The answers are those of the bound."""

from __future__ import annotations

from typing import Any

from mantra_env.checks import parse_check
from mantra_env.generators.config import ValidationSettings
from mantra_env.smt import CaseSolver

# A refund needs a verified customer; the checks may or may not ask for the verification.
MODEL = """
(model
  (var verified Bool)
  (var refunded Bool)
  (transition verify (params (user_id u)) (pre) (post (= (next verified) true)))
  (transition refund (params (order_id o)) (pre verified) (post (= (next refunded) true)))
  (goal refunded))
"""
INITIAL = {"verified": False, "refunded": False}
LOOSE = ['CALL refund(order_id="o1")']
STRICT = [*LOOSE, 'CALL verify(user_id="u1") PRECEDES CALL refund(order_id="o1")']


def _solver(checks: list[str], **options: Any) -> CaseSolver:
    return CaseSolver(MODEL, [parse_check(text) for text in checks], 12, INITIAL, **options)


def test_a_conflict_is_found_below_the_bound_and_shortened_there() -> None:
    at_bound = _solver(LOOSE).forward(shortest=True)
    solver = _solver(LOOSE, conflicts_at_own_length=True)
    result = solver.forward(shortest=True)
    assert result.status == at_bound.status == "conflict" and result.bound == 12
    assert result.witness is not None and at_bound.witness is not None
    assert [call.tool for call in result.witness.calls] == [call.tool for call in at_bound.witness.calls] == ["refund"]
    assert result.witness.violations == at_bound.witness.violations
    assert sorted(solver._shorter) == [1, 2]  # found at bound 2, shortened at its own length 1; the bound unasked
    assert solver._solver is None


def test_a_consistent_answer_comes_from_the_bound() -> None:
    solver = _solver(STRICT, conflicts_at_own_length=True)
    assert solver.forward().status == "consistent"
    assert sorted(solver._shorter) == [2, 4, 8] and solver._solver is not None  # every shorter bound said no
    # the audits answer as at the bound (the PRECEDES check pins a user the model ignores: an over-restriction)
    plain = [result.status for result in _solver(STRICT).backward_all(shortest=True)]
    assert [result.status for result in solver.backward_all(shortest=True)] == plain == ["consistent", "conflict"]


def test_a_backward_conflict_too() -> None:
    # without the PRECEDES check nothing asks for verify, so the audit of a check pinning it finds a trace
    checks = [*LOOSE, 'CALL verify(user_id="u1")']
    plain = _solver(checks).backward(1, shortest=True)
    solver = _solver(checks, conflicts_at_own_length=True)
    result = solver.backward(1, shortest=True)
    assert result.status == plain.status == "conflict" and result.witness is not None and plain.witness is not None
    assert len(result.witness.calls) == len(plain.witness.calls) == 2 and solver._solver is None


def test_the_config_key_reaches_the_solver_but_not_the_case() -> None:
    assert "conflicts_at_own_length" not in ValidationSettings().solver_modes
    assert ValidationSettings(conflicts_at_own_length=True).solver_modes == {"conflicts_at_own_length": True}
