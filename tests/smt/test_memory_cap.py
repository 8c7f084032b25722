"""Z3's memory cap (``MANTRA_SOLVER_MEMORY_MB``): a query past it answers ``unknown`` and the process goes on; a
query under it answers as before."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from benchmarks.smt import generate_case
from mantra_env.smt import CaseSolver
from mantra_env.smt.queries import DEFAULT_MEMORY_MB, MEMORY_VARIABLE, cap_solver_memory, solver_memory_mb
from mantra_env.smt.queries import SmtInputError as QueryInputError


def _solver() -> CaseSolver:
    case = generate_case(150, seed=3)
    return CaseSolver(case.model, case.checks, 16, case.initial, case.tools)


@pytest.fixture
def default_cap(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Whatever a test sets, the process's later solvers get the default cap back."""
    yield
    monkeypatch.delenv(MEMORY_VARIABLE, raising=False)
    assert cap_solver_memory() == DEFAULT_MEMORY_MB


def test_a_query_past_the_cap_is_unknown_and_the_next_one_under_it_answers(
    monkeypatch: pytest.MonkeyPatch, default_cap: None
) -> None:
    uncapped = _solver().forward().status
    assert uncapped in ("consistent", "conflict")

    solver = _solver()
    built = solver.solver  # under the default cap: a parse past Z3's global backstop would crash, not answer
    monkeypatch.setenv(MEMORY_VARIABLE, "1")
    solver._limit(built, solver.timeout_ms)  # what every pass does before it checks
    capped = solver.forward()
    assert capped.status == "unknown" and "memory" in capped.reason and "b'" not in capped.reason

    monkeypatch.setenv(MEMORY_VARIABLE, str(DEFAULT_MEMORY_MB))
    assert _solver().forward().status == uncapped


def test_the_variable_is_read_as_megabytes_and_a_bad_value_is_named() -> None:
    assert solver_memory_mb({}) == DEFAULT_MEMORY_MB
    assert solver_memory_mb({MEMORY_VARIABLE: " 512 "}) == 512
    assert solver_memory_mb({MEMORY_VARIABLE: "0"}) == 0
    with pytest.raises(QueryInputError, match=r"MANTRA_SOLVER_MEMORY_MB='8G' is not a whole number of megabytes"):
        solver_memory_mb({MEMORY_VARIABLE: "8G"})
