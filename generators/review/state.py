"""The review of one sample: the artifacts a reviewer edits, their decisions, and who did what when.

A review starts from the validation stage's final artifacts of a sample (the shared world model, every
scenario's checks and goal, the initial values) and is stored as ``RUN_DIR/review/<sample>.json``, beside the
stage folders: ``--from-stage validation`` never deletes it, and a re-validation starts from the reviewed
artifacts with the parts the reviewer edited locked (:mod:`mantra_env.generators.validation`).

Every change is a :class:`HumanAction`, checked before anything is written: typed edits go through the edit
language (:func:`mantra_env.worldmodel.edits.apply_edits` with ``author="human"``, so the parts they touch are
locked), a goal or an initial value must type-check against the world model. A rejected change raises and
leaves the review as it was. :func:`save_review` writes atomically and refuses a review whose revision is not the
one on disk (another tab or reviewer changed it since it was read), so nobody silently overwrites another's work;
it reads, checks and writes under the sample's lock (``review/<sample>.lock``), so this holds across processes too
(two review apps on one run directory are safe).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from mantra_env.case import CaseCheck, SolverModes
from mantra_env.errors import MantraError
from mantra_env.files import LockHeld, exclusive_lock
from mantra_env.generators.artifacts import SampleValidation, Scenario
from mantra_env.generators.rundir import write_text
from mantra_env.generators.worldgen import initial_state, with_goal
from mantra_env.smt import CaseSolver, QueryResult
from mantra_env.tools import ToolSpec
from mantra_env.worldmodel import format_model, parse_model
from mantra_env.worldmodel.diagnostics import DslError
from mantra_env.worldmodel.edits import EDIT_ADAPTER, Draft, Edit, EditRejected, apply_edits
from mantra_env.worldmodel.typecheck import check_model, value_problem

REVIEW_DIR = "review"
SAVE_LOCK_WAIT_S = 10.0
"""How long a save waits for another process saving the same sample (a save holds the lock for milliseconds)."""


class ReviewError(MantraError, ValueError):
    """A review change that cannot be made (the message says what and why); nothing was written."""


class StaleReview(ReviewError):
    """The review changed on disk since it was read: reload it and make the change again."""


class ReviewBusy(ReviewError):
    """Another process held the sample's review for longer than a save waits: nothing was written; try again."""


class HumanAction(BaseModel):
    """One change a reviewer made, as it was applied."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["edit", "goal", "initial", "accept", "reject", "reopen"]
    scenario_id: str | None = None
    edits: list[dict[str, JsonValue]] = Field(default_factory=list, description="Edit-language records (edit.v1).")
    goal: list[str] | None = None
    initial: dict[str, JsonValue] | None = None
    reason: str = ""
    who: str
    at: str


class Decision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: Literal["accepted", "rejected"]
    reason: str = ""
    who: str
    at: str


class SampleReview(BaseModel):
    """The reviewed artifacts of one sample and the actions that made them."""

    model_config = ConfigDict(extra="forbid")

    sample_id: str
    revision: int = 0
    model: str
    checks: dict[str, list[CaseCheck]]
    goals: dict[str, list[str]]
    initial: dict[str, JsonValue]
    locks: list[str] = Field(default_factory=list)
    decisions: dict[str, Decision] = Field(default_factory=dict)
    actions: list[HumanAction] = Field(default_factory=list)


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def start_review(validation: SampleValidation) -> SampleReview:
    """A review of ``validation``'s final artifacts, with nothing changed yet."""
    return SampleReview(
        sample_id=validation.sample_id,
        model=validation.model,
        checks={o.scenario_id: list(o.checks) for o in validation.outcomes},
        goals=dict(validation.goals),
        initial=dict(validation.initial),
        locks=list(validation.locks),
    )


def review_path(run_root: Path, sample_id: str) -> Path:
    return run_root / REVIEW_DIR / f"{sample_id}.json"


def load_review(run_root: Path, sample_id: str) -> SampleReview | None:
    path = review_path(run_root, sample_id)
    if not path.exists():
        return None
    try:
        return SampleReview.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise ReviewError(f"{path}: not a review file ({error}); move it away to start the review again") from None


def review_lock(run_root: Path, sample_id: str) -> Path:
    """The lock file of ``sample_id``'s review (held by :func:`save_review` while it reads, checks and writes)."""
    return run_root / REVIEW_DIR / f"{sample_id}.lock"


