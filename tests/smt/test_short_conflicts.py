"""Conflicts looked for among short traces first (``CaseSolver(short_conflicts_first=True)``, the generation config's
``validation.short_conflicts_first``; issue 32 item 2): a forward or backward query asks for a trace of at most 4,
8, 16, ... calls below the bound on its own solver before the bound itself. The answers are the bound's; the
witnesses are short (``benchmarks/smt.py``'s h=64 cell: 64-call witnesses and 4.7M work units before)."""

from __future__ import annotations

from typing import Any

import pytest
import z3

from benchmarks.smt import generate_case
from mantra_env.case import CaseCheck, ValidationRecord
from mantra_env.generators.config import ValidationSettings
from mantra_env.smt import MODES, CaseSolver, Mode, QueryResult
from tests.corpus.loader import entries_of, load_entries

SOLVER_ENTRIES = entries_of(load_entries(), "solver")


def _audit(solver: CaseSolver, shortest: bool = False) -> list[QueryResult]:
    return [solver.forward(shortest), *solver.backward_all(shortest)]


def _work(solver: CaseSolver) -> int:
    statistics = solver.solver.statistics()
    return int(statistics.get_key_value("rlimit count"))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", [0, 1])
def test_the_generated_cases_answer_alike_with_short_witnesses_and_less_work(mode: Mode, seed: int) -> None:
    case = generate_case(15, seed)

    def solver(**options: Any) -> CaseSolver:
        return CaseSolver(case.model, case.checks, 32, case.initial, case.tools, mode=mode, **options)

    plain, short = solver(), solver(short_conflicts_first=True)
    before, after = _audit(plain), _audit(short)
    assert [r.status for r in after] == [r.status for r in before]
    conflicts = [r for r in after if r.status == "conflict"]
    assert conflicts and all(r.witness is not None and len(r.witness.calls) <= 16 for r in conflicts)
    assert max(len(r.witness.calls) for r in before if r.witness is not None) == 32  # every step filled
    assert _work(short) < _work(plain)


@pytest.mark.parametrize("entry", SOLVER_ENTRIES, ids=[entry.name for entry in SOLVER_ENTRIES])
def test_the_corpus_answers_alike(entry: Any) -> None:
    # at a bound of at least 12, so that the 4- and 8-call traces are asked (most entries have a bound of 3 or 4)
    checks = [CaseCheck(id=f"c{j}", check=text) for j, text in enumerate(entry.checks)]
    bound = max(entry.bound, 12)
    for mode in MODES:
        answers = []
        for short in (False, True):
            solver = CaseSolver(
                entry.model, checks, bound, entry.initial, entry.tools(), mode=mode, short_conflicts_first=short
            )
            answers.append([r.status for r in _audit(solver, shortest=True)])
        assert answers[0] == answers[1], mode


def test_a_shortened_witness_is_as_short_as_at_the_bound() -> None:
    case = generate_case(15, 0)
    options: dict[str, Any] = {"mode": "refusal"}
    plain = CaseSolver(case.model, case.checks, 16, case.initial, case.tools, **options)
    short = CaseSolver(case.model, case.checks, 16, case.initial, case.tools, short_conflicts_first=True, **options)
    for before, after in zip(_audit(plain, shortest=True), _audit(short, shortest=True), strict=True):
        assert after.status == before.status
        if before.witness is not None and after.witness is not None:
            assert len(after.witness.calls) == len(before.witness.calls)  # both the shortest conflict


def test_a_model_that_writes_arrays_is_asked_at_the_bound() -> None:
    # the list row's set updates at the open steps made the short checks slower than the bound
    case = generate_case(15, 0, lists=True)
    plain = CaseSolver(case.model, case.checks, 16, case.initial, case.tools)
    short = CaseSolver(case.model, case.checks, 16, case.initial, case.tools, short_conflicts_first=True)
    assert short.encoding.writes_arrays
    assert [r.model_dump(exclude={"seconds"}) for r in _audit(short)] == [
        r.model_dump(exclude={"seconds"}) for r in _audit(plain)
    ]


def test_a_check_that_gives_up_leaves_the_answer_to_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    case = generate_case(15, 0)
    solver = CaseSolver(case.model, case.checks, 16, case.initial, case.tools, short_conflicts_first=True)
    expected = CaseSolver(case.model, case.checks, 16, case.initial, case.tools).forward().status
    asked: list[int] = []
    original = z3.Solver.check

    def check(self: z3.Solver, *assumptions: Any) -> Any:
        asked.append(len(assumptions))
        return z3.unknown if len(asked) == 1 else original(self, *assumptions)

    monkeypatch.setattr(z3.Solver, "check", check)
    assert solver.forward().status == expected == "conflict"
    assert len(asked) == 2  # the 4-call check gave up; the bound answered


def test_the_config_key_reaches_the_solver_but_not_the_case() -> None:
    assert "short_conflicts_first" not in ValidationSettings().solver_modes
    assert ValidationSettings(short_conflicts_first=True).solver_modes == {"short_conflicts_first": True}
    record = ValidationRecord(**ValidationSettings(short_conflicts_first=True).solver_modes)
    assert record.solver_modes == {"short_conflicts_first": True}
    assert "short_conflicts_first" not in record.model_dump_json()
