"""Relevancy filtering where a world model writes arrays (``CaseSolver(array_relevancy=True)``, the generation
config's ``validation.array_relevancy``; issue 32 item 2).

The fixture is the world model, goal, checks and initial state of scenario s023-1 of the airline re-audit (issue
33), whose forward query ran out of its budget: a booking writes six set variables (the passengers' names, the
flights, the payments) and, with relevancy filtering off, every such update at every one of the 16 steps takes
part in the array theory, whatever tool the step calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mantra_env.case import CaseCheck, ValidationRecord
from mantra_env.domains import load_domain
from mantra_env.generators.config import ValidationSettings
from mantra_env.generators.worldgen import with_goal
from mantra_env.smt import CaseSolver
from mantra_env.worldmodel import parse_model

FIXTURE = Path(__file__).parent / "fixtures" / "airline_booking_s023_1.json"


def _booking(**options: Any) -> CaseSolver:
    case = json.loads(FIXTURE.read_text(encoding="utf-8"))
    model = with_goal(parse_model(case["model"]), case["goal"])
    checks = [CaseCheck.model_validate(entry) for entry in case["checks"]]
    tools = load_domain("airline").tool_specs()
    return CaseSolver(model, checks, 16, case["initial"], tools, refuse_invented_ids=True, **options)


@pytest.mark.slow
def test_the_booking_models_forward_query_answers_within_a_tenth_of_the_runs_budget() -> None:
    # 2,000 ms of work units: a tenth of the run's budget, which the query exhausted without the mode
    solver = _booking(array_relevancy=True, timeout_ms=2_000)
    assert solver.encoding.writes_arrays and solver.relevancy == 2
    result = solver.forward()
    assert result.status == "conflict", result.reason
    assert result.witness is not None and "book_reservation" in {call.tool for call in result.witness.calls}


def test_the_mode_filters_only_where_a_postcondition_writes_an_array() -> None:
    assert _booking().relevancy == 0  # off: as the shipped suites were validated
    reads_only = CaseSolver(
        "(model (var seen (Array String)) (var done Bool)"
        " (transition visit (params (id x)) (pre (contains seen (param x))) (post (= (next done) true))))",
        [],
        3,
        {"seen": ["a"], "done": False},
        array_relevancy=True,
    )
    assert not reads_only.encoding.writes_arrays and reads_only.relevancy == 0


def test_the_config_key_reaches_the_solver_and_the_case_record() -> None:
    assert "array_relevancy" not in ValidationSettings().solver_modes  # absent: as before
    on = ValidationSettings(array_relevancy=True).solver_modes
    assert on == {"array_relevancy": True}
    record = ValidationRecord(status="validated", trace_bound=16, **on)
    assert record.model_dump(mode="json")["array_relevancy"] is True and record.solver_modes == on
    assert "array_relevancy" not in ValidationRecord().model_dump(mode="json")  # older suites keep their bytes
