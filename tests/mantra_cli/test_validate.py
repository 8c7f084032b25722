"""``mantra validate``: a shipped suite re-validates; a user's suite folder with a case broken by an edit is named
with why and exits 1; a reviewer's acceptance is reported as such; ``unknown`` has its own exit code."""

from __future__ import annotations

from pathlib import Path

import pytest

from mantra_env import authoring
from mantra_env.authoring import validate_case
from mantra_env.case import Case, CaseCheck, Suite, ValidationRecord, write_suite
from mantra_env.domains import find_suite
from mantra_env.mantra_cli.main import main as mantra
from mantra_env.mantra_cli.validate import EXIT_INVALID, EXIT_UNKNOWN, exit_code, judge, main
from mantra_env.smt import QueryResult
from tests.spies import keyword_calls

DOMAIN, STARTER = find_suite("operations/starter")
assert DOMAIN is not None
FIRST, SECOND = STARTER.cases[:2]
# the case's goal needs the item in stock; a purchase order needs it out of stock: no compliant trace is left
CONFLICTING = CaseCheck(id="no_po", check="CALL create_purchase_order", author="human")


def broken(case: Case) -> Case:
    checks = [CONFLICTING if check.id == "no_po" else check for check in case.checks]
    assert checks != case.checks, "the fixture expects the first starter case to have a no_po check"
    return case.model_copy(update={"checks": checks})


def user_suite(folder: Path, cases: list[Case]) -> Path:
    manifest = STARTER.manifest.model_copy(update={"name": "mine", "case_count": len(cases)})
    write_suite(Suite(manifest=manifest, cases=cases), folder)
    return folder


def test_a_shipped_suite_validates_and_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    status = mantra(["validate", "--suite", "operations/starter", "--cases", FIRST.id, SECOND.id])
    out = capsys.readouterr()
    assert status == 0, out.err
    assert f"valid    operations/starter {FIRST.id} (h=16)" in out.out
    assert "2 valid, 0 accepted, 0 unknown, 0 invalid" in out.out
    assert "cases: 2/2" in out.err  # progress


def test_a_user_suite_with_a_broken_case_names_it_with_why_and_exits_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = user_suite(tmp_path / "mine", [broken(FIRST), SECOND])
    status = main(["--suite", str(folder)])
    out = capsys.readouterr().out
    assert status == EXIT_INVALID
    assert f"invalid  operations/mine {FIRST.id} (h=16)" in out
    assert "witness: infeasible" in out or "conflict" in out  # why, from the solver
    assert f"valid    operations/mine {SECOND.id}" in out
    assert "1 valid, 0 accepted, 0 unknown, 1 invalid" in out


def test_a_case_a_reviewer_accepted_is_reported_as_accepted_not_invalid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    accepted = broken(FIRST)
    record = accepted.validation.model_copy(update={"reviewer": "ada"})
    folder = user_suite(tmp_path / "mine", [accepted.model_copy(update={"validation": record})])
    status = main(["--suite", str(folder), "--jobs", "2"])
    out = capsys.readouterr().out
    assert status == 0
    assert f"accepted operations/mine {FIRST.id} (h=16)\n    accepted by ada; the solver says:" in out


def test_unknown_results_make_the_case_unknown_with_its_own_exit_code() -> None:
    unknown = QueryResult(query="backward", status="unknown", check_id="c0", bound=16, reason="out of budget")
    found = QueryResult(query="witness", status="found", bound=16)
    forward = QueryResult(query="forward", status="consistent", bound=16)
    record = ValidationRecord(status="awaiting_human", trace_bound=16, backward="unknown")
    outcome = judge("operations/starter", FIRST, record, [forward, unknown, found])
    assert outcome.verdict == "unknown"
    assert "backward c0: unknown (out of budget)" in outcome.why
    assert exit_code({"valid": 3, "unknown": 1}) == EXIT_UNKNOWN
    assert exit_code({"unknown": 1, "invalid": 1}) == EXIT_INVALID
    assert exit_code({"valid": 2, "accepted": 1}) == 0


def test_an_unknown_case_id_is_an_error_with_a_hint(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["--suite", "operations/starter", "--cases", FIRST.id + "x"])
    err = capsys.readouterr().err
    assert status == 2
    assert f"no case {FIRST.id}x in operations/starter" in err and FIRST.id in err.split("in operations")[1]


def test_validate_case_reports_where_the_time_went_only_when_asked() -> None:
    timings: dict[str, float] = {}
    record, _ = validate_case(FIRST, DOMAIN.tool_specs(), 16, timings)
    assert record.status == "validated"
    assert set(timings) == {"build", "forward", "backward", "witness", "shortest", "readable", "canonical"}
    assert all(seconds > 0 for seconds in timings.values())


# escalate_to_manager ignores which request it escalates; only HW-1 is named anywhere. Refusing invented ids, an
# escalation of another request cannot happen, so the case validates; without it, escalating an invented request
# first leaves the check's call refused: a conflict.
ID_BLIND = """
(model
  (var escalated Bool)
  (transition escalate_to_manager
    (params (request_id req))
    (pre  (= escalated false))
    (post (= (next escalated) true)))
  (goal escalated))
"""


def _id_blind(refuse_invented_ids: bool) -> Case:
    record = ValidationRecord(status="validated", trace_bound=3, refuse_invented_ids=refuse_invented_ids)
    return FIRST.model_copy(
        update={
            "id": "id-blind",
            "world_model": ID_BLIND,
            "checks": [CaseCheck(id="esc", check='CALL escalate_to_manager(request_id="HW-1")', author="human")],
            "scenario": FIRST.scenario.model_copy(update={"external": {}, "internal": {"escalated": False}}),
            "validation": record,
            "oracle_plan": None,
        }
    )


def test_a_case_validated_refusing_invented_ids_is_revalidated_in_that_mode() -> None:
    record, results = validate_case(_id_blind(True), DOMAIN.tool_specs(), 3)
    assert record.status == "validated" and record.refuse_invented_ids  # the returned record keeps the mode
    assert results[0].status == "consistent"
    dropped, results = validate_case(_id_blind(False), DOMAIN.tool_specs(), 3)  # what the mode dropped would say
    assert dropped.status == "awaiting_human" and results[0].status == "conflict"


def test_mantra_validate_asks_in_the_mode_the_case_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--suite", str(user_suite(tmp_path / "on", [_id_blind(True)]))]) == 0
    assert "valid    operations/mine id-blind (h=3)" in capsys.readouterr().out
    assert main(["--suite", str(user_suite(tmp_path / "off", [_id_blind(False)]))]) == EXIT_INVALID
    assert "invalid  operations/mine id-blind (h=3)" in capsys.readouterr().out


def test_the_witness_is_found_at_its_own_length_whatever_mode_the_record_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Only whether a compliant witness exists counts here, and the bound answers that as the shorter encodings do,
    # minutes slower on large cases (airline s023-4): so re-validation never makes it at the bound; the record it
    # returns keeps the case's modes, which the oracle's plan follows.
    asked = keyword_calls(monkeypatch, authoring, "CaseSolver")
    record, results = validate_case(FIRST, DOMAIN.tool_specs(), 16)
    assert asked == [{"witness_at_own_length": True}]
    assert record.status == "validated" and record.solver_modes == FIRST.validation.solver_modes == {}
    assert results[-1].query == "witness" and results[-1].status == "found"