def save_review(run_root: Path, review: SampleReview, read_revision: int) -> SampleReview:
    """Write ``review`` as the next revision if the file is still at ``read_revision`` (0: no file yet).

    The read, the check and the write hold the sample's lock (:func:`review_lock`), so of two processes (two
    review apps on one run directory) saving the same revision one succeeds and the other gets
    :class:`StaleReview`.

    Raises:
        StaleReview: the file is at another revision.
        ReviewError: the file on disk is not a review.
        ReviewBusy: another process held the lock for :data:`SAVE_LOCK_WAIT_S` seconds.
    """
    try:
        lock = review_lock(run_root, review.sample_id)
        with exclusive_lock(lock, f"the review of {review.sample_id}", SAVE_LOCK_WAIT_S):
            on_disk = load_review(run_root, review.sample_id)
            current = on_disk.revision if on_disk is not None else 0
            if current != read_revision:
                raise StaleReview(
                    f"sample {review.sample_id} was changed by someone else (revision {current}, you read "
                    f"{read_revision}); reload the page and make your change again"
                )
            saved = review.model_copy(update={"revision": read_revision + 1})
            write_text(review_path(run_root, review.sample_id), saved.model_dump_json(indent=2) + "\n")
    except LockHeld as held:
        raise ReviewBusy(f"{held}; nothing was changed: try again") from None
    return saved


def _known(review: SampleReview, scenario_id: str | None) -> str:
    if scenario_id is None or scenario_id not in review.checks:
        known = ", ".join(sorted(review.checks))
        raise ReviewError(f"sample {review.sample_id} has no scenario {scenario_id!r}: use one of {known}")
    return scenario_id


def apply_edit_records(
    review: SampleReview,
    scenario_id: str,
    records: Sequence[Mapping[str, JsonValue]],
    tools: Sequence[ToolSpec],
    who: str,
    reason: str = "",
) -> SampleReview:
    """The review with a reviewer's typed edits applied to the shared model and ``scenario_id``'s checks.

    Raises:
        ReviewError: a record is not an edit of the edit language, or an edit does not apply (the message
            carries the edit language's reason and the DSL diagnostics).
    """
    sid = _known(review, scenario_id)
    edits: list[Edit] = []
    for number, record in enumerate(records, 1):
        try:
            edits.append(EDIT_ADAPTER.validate_python({**record, "author": "human"}))
        except ValueError as error:
            raise ReviewError(f"edit {number} is not an edit of the edit language: {error}") from None
    draft = Draft(parse_model(review.model), tuple(review.checks[sid]), frozenset(review.locks))
    try:
        edited = apply_edits(draft, edits, tools)
    except EditRejected as error:
        raise ReviewError(str(error)) from None
    model_text = format_model(edited.model)
    for other, checks in review.checks.items():  # the model is shared: every scenario's checks must still fit it
        if other != sid and model_text != review.model:
            try:
                CaseSolver(with_goal(edited.model, review.goals.get(other, [])), checks, 1, None, tools)
            except (MantraError, DslError) as error:
                raise ReviewError(f"the edited model no longer fits scenario {other}'s checks: {error}") from None
    action = HumanAction(
        kind="edit", scenario_id=sid, edits=[e.model_dump(mode="json") for e in edits], reason=reason, who=who, at=now()
    )
    return review.model_copy(
        update={
            "model": model_text,
            "checks": {**review.checks, sid: list(edited.checks)},
            "locks": sorted(edited.locks),
            "initial": {**review.initial, **edited.initial},  # start values of variables the edits added
            "actions": [*review.actions, action],
        }
    )


def change_goal(
    review: SampleReview, scenario_id: str, goal: Sequence[str], tools: Sequence[ToolSpec], who: str, reason: str = ""
) -> SampleReview:
    """The review with ``scenario_id``'s goal replaced (each a DSL expression over the model's variables)."""
    sid = _known(review, scenario_id)
    texts = [text.strip() for text in goal if text.strip()]
    try:
        model = with_goal(parse_model(review.model), texts)
        check_model(model, tools)
    except DslError as error:
        raise ReviewError(f"the goal does not type-check against the world model: {error}") from None
    action = HumanAction(kind="goal", scenario_id=sid, goal=texts, reason=reason, who=who, at=now())
    return review.model_copy(
        update={
            "goals": {**review.goals, sid: texts},
            "locks": sorted({*review.locks, f"goal:{sid}"}),
            "actions": [*review.actions, action],
        }
    )


