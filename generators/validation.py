"""Stage ``validation``: the cross-validation and repair rounds of one sample (paper Sec. "Cross-Validation Using
SMT").

Each round, for every scenario still in play:

1. **Forward.** The forward query of every scenario against the shared world model (with the scenario's goal).
2. If any conflict: **sample-batched world-model repair** (stage ``conflict_resolution``): one judge sees every
   conflicting witness of the sample and may answer one shared repair of the world model; then, for each
   scenario still in conflict, **check resolution** (stage ``locus_reassessment``): a judge proposes localized
   edits to that scenario's checks.
3. Otherwise the **backward audit**: every check whose backward query is satisfiable goes to a judge (stage
   ``backward_audit``) that removes or replaces it, or repairs the world model.

The judges of one phase (every scenario's check resolution; every flagged check's audit) are asked together, on
the same artifacts, so their requests go out at once (an exchange folder gets them in one round); their repairs
are then applied in order. Every repair is a list of typed edits applied all-or-nothing
(:mod:`mantra_env.worldmodel.edits`), re-validated on what the earlier ones left; an edit that does not apply
goes back to the judge with the reason (stage ``fix_repair``). The rounds stop at a fixpoint (no
edit applied) or after ``n_rounds``. Then every scenario is judged on the final artifacts: **validated** if the
forward query and every backward query are consistent and a compliant trace exists within the bound;
**rejected** if a judge declared it invalid, its checks could not be generated, or no compliant trace exists;
**awaiting_human** otherwise. The history keeps every query result, witness and edit.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue

from mantra_env.case import CaseCheck
from mantra_env.errors import MantraError
from mantra_env.generators import prompts
from mantra_env.generators.artifacts import Repair, SampleValidation, Scenario, ScenarioOutcome, WorldModelArtifact
from mantra_env.generators.config import ValidationSettings
from mantra_env.generators.exchange import gather_all
from mantra_env.generators.llm import AnswerCheck, LLMClient
from mantra_env.generators.scenarios import scenario_text
from mantra_env.generators.solver_memo import MemoEntry, SolverMemo
from mantra_env.generators.worldgen import initial_state, with_goal
from mantra_env.lints import ignored_pins
from mantra_env.offload import Offload, in_thread
from mantra_env.smt import CaseSolver, QueryResult
from mantra_env.smt.queries import INTERRUPTED_REASONS
from mantra_env.tools import ToolSpec
from mantra_env.worldmodel import WorldModel, format_expr, format_model, parse_model
from mantra_env.worldmodel.edits import AddVariable, ChangeVariable, Draft, EditRejected, RemoveVariable, apply_edits

log = logging.getLogger("mantra.generators.validation")


class RepairCheck(AnswerCheck[Repair]):
    """The judge stages: a repair that fits the schema. Its edits are applied afterwards: one that does not apply
    is a new ``fix_repair`` request carrying the reason, not a repair of this answer."""

    def output(self) -> type[Repair]:
        return Repair

    def statement(self) -> str:
        return (
            "one JSON object fitting the schema (a locus, a reason and typed edits); edits that do not apply to the "
            "world model or checks come back as a fix_repair request with the reason"
        )


@dataclass(frozen=True)
class _Ask:
    """One judge request: its stage, subject and messages; the scenario (None: the sample's world model) and the
    check it is about."""

    stage: str
    subject: str
    messages: prompts.Messages
    sid: str | None = None
    check_id: str = ""


@dataclass
class _Evaluation:
    forward: QueryResult | None = None
    backward: list[QueryResult] | None = None
    witness: QueryResult | None = None


@dataclass
class SampleInput:
    """What the validation of one sample starts from."""

    sample_id: str
    excerpt: str
    tools: Sequence[ToolSpec]
    scenarios: Sequence[Scenario]
    checks: dict[str, list[CaseCheck]]
    """Scenario id → generated checks (empty: check generation failed; the scenario is rejected)."""
    world: WorldModelArtifact
    check_errors: dict[str, str] = field(default_factory=dict)
    locks: frozenset[str] = frozenset()
    """Parts a human reviewer edited (mantra_env.generators.review): automated repairs may not change them."""
    review_revision: int | None = None
    check_provenance: bool = False
    """Stamp each check a judge adds or replaces with the judge's stage and round (CaseCheck.written_by)."""


@dataclass(frozen=True)
class SolverJob:
    """One scenario's queries to solve (:func:`solve`): the solver's arguments but the tools, the forward result
    if known (from the memo), and whether to run the backward audits and the compliant witness."""

    arguments: dict[str, Any]
    forward: QueryResult | None
    backward: bool


@dataclass(frozen=True)
class Solved:
    """What :func:`solve` found: the forward result; the backward results and the compliant witness if asked for
    and the forward query is consistent; or, in ``error``, why the artifacts build no solver."""

    forward: QueryResult | None = None
    backward: list[QueryResult] | None = None
    witness: QueryResult | None = None
    error: str = ""


class SolveInterrupted(MantraError, RuntimeError):
    """A query ended because the run was being stopped: its sample stays unfinished (a resume solves it again)
    instead of recording, and memoising, an ``unknown`` that is no answer."""


def solve(tools: list[ToolSpec], job: SolverJob) -> Solved:
    """The queries of ``job`` (pure: a Ray worker may run it; :mod:`mantra_env.offload`).

    Raises:
        SolveInterrupted: if a query was interrupted rather than answered.
    """
    try:
        solver = CaseSolver(**job.arguments, tools=tools)
    except MantraError as error:
        return Solved(error=str(error))
    forward = job.forward or solver.forward(shortest=True)
    solved = Solved(forward)
    if job.backward and forward.status == "consistent":
        solved = Solved(forward, solver.backward_all(shortest=True), solver.compliant_witness())
    for result in [solved.forward, *(solved.backward or []), solved.witness]:
        if result is not None and result.status == "unknown" and result.reason.strip() in INTERRUPTED_REASONS:
            raise SolveInterrupted(f"the {result.query} query was interrupted ({result.reason}); resume the run")
    return solved


class _Loop:
    def __init__(
        self,
        client: LLMClient,
        data: SampleInput,
        settings: ValidationSettings,
        memo: SolverMemo | None = None,
        offload: Offload = in_thread,
    ) -> None:
        self.client = client
        self.offload = offload
        self.data = data
        self.settings = settings
        self.solver_memo = memo
        self.model: WorldModel = parse_model(data.world.model)
        self.locks: frozenset[str] = data.locks
        self.checks = {sid: tuple(checks) for sid, checks in data.checks.items() if checks}
        self.rejected: dict[str, str] = {
            s.id: data.check_errors.get(s.id, "no usable checks were generated")
            for s in data.scenarios
            if not data.checks.get(s.id)
        }
        self.scenarios = {s.id: s for s in data.scenarios}
        self.goals: dict[str, list[str]] = {sid: list(goal) for sid, goal in data.world.goals.items()}
        self.history: list[dict[str, JsonValue]] = []
        self.edited_initial: dict[str, JsonValue] = {}
        """Start values of variables the judges added (``add_var`` with ``initial``), over the world model's."""
        self._memo: dict[str, _Evaluation] = {}
        self.round = 0
        self.rounds_used = 0

    # --- solver ------------------------------------------------------------------------------------------------

    def active(self) -> list[str]:
        return [s.id for s in self.data.scenarios if s.id not in self.rejected]

    @property
    def initial(self) -> dict[str, JsonValue]:
        """The world model's initial values, with the start values judges gave the variables they added."""
        return {**self.data.world.initial, **self.edited_initial}

    def _solver_arguments(self, sid: str) -> dict[str, Any]:
        """What the solver of ``sid`` is built from: also the solver memo's key, so the two cannot drift apart."""
        return {
            "model": self._with_goal(sid),
            "checks": self.checks[sid],
            "bound": self.settings.z3_trace_bound,
            "initial": initial_state(self.initial, self.scenarios[sid]),
            "tools": self.data.tools,
            "timeout_ms": self.settings.timeout_ms,
            # only those on, so that memo keys of configs without the options stay what they were
            **self.settings.solver_modes,
        }

    def _solver(self, sid: str) -> CaseSolver:
        """The solver :func:`solve` builds for ``sid`` (from the same arguments)."""
        return CaseSolver(**self._solver_arguments(sid))

    def _key(self, sid: str) -> str:
        checks = [entry.model_dump(mode="json") for entry in self.checks[sid]]
        return json.dumps([format_model(self.model), checks, self.goals.get(sid, []), sid])

    async def evaluate(self, sid: str, backward: bool) -> _Evaluation:
        """The forward (and, if asked and forward is consistent, backward and witness) results, memoized on the
        artifacts so an unchanged scenario is never solved twice."""
        key = self._key(sid)
        found = self._memo.setdefault(key, _Evaluation())
        if found.forward is None or (backward and found.forward.status == "consistent" and found.backward is None):
            await self._solve(sid, found, backward)
        return found

    async def _solve(self, sid: str, into: _Evaluation, backward: bool) -> None:
        """Fill ``into`` from the solver memo, or else the solver (through the offload: :func:`solve`); each result
        is recorded in the history alike. The memo and the history are written here, never where it solved."""
        key = SolverMemo.key(self._solver_arguments(sid)) if self.solver_memo is not None else ""
        stored = self.solver_memo.load(key) if self.solver_memo is not None else None
        forward = into.forward or (stored.forward if stored is not None else None)
        wants_backward = backward and into.backward is None and (forward is None or forward.status == "consistent")
        has_backward = stored is not None and stored.backward is not None and stored.witness is not None
        solved: Solved | None = None
        if forward is None or (wants_backward and not has_backward):
            arguments = self._solver_arguments(sid)
            tools = arguments.pop("tools")
            job = SolverJob(arguments=arguments, forward=forward, backward=backward and into.backward is None)
            solved = await self.offload(solve, tools, job)
            if solved.error:  # the artifacts do not fit together: a judge's edit broke them
                failed = QueryResult(
                    query="forward", status="unknown", bound=self.settings.z3_trace_bound, reason=solved.error
                )
                into.forward, into.backward, into.witness = failed, None, None
                self._record(sid, failed)  # the reviewer reads why nothing was solved
                return
        if into.forward is None:
            into.forward = forward if forward is not None else solved.forward  # type: ignore[union-attr]
            assert into.forward is not None
            self._record(sid, into.forward)
        if backward and into.forward.status == "consistent" and into.backward is None:
            if solved is None:  # stored
                assert stored is not None and stored.backward is not None
                into.backward, into.witness = stored.backward, stored.witness
            else:
                into.backward, into.witness = solved.backward, solved.witness
            assert into.backward is not None and into.witness is not None
            for result in into.backward:
                self._record(sid, result)
            self._record(sid, into.witness)
        if solved is not None and self.solver_memo is not None:
            self.solver_memo.save(key, MemoEntry(forward=into.forward, backward=into.backward, witness=into.witness))

    def _record(self, sid: str, result: QueryResult) -> None:
        entry: dict[str, JsonValue] = {
            "round": self.round,
            "scenario": sid,
            "query": result.query,
            "status": result.status,
        }
        if result.check_id:
            entry["check"] = result.check_id
        if result.witness is not None:
            entry["witness"] = result.witness.render()
        if result.reason:
            entry["reason"] = result.reason
        self.history.append(entry)

    # --- repairs -----------------------------------------------------------------------------------------------

    def _with_goal(self, sid: str) -> WorldModel:
        """The shared model with ``sid``'s goal: what the solver and that scenario's judges see."""
        return with_goal(self.model, self.goals.get(sid, []))

    @functools.cached_property
    def _scope(self) -> str:
        """The judges' scope rules (config ``validation.judge_scope_rules``; empty without it)."""
        return prompts.judge_scope(self.data.tools) if self.settings.judge_scope_rules else ""

    def _edited(self, sid: str | None) -> str:
        """What a rejected repair's edits apply to, shown to its judge with ``validation.fix_repair_shows_model``:
        the world model (with the scenario's goal) and the scenario's checks; empty without the key."""
        if not self.settings.fix_repair_shows_model:
            return ""
        if sid is None:
            return format_model(self.model)
        return f"{format_model(self._with_goal(sid))}\n\nChecks:\n{self._checks_text(sid)}"

    def _checks_text(self, sid: str) -> str:
        return "\n".join(f"{entry.id}: {entry.text}" for entry in self.checks[sid])

    async def repair(self, asks: Sequence[_Ask]) -> None:
        """Ask the judges of ``asks`` together (built on the same artifacts, their answers are independent), then
        apply their edits in order, each re-validated on what the earlier ones left; rejected edits go back to
        their judge through ``fix_repair``. A judge of a scenario rejected or of a check removed by an earlier
        repair of the batch is not applied."""
        repairs = await gather_all(self.client.generate(a.stage, a.subject, a.messages, RepairCheck()) for a in asks)
        for ask, repair in zip(asks, repairs, strict=True):
            if ask.sid in self.rejected or (
                ask.check_id and ask.check_id not in {c.id for c in self.checks[ask.sid or ""]}
            ):
                continue
            await self._settle(ask, repair)

    async def _settle(self, ask: _Ask, repair: Repair) -> None:
        for attempt in range(self.client.config.llm.retry.max_repair_attempts + 1):
            error = self._apply(ask.stage if attempt == 0 else "fix_repair", ask.sid, repair)
            if error is None or attempt == self.client.config.llm.retry.max_repair_attempts:
                return
            repair = await self.client.generate(
                "fix_repair",
                f"{ask.subject}/fix{attempt + 1}",
                prompts.fix_edits(repair.model_dump_json(), error, self._edited(ask.sid)),
                RepairCheck(),
            )

    def _apply(self, stage: str, sid: str | None, repair: Repair) -> str | None:
        entry: dict[str, JsonValue] = {
            "round": self.round,
            "stage": stage,
            "scenario": sid,
            "locus": repair.locus,
            "reason": repair.reason,
            "edits": [edit.model_dump(mode="json") for edit in repair.edits],
        }
        if repair.locus == "scenario_invalid" and sid is not None:
            self.rejected[sid] = f"judge: {repair.reason or 'the scenario cannot be made consistent'}"
            self.history.append({**entry, "applied": True})
            return None
        edits = list(repair.edits)
        if sid is None:  # the batched judge repairs the shared world model only (no scenario's checks or goal)
            edits = [edit for edit in edits if not edit.op.endswith(("_check", "_goal"))]
        if not edits:
            self.history.append({**entry, "applied": False})
            return None
        model = self._with_goal(sid) if sid is not None else self.model
        try:
            draft = apply_edits(
                Draft(model, self.checks.get(sid, ()) if sid else (), self.locks, sid), edits, self.data.tools
            )
        except EditRejected as error:
            self.history.append({**entry, "applied": False, "error": str(error)})
            return str(error)
        self.model, self.locks = dataclasses.replace(draft.model, goal=()), draft.locks
        for edit in edits:  # a variable an edit adds, changes or removes loses the start value an edit gave it
            if isinstance(edit, AddVariable | ChangeVariable | RemoveVariable):
                self.edited_initial.pop(edit.name, None)
        self.edited_initial.update(draft.initial)
        if sid is not None:
            before = self.checks.get(sid, ())  # a list scan: checks hold dicts, so they do not hash
            self.checks[sid] = tuple(
                entry.model_copy(update={"written_by": f"{stage} round {self.round}"})
                if self.data.check_provenance and entry not in before
                else entry
                for entry in draft.checks
            )
            self.goals[sid] = [format_expr(expr) for expr in draft.model.goal]
        self.history.append({**entry, "applied": True})
        return None

    def _changed(self, before: int) -> bool:
        return any(entry.get("applied") is True for entry in self.history[before:] if "stage" in entry)

    # --- rounds ------------------------------------------------------------------------------------------------

    async def run(self) -> SampleValidation:
        for number in range(1, self.settings.n_rounds + 1):
            self.round = number
            mark = len(self.history)
            if not await self.forward_phase():
                await self.backward_phase()
            if not self._changed(mark):
                break
        self.rounds_used = self.round
        self.round += 1  # the final evaluation (its queries are usually memoized)
        outcomes = [await self.outcome(s.id) for s in self.data.scenarios]
        warnings = ignored_pins(self.model, {o.scenario_id: o.checks for o in outcomes if o.status != "rejected"})
        for lint in warnings:
            log.warning("validation of %s: %s", self.data.sample_id, lint.render())
        return SampleValidation(
            sample_id=self.data.sample_id,
            model=format_model(self.model),
            initial=self.initial,
            goals=self.goals,
            locks=sorted(self.locks),
            outcomes=outcomes,
            history=self.history,
            warnings=warnings,
            review_revision=self.data.review_revision,
        )

    async def forward_phase(self) -> bool:
        """Forward queries and repairs; True if there were conflicts (then the backward audit waits)."""
        results = {sid: (await self.evaluate(sid, backward=False)).forward for sid in self.active()}
        conflicts = {sid: r for sid, r in results.items() if r is not None and r.status == "conflict"}
        if not conflicts:
            return False
        listing = "\n\n".join(
            f"{scenario_text(self.scenarios[sid])}\nchecks:\n{self._checks_text(sid)}\n"
            f"witness:\n{r.witness.render() if r.witness else ''}"
            for sid, r in conflicts.items()
        )
        await self.repair(
            [
                _Ask(
                    "conflict_resolution",
                    f"{self.data.sample_id}/r{self.round}",
                    prompts.world_model_repair(self.data.excerpt, format_model(self.model), listing, self._scope),
                )
            ]
        )
        asks = []
        for sid in conflicts:
            result = (await self.evaluate(sid, backward=False)).forward
            if sid in self.rejected or result is None or result.status != "conflict" or result.witness is None:
                continue
            messages = prompts.check_resolution(
                self.data.excerpt,
                format_model(self._with_goal(sid)),
                scenario_text(self.scenarios[sid]),
                self._checks_text(sid),
                result.witness.render(),
                self._scope,
            )
            asks.append(_Ask("locus_reassessment", f"{sid}/r{self.round}", messages, sid))
        await self.repair(asks)
        return True

    async def backward_phase(self) -> None:
        """Backward audits of the scenarios without a forward conflict (their judges asked together), and their
        repairs."""
        asks = []
        for sid in self.active():
            evaluation = await self.evaluate(sid, backward=True)
            for result in evaluation.backward or []:
                if result.status != "conflict" or result.witness is None:
                    continue
                messages = prompts.backward_audit(
                    self.data.excerpt,
                    format_model(self._with_goal(sid)),
                    scenario_text(self.scenarios[sid]),
                    self._checks_text(sid),
                    str(result.check_id),
                    result.witness.render(),
                    self._scope,
                )
                subject = f"{sid}/{result.check_id}/r{self.round}"
                asks.append(_Ask("backward_audit", subject, messages, sid, str(result.check_id)))
        await self.repair(asks)

    async def outcome(self, sid: str) -> ScenarioOutcome:
        checks = list(self.checks.get(sid, ()))
        if sid in self.rejected:
            return ScenarioOutcome(scenario_id=sid, status="rejected", checks=checks, rounds=self.rounds_used,
                                   reason=self.rejected[sid])  # fmt: skip
        evaluation = await self.evaluate(sid, backward=True)
        forward = evaluation.forward.status if evaluation.forward else None
        backward_results = evaluation.backward or []
        backward = (
            "unknown" if any(r.status == "unknown" for r in backward_results)
            else "conflict" if any(r.status == "conflict" for r in backward_results)
            else "consistent" if evaluation.backward is not None
            else None
        )  # fmt: skip
        found = evaluation.witness is not None and evaluation.witness.status == "found"
        fields: dict[str, Any] = {
            "scenario_id": sid, "checks": checks, "forward": forward if forward != "found" else None,
            "backward": backward, "witness_found": found, "rounds": self.rounds_used,
        }  # fmt: skip
        if forward == "consistent" and backward == "consistent":
            if found:
                return ScenarioOutcome(status="validated", **fields)
            if evaluation.witness is not None and evaluation.witness.status == "infeasible":
                return ScenarioOutcome(status="rejected", reason="no compliant trace within the bound", **fields)
            # an undecided witness query proves nothing either way: a person decides, never a silent rejection
            undecided = evaluation.witness.reason if evaluation.witness is not None else "not asked"
            reason = f"the compliant-witness query did not finish ({undecided})"
            return ScenarioOutcome(status="awaiting_human", reason=reason, **fields)
        failed = evaluation.forward if forward == "unknown" else None
        why = f" ({failed.reason})" if failed is not None and failed.reason else ""
        reason = f"forward {forward}{why}, backward {backward} after {self.rounds_used} round(s)"
        return ScenarioOutcome(status="awaiting_human", reason=reason, **fields)


async def validate_sample(
    client: LLMClient,
    data: SampleInput,
    settings: ValidationSettings,
    memo: SolverMemo | None = None,
    offload: Offload = in_thread,
) -> SampleValidation:
    """Run the validation rounds of one sample; see the module docstring. With ``memo``, solver results are read
    from and written to it (:mod:`mantra_env.generators.solver_memo`): the same rounds, without solving any query twice.
    The solver runs through ``offload`` (default: a thread here; ``generate --ray``: a Ray worker)."""
    return await _Loop(client, data, settings, memo, offload).run()
