"""Reviewing a case: typed edits checked before they are stored, stale revisions refused, and the reviewer's
decision carried through re-validation (locks honoured) and export (counted apart)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mantra_env.case import load_suite
from mantra_env.generators.artifacts import SampleValidation
from mantra_env.generators.config import load_config
from mantra_env.generators.pipeline import run_pipeline
from mantra_env.generators.review import state
from mantra_env.generators.review.run import ReviewRun
from mantra_env.generators.review.state import (
    ReviewError,
    StaleReview,
    apply_edit_records,
    change_goal,
    change_initial,
    decide,
    load_review,
    review_path,
    save_review,
    solve,
)
from tests.generators.review.conftest import FIXTURE
from tests.spies import keyword_calls

FIX = {"op": "remove_check", "id": "delivery_before_po"}


def _fixed(run_dir: Path) -> ReviewRun:
    run = ReviewRun(run_dir)
    scenario = run.scenarios("s000")["s000-3"]
    review = run.review("s000")
    assert not solve(review, scenario, run.tools, run.bound).clean  # the awaiting case really conflicts
    edited = apply_edit_records(review, "s000-3", [FIX], run.tools, "alice", "4.2 sets no order")
    assert solve(edited, scenario, run.tools, run.bound).clean
    save_review(run_dir, decide(edited, "s000-3", "accepted", "alice", "checked against 4.1"), 0)
    return run


def test_a_repaired_and_accepted_case_is_exported_as_human_validated(run_dir: Path) -> None:
    _fixed(run_dir)
    stored = load_review(run_dir, "s000")
    assert stored is not None and stored.revision == 1 and stored.locks == ["check:delivery_before_po"]
    assert [(a.kind, a.who) for a in stored.actions] == [("edit", "alice"), ("accept", "alice")]
    result = run_pipeline(load_config(FIXTURE / "config.yaml"), run_dir, from_stage="export")
    assert result.suite_dir is not None
    suite = load_suite(result.suite_dir)
    case = next(c for c in suite.cases if c.id.endswith("s000-3"))
    assert case.validation.reviewer == "alice" and case.validation.locks == ["check:delivery_before_po"]
    assert "delivery_before_po" not in [c.id for c in case.checks]
    assert suite.manifest.stage_counts["human_validated"] == 1
    assert suite.manifest.stage_counts["awaiting_human"] == 0


def test_revalidation_starts_from_the_review_and_keeps_its_locks(run_dir: Path) -> None:
    _fixed(run_dir)
    run_pipeline(load_config(FIXTURE / "config.yaml"), run_dir, from_stage="validation")
    assert load_review(run_dir, "s000") is not None  # --from-stage never deletes a review
    validation = SampleValidation.model_validate_json((run_dir / "validation" / "s000.json").read_text())
    assert validation.review_revision == 1 and validation.locks == ["check:delivery_before_po"]
    outcome = {o.scenario_id: o for o in validation.outcomes}["s000-3"]
    assert outcome.status == "validated" and "delivery_before_po" not in [c.id for c in outcome.checks]


def test_an_invalid_edit_changes_nothing(run_dir: Path) -> None:
    run = _fixed(run_dir)
    before = review_path(run_dir, "s000").read_bytes()
    review = run.review("s000")
    bad = [
        ([{"op": "add_condition", "tool": "create_purchase_order", "section": "pre", "expr": "(= nope true)"}], "nope"),
        ([{"op": "remove_check", "id": "no_such_check"}], "no_such_check"),
        ([{"op": "frobnicate"}], "not an edit of the edit language"),
    ]
    for records, expected in bad:
        with pytest.raises(ReviewError, match=expected):
            apply_edit_records(review, "s000-3", records, run.tools, "bob")
    with pytest.raises(ReviewError, match="does not type-check"):
        change_goal(review, "s000-3", ["(= nothing_like_this true)"], run.tools, "bob")
    with pytest.raises(ReviewError, match="no variable 'ghost'"):
        change_initial(review, "ghost", True, run.tools, "bob")
    with pytest.raises(ReviewError, match="say why"):
        decide(review, "s000-3", "rejected", "bob", " ")
    with pytest.raises(ReviewError, match="no scenario 's000-9'"):
        decide(review, "s000-9", "accepted", "bob", "")
    assert review_path(run_dir, "s000").read_bytes() == before


def test_a_stale_revision_is_refused(run_dir: Path) -> None:
    run = _fixed(run_dir)
    first_tab = run.review("s000")  # both tabs read revision 1
    second_tab = run.review("s000")
    save_review(run_dir, change_goal(first_tab, "s000-1", ["(= picked true)"], run.tools, "alice"), 1)
    before = review_path(run_dir, "s000").read_bytes()
    with pytest.raises(StaleReview, match="revision 2, you read 1"):
        save_review(run_dir, decide(second_tab, "s000-1", "rejected", "bob", "unclear"), 1)
    assert review_path(run_dir, "s000").read_bytes() == before


def test_goal_and_initial_value_edits_are_typed_and_locked(run_dir: Path) -> None:
    run = ReviewRun(run_dir)
    review = run.review("s000")
    changed = change_goal(review, "s000-1", ["(= picked true)", ""], run.tools, "alice")
    changed = change_initial(changed, "picked", False, run.tools, "alice")
    assert changed.goals["s000-1"] == ["(= picked true)"] and changed.initial["picked"] is False
    assert {"goal:s000-1", "initial:picked"} <= set(changed.locks)
    with pytest.raises(ReviewError, match="initial value of picked"):
        change_initial(changed, "picked", "yes", run.tools, "alice")


def test_the_review_solver_asks_in_the_run_configs_solver_modes(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = load_config(FIXTURE / "config.yaml")
    modes = {"canonical_lists": True, "refuse_invented_ids": True}
    config = config.model_copy(update={"validation": config.validation.model_copy(update=modes)})
    run = ReviewRun(run_dir, given_config=config)
    assert run.solver_modes == modes  # what the app's solve jobs are given (SolveTask.modes)
    asked = keyword_calls(monkeypatch, state, "CaseSolver")
    solve(run.review("s000"), run.scenarios("s000")["s000-1"], run.tools, run.bound, run.solver_modes)
    assert asked and all(kwargs.items() >= modes.items() for kwargs in asked)
