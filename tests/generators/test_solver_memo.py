"""The validation stage's solver memo: a second validation of the same artifacts solves nothing and ends the same
(history included); changed artifacts, another core source or an unreadable entry are solved again."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from mantra_env.case import CaseCheck
from mantra_env.generators import solver_memo, validation
from mantra_env.generators.artifacts import SampleValidation
from mantra_env.generators.llm import LLMClient
from mantra_env.generators.replay import PROVIDER
from mantra_env.generators.solver_memo import SolverMemo
from mantra_env.generators.validation import SampleInput, Solved, SolverJob, validate_sample
from mantra_env.tools import ToolSpec
from tests.generators.test_validation import ADD_GOAL, _config, _refusal_case


def _validate(tmp_path: Path, data: SampleInput, memo: SolverMemo) -> SampleValidation:
    config = _config(tmp_path, {"backward_audit/t-1/reads/r1#0": ADD_GOAL})
    return asyncio.run(validate_sample(LLMClient(config, None), data, config.validation, memo))


class Counted:
    """Counts the solvers the validation loop builds (every solved query needs one: :func:`validation.solve`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.built = 0
        original = validation.solve

        def counting(tools: list[ToolSpec], job: SolverJob) -> Solved:
            self.built += 1
            return original(tools, job)

        monkeypatch.setattr(validation, "solve", counting)


def test_a_second_validation_of_the_same_artifacts_solves_nothing_and_ends_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memo = SolverMemo(tmp_path / "solver_memo")
    solvers = Counted(monkeypatch)
    PROVIDER.served.clear()
    first = _validate(tmp_path, _refusal_case(), memo)
    solved = solvers.built
    assert solved == 4  # round 1's artifacts, then those the judge's added goal left: forward, then backward
    assert len(list(memo.folder.rglob("*.json"))) == 2  # one entry per set of artifacts
    assert first.outcomes[0].status == "validated"

    second = _validate(tmp_path, _refusal_case(), memo)
    assert solvers.built == solved  # every query answered from the memo
    assert second.model_dump() == first.model_dump()  # outcomes, model, goals and the whole history
    assert PROVIDER.served == ["backward_audit/t-1/reads/r1#0"] * 2  # the judge is still asked (from its recording)


def test_changed_checks_are_solved_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memo = SolverMemo(tmp_path / "solver_memo")
    solvers = Counted(monkeypatch)
    _validate(tmp_path, _refusal_case(), memo)
    data = _refusal_case()
    data.checks["t-1"] = [*data.checks["t-1"], CaseCheck(id="no_po_twice", check="NO-CALL create_purchase_order()")]
    solved = solvers.built
    _validate(tmp_path, data, memo)
    assert solvers.built == 2 * solved


def test_results_solved_under_another_core_source_are_not_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memo = SolverMemo(tmp_path / "solver_memo")
    solvers = Counted(monkeypatch)
    _validate(tmp_path, _refusal_case(), memo)
    solved = solvers.built
    monkeypatch.setattr(solver_memo, "core_digest", lambda: "another mantra_env")
    _validate(tmp_path, _refusal_case(), memo)
    assert solvers.built == 2 * solved


def test_an_unreadable_entry_is_solved_again_and_rewritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    memo = SolverMemo(tmp_path / "solver_memo")
    solvers = Counted(monkeypatch)
    first = _validate(tmp_path, _refusal_case(), memo)
    solved = solvers.built
    entries = sorted(memo.folder.rglob("*.json"))
    for entry in entries:
        entry.write_text('{"forward": "half a fi', encoding="utf-8")  # e.g. edited by hand
    with caplog.at_level(logging.WARNING, logger="mantra.generators.solver_memo"):
        again = _validate(tmp_path, _refusal_case(), memo)
    assert again.model_dump() == first.model_dump() and solvers.built == 2 * solved
    assert "unreadable solver memo entry, solving again" in caplog.text
    assert all(memo.load(entry.stem) is not None for entry in entries)
