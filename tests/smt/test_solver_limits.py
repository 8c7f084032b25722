"""The solver's limits beside its work budget: Z3's memory cap (``MANTRA_SOLVER_MEMORY_MB``: a query past it
answers ``unknown`` and the process goes on; a query under it answers as before), and Ctrl-C left to Python."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator

import pytest
import z3

from benchmarks.smt import generate_case
from mantra_env.smt import CaseSolver
from mantra_env.smt.queries import (
    DEFAULT_MEMORY_MB,
    DEFAULT_TIMEOUT_MS,
    MEMORY_VARIABLE,
    cap_solver_memory,
    solver_memory_mb,
)
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


def test_ctrl_c_during_a_check_in_a_worker_thread_reaches_python_and_is_not_the_checks_answer() -> None:
    """Z3 takes SIGINT for itself by default: the check ended 'interrupted from keyboard' and Python never saw it."""
    context = z3.Context()
    solver = z3.Solver(ctx=context)
    CaseSolver._limit(solver, DEFAULT_TIMEOUT_MS)
    # pigeonhole, 12 pigeons in 11 holes: seconds of search on any machine, minutes on a slow one
    holes = [[z3.Bool(f"p{p}h{h}", context) for h in range(11)] for p in range(12)]
    for pigeon in holes:
        solver.add(z3.Or(pigeon))
    for h in range(11):
        for p in range(12):
            for q in range(p + 1, 12):
                solver.add(z3.Not(z3.And(holes[p][h], holes[q][h])))
    answers: list[str] = []
    started = threading.Event()

    def check() -> None:
        started.set()
        answer = solver.check()
        answers.append(str(answer) if answer != z3.unknown else solver.reason_unknown())

    worker = threading.Thread(target=check)
    worker.start()
    started.wait()
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)
        worker.join()  # Python's handler runs here at the latest
    # Stop the search the test no longer needs. Z3 clears a pending interrupt when a check starts, so one call made
    # before the worker's check began was lost and the pigeonhole ran to its end (77 s in a CI run): repeat it.
    while worker.is_alive():
        context.interrupt()
        worker.join(0.05)
    assert answers and answers[0] != "interrupted from keyboard"