def change_initial(
    review: SampleReview, name: str, value: JsonValue, tools: Sequence[ToolSpec], who: str, reason: str = ""
) -> SampleReview:
    """The review with the world model's own initial value of ``name`` replaced."""
    model = check_model(parse_model(review.model), tools)
    decl = model.model.var(name)
    if decl is None:
        names = ", ".join(v.name for v in model.model.vars)
        raise ReviewError(f"the world model has no variable {name!r}: use one of {names}")
    problem = (
        "null is not a value: give one of the variable's type" if value is None else value_problem(value, decl.var_type)
    )
    if problem:
        raise ReviewError(f"initial value of {name}: {problem}")
    action = HumanAction(kind="initial", initial={name: value}, reason=reason, who=who, at=now())
    return review.model_copy(
        update={
            "initial": {**review.initial, name: value},
            "locks": sorted({*review.locks, f"initial:{name}"}),
            "actions": [*review.actions, action],
        }
    )


def decide(
    review: SampleReview, scenario_id: str, status: Literal["accepted", "rejected", "reopen"], who: str, reason: str
) -> SampleReview:
    """The review with a reviewer's decision on ``scenario_id`` (a rejection needs a reason)."""
    sid = _known(review, scenario_id)
    if status == "rejected" and not reason.strip():
        raise ReviewError("say why the case is rejected (the reason is kept with the run)")
    at = now()
    decisions = dict(review.decisions)
    if status == "reopen":
        decisions.pop(sid, None)
        kind: Literal["accept", "reject", "reopen"] = "reopen"
    else:
        decisions[sid] = Decision(status=status, reason=reason.strip(), who=who, at=at)
        kind = "accept" if status == "accepted" else "reject"
    action = HumanAction(kind=kind, scenario_id=sid, reason=reason.strip(), who=who, at=at)
    return review.model_copy(update={"decisions": decisions, "actions": [*review.actions, action]})


@dataclasses.dataclass(frozen=True)
class SolverReport:
    """The queries of one scenario on the review's artifacts."""

    forward: QueryResult | None
    backward: list[QueryResult]
    witness: QueryResult | None
    error: str = ""

    @property
    def clean(self) -> bool:
        return (
            self.forward is not None
            and self.forward.status == "consistent"
            and all(r.status == "consistent" for r in self.backward)
            and self.witness is not None
            and self.witness.status == "found"
        )


def solve(
    review: SampleReview,
    scenario: Scenario,
    tools: Sequence[ToolSpec],
    bound: int,
    modes: SolverModes | None = None,
    *,
    phase: Callable[[str], None] = lambda name: None,
) -> SolverReport:
    """Forward, backward and compliant-witness queries of one scenario (witnesses shortened for reading), as the
    run's validation asked them (``modes``: the config's solver modes); ``phase`` is told
    the name of each query before it runs."""
    sid = scenario.id
    try:
        solver = CaseSolver(
            with_goal(parse_model(review.model), review.goals.get(sid, [])),
            review.checks.get(sid, []),
            bound,
            initial_state(review.initial, scenario),
            tools,
            **(modes or SolverModes()),
        )
    except (MantraError, DslError) as error:
        return SolverReport(None, [], None, error=str(error))
    phase("forward")
    forward = solver.forward(shortest=True)
    phase("backward")
    backward = solver.backward_all(shortest=True) if forward.status == "consistent" else []
    phase("compliant witness")
    return SolverReport(forward, backward, solver.compliant_witness())


def reviewed_validation(validation: SampleValidation, review: SampleReview | None) -> SampleValidation:
    """The validation artifact export uses: the reviewed artifacts, accepted scenarios validated by their
    reviewer, rejected ones rejected with the reviewer's reason."""
    if review is None:
        return validation
    # A validation run from this very revision already holds the reviewed artifacts (and the repairs made on
    # their unlocked parts since); otherwise the review is newer and its artifacts win.
    newer = validation.review_revision != review.revision
    outcomes = []
    for outcome in validation.outcomes:
        sid = outcome.scenario_id
        update: dict[str, object] = {"checks": review.checks.get(sid, outcome.checks)} if newer else {}
        decision = review.decisions.get(sid)
        if decision is not None and decision.status == "accepted":
            update |= {"status": "validated", "reviewer": decision.who, "reason": decision.reason}
        elif decision is not None:
            update |= {"status": "rejected", "reviewer": decision.who, "reason": f"reviewer: {decision.reason}"}
        outcomes.append(outcome.model_copy(update=update))
    history = [*validation.history, *({"review": json.loads(a.model_dump_json())} for a in review.actions)]
    artifacts = (
        {"model": review.model, "goals": review.goals, "initial": review.initial, "locks": review.locks}
        if newer
        else {}
    )
    return validation.model_copy(update={**artifacts, "outcomes": outcomes, "history": history})
