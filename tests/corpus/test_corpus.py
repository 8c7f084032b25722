"""The golden corpus, stage by stage: parser, type checker, SMT queries, and the Python grader on every witness.

Each stage is one parametrized test over the entries it applies to (test ids are the entry names). An entry
that documents a known engine bug marks the stages the bug breaks ``xfail(strict=True)``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mantra_env.case import CaseCheck
from mantra_env.checks import Check, TraceIndex, evaluate, parse_check
from mantra_env.smt import DEFAULT_MODE, MODES, CaseSolver, Mode, QueryResult, Witness
from mantra_env.trace import Trace
from mantra_env.worldmodel import (
    DslSyntaxError,
    DslTypeError,
    check_model,
    format_model,
    model_from_json,
    model_to_json,
    parse_model,
)
from tests.corpus.loader import (
    CorpusEntry,
    CorpusFormatError,
    ParseErrorExpect,
    TypeErrorExpect,
    entries_of,
    load_entries,
)

ENTRIES = load_entries()
PARSE_ERRORS = entries_of(ENTRIES, "parse_error")
TYPE_ERRORS = entries_of(ENTRIES, "type_error")
SOLVER = entries_of(ENTRIES, "solver")


def cases(entries: Sequence[CorpusEntry], stage: str) -> list[Any]:
    """One ``pytest.param`` per entry, id = entry name, strict xfail where a known bug breaks ``stage``."""
    params = []
    for entry in entries:
        bug = entry.known_bug(stage)
        marks = [pytest.mark.xfail(strict=True, reason=bug.reason)] if bug is not None else []
        params.append(pytest.param(entry, id=entry.name, marks=marks))
    return params


def mode_cases(entries: Sequence[CorpusEntry], stage: str) -> list[Any]:
    """``cases`` for every query mode (ids ``<mode>-<entry>``); a known bug never excuses the default mode."""
    params = []
    for mode in MODES:
        for entry in entries:
            bug = entry.known_bug(stage) if mode != DEFAULT_MODE else None
            marks = [pytest.mark.xfail(strict=True, reason=bug.reason)] if bug is not None else []
            params.append(pytest.param(entry, mode, id=f"{mode}-{entry.name}", marks=marks))
    return params


# --- the corpus itself ---------------------------------------------------------------------------------------


def test_corpus_covers_the_required_ground() -> None:
    assert len(ENTRIES) >= 36
    parse_codes = [e.expect.code for e in PARSE_ERRORS if isinstance(e.expect, ParseErrorExpect)]
    assert len(parse_codes) >= 10 and len(set(parse_codes)) == len(parse_codes), "one parse entry per code"
    type_codes = {code for e in TYPE_ERRORS if isinstance(e.expect, TypeErrorExpect) for code in e.expect.codes}
    assert len(TYPE_ERRORS) >= 10
    assert {
        "not_bool",
        "next_outside_post",
        "unknown_tool",
        "unknown_param",
        "unknown_enum_value",
        "type_mismatch",
        "unknown_name",
    } <= type_codes
    assert len(SOLVER) >= 14
    expects = [e.statuses() for e in SOLVER if e.xfail is None]
    assert {x.forward for x in expects} == {"consistent", "conflict"}
    assert {b for x in expects for b in x.backward} == {"consistent", "conflict"}
    assert {x.witness for x in expects} == {"found", "infeasible"}
    assert {e.bound for e in SOLVER} >= {4, 8, 16}
    assert {e.tools_name for e in SOLVER} == {"paper", "operations", "lists", None}
    keywords = Counter(word for e in SOLVER for text in e.checks for word in text.split() if word.isupper())
    assert {"CALL", "NO-CALL", "OR", "AFTER", "BEFORE", "FOLLOWS", "PRECEDES"} <= set(keywords)


def test_every_entry_says_what_it_is_for() -> None:
    assert all(entry.description.strip() for entry in ENTRIES)


# --- stage 1: parser -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("entry", cases(PARSE_ERRORS, "parser"))
def test_parse_error_has_the_expected_code_and_span(entry: CorpusEntry) -> None:
    expect = entry.expect
    assert isinstance(expect, ParseErrorExpect)
    with pytest.raises(DslSyntaxError) as info:
        parse_model(entry.model, origin=entry.model_file)
    error = info.value
    assert len(error.diagnostics) == 1  # the parser stops at the first problem
    position = (error.span.line, error.span.column) if error.span is not None else (None, None)
    assert (error.code, *position) == (expect.code, expect.line, expect.column)
    if expect.line is not None:
        assert f"{entry.model_file}:{expect.line}:{expect.column}: error[{expect.code}]" in str(error)


@pytest.mark.parametrize("entry", cases(TYPE_ERRORS + SOLVER, "parser"))
def test_model_parses_and_round_trips(entry: CorpusEntry) -> None:
    model = parse_model(entry.model, origin=entry.model_file)
    text = format_model(model)
    again = parse_model(text)
    assert again == model
    assert format_model(again) == text  # the canonical form is a fixed point
    data = model_to_json(model)
    assert model_from_json(data) == model
    assert model_from_json(json.dumps(data)) == model
    # Equality of constant values cannot tell 1 from 1.0 or true from 1; their JSON text can.
    assert json.dumps(model_to_json(model_from_json(json.dumps(data)))) == json.dumps(data)
    assert json.dumps(model_to_json(again)) == json.dumps(data)


# --- stage 2: type checker -----------------------------------------------------------------------------------


@pytest.mark.parametrize("entry", cases(TYPE_ERRORS, "checker"))
def test_type_error_lists_every_problem(entry: CorpusEntry) -> None:
    expect = entry.expect
    assert isinstance(expect, TypeErrorExpect)
    model = parse_model(entry.model)
    with pytest.raises(DslTypeError) as info:
        check_model(model, entry.tools(), source=entry.model, origin=entry.model_file)
    error = info.value
    assert [d.code for d in error.diagnostics] == list(expect.codes)
    assert all(d.span is not None for d in error.diagnostics)  # the model came from text
    assert error.span is not None
    assert (error.span.line, error.span.column) == (expect.line, expect.column)


@pytest.mark.parametrize("entry", cases(SOLVER, "checker"))
def test_model_type_checks(entry: CorpusEntry) -> None:
    checked = check_model(parse_model(entry.model), entry.tools(), source=entry.model, origin=entry.model_file)
    assert checked.model == parse_model(entry.model)


# --- stage 3: compiler and solver ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Solved:
    """The queries of one solver entry."""

    forward: QueryResult
    backward: tuple[QueryResult, ...]
    witness: QueryResult

    @property
    def statuses(self) -> tuple[str, tuple[str, ...], str]:
        return self.forward.status, tuple(r.status for r in self.backward), self.witness.status


_SOLVED: dict[tuple[str, Mode], Solved] = {}


def solve(entry: CorpusEntry, mode: Mode = DEFAULT_MODE) -> Solved:
    """The entry's forward, backward and witness queries in ``mode`` (run once per session, shared by stages 3
    and 4 and the conflict-corpus tests)."""
    if (entry.name, mode) not in _SOLVED:
        checks = [CaseCheck(id=f"c{j}", check=text) for j, text in enumerate(entry.checks)]
        solver = CaseSolver(
            entry.model, checks, entry.bound, entry.initial, entry.tools(), mode=mode, refuse_invented_ids=True
        )
        _SOLVED[entry.name, mode] = Solved(solver.forward(), tuple(solver.backward_all()), solver.compliant_witness())
    return _SOLVED[entry.name, mode]


@pytest.mark.parametrize(("entry", "mode"), mode_cases(SOLVER, "solver"))
def test_solver_statuses(entry: CorpusEntry, mode: Mode) -> None:
    expect = entry.statuses(mode)
    assert solve(entry, mode).statuses == (expect.forward, expect.backward, expect.witness)


# --- stage 4: the Python grader on every witness -------------------------------------------------------------


def grade(witness: Witness | None, checks: Sequence[Check], bound: int) -> list[bool]:
    """Whether the witness trace passes each check under the Python grader (the normative semantics)."""
    assert witness is not None, "a satisfiable query must come with a witness"
    assert len(witness.calls) <= bound
    trace = Trace.of(*((call.tool, dict(call.args)) for call in witness.calls))
    index = TraceIndex(trace.calls)
    return [evaluate(check, index).passed for check in checks]


@pytest.mark.parametrize(("entry", "mode"), mode_cases(SOLVER, "grader"))
def test_witnesses_agree_with_the_grader(entry: CorpusEntry, mode: Mode) -> None:
    solved = solve(entry, mode)
    checks = [parse_check(text) for text in entry.checks]
    everything = [True] * len(checks)
    if solved.forward.status == "conflict":
        assert grade(solved.forward.witness, checks, entry.bound) == everything
        assert solved.forward.witness is not None and solved.forward.witness.violations
    for j, result in enumerate(solved.backward):
        if result.status == "conflict":
            expected = [n != j for n in range(len(checks))]
            assert grade(result.witness, checks, entry.bound) == expected, f"backward c{j}"
    if solved.witness.status == "found":
        assert grade(solved.witness.witness, checks, entry.bound) == everything


# --- the loader ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"descripton": "typo"}, "unknown keys"),
        ({"expect": {"forward": "conflict", "backward": [], "witness": "found"}}, "one of"),
        ({"expect": {"forward": "conflicts", "backward": ["conflict"], "witness": "found"}}, "forward must be"),
        ({"expect": {"paper": {"forward": "conflict", "backward": ["conflict"], "witness": "found"}}}, "per mode"),
        ({"kind": "junk"}, "conflict entries"),
        ({"expect": {"parse_error": {"code": "empty", "line": 0, "column": 1}}, "checks": []}, "positive integer"),
        ({"xfail": {"reason": "flaky", "stages": ["solver"]}}, 'start with "bug: "'),
        ({"model_file": "other.wm"}, "model_file must be"),
    ],
)
def test_loader_rejects_malformed_entries(tmp_path: Path, entry: dict[str, Any], problem: str) -> None:
    base: dict[str, Any] = {
        "description": "d",
        "model_file": "e.wm",
        "tools": None,
        "checks": ["CALL t()"],
        "expect": {"forward": "conflict", "backward": ["conflict"], "witness": "found"},
    }
    (tmp_path / "e.wm").write_text("(model)")
    (tmp_path / "e.json").write_text(json.dumps(base | entry))
    with pytest.raises(CorpusFormatError, match=problem):
        load_entries(tmp_path)


def test_loader_rejects_a_model_file_without_an_entry(tmp_path: Path) -> None:
    (tmp_path / "stray.wm").write_text("(model)")
    with pytest.raises(CorpusFormatError, match=r"stray\.wm"):
        load_entries(tmp_path)
