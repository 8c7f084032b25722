"""Stage ``mutation_audit`` (issue 33 item 1; config ``validation.mutation_audit``): after the validation rounds,
each validated case's mutants (:mod:`mantra_env.mutants`) are replayed and classified
(:mod:`mantra_env.generators.mutation`); where the verdict disagrees with the classification, a judge gets one request
per case listing the surviving mutants, and answers as the other judges do
(:class:`mantra_env.generators.artifacts.Repair`): edits to the checks (add or tighten a check so a wrong trace fails,
relax one so a right trace passes), edits to the world model (with the check, the step the manual requires), ``none``
(the verdict is right for them), or ``scenario_invalid``.

The edits apply to the case's own world model and checks (the answer check refuses edits that do not apply, as a
syntactic repair); the edited case is then validated again on its own (forward and every backward query
consistent, a compliant witness within its bound): only then does it replace the case. Every decision is kept in
the case's validation history (``stage: mutation_audit``), so the suite says which cases the audit changed.

Not a closed world: the classification leaves calls of tools the world model does not name to the judge, so an
inserted write the model knows nothing about is never wrong by default.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import JsonValue

from mantra_env.case import Case, CaseCheck, PlannedCall, Suite, SuiteManifest
from mantra_env.checks import Answer
from mantra_env.domains import Domain
from mantra_env.env import MantraEnv
from mantra_env.errors import MantraError
from mantra_env.generators import prompts
from mantra_env.generators.answer_gate import AnswerUnresolved, with_answer_facts
from mantra_env.generators.artifacts import Repair
from mantra_env.generators.exchange import AnswerPending
from mantra_env.generators.llm import AnswerCheck, GenerationError, LLMClient, RepairNeeded
from mantra_env.generators.mutation import MutantResult, audit_case
from mantra_env.oracle import OracleError, oracle_plan
from mantra_env.smt import CaseSolver
from mantra_env.tools import ToolSpec
from mantra_env.worldmodel import format_model, parse_model
from mantra_env.worldmodel.edits import Draft, EditRejected, apply_edits

log = logging.getLogger("mantra.generators.mutation_audit")
STAGE = "mutation_audit"


class MutationAuditCheck(AnswerCheck[Repair]):
    """Stage ``mutation_audit``: a repair that fits the schema and whose edits apply to the case's world model
    and checks (edits that do not apply come back with the reason, as a syntactic repair)."""

    model: str
    checks: list[CaseCheck]
    scenario: str
    tools: list[ToolSpec]

    def output(self) -> type[Repair]:
        return Repair

    def check(self, value: Repair) -> Repair:
        if value.locus in ("world_model", "checks"):
            if not value.edits:
                raise RepairNeeded(
                    f"locus {value.locus} needs the edits that fix the verdict; answer locus none (with a reason) "
                    "if the verdict is right for the traces listed"
                )
            try:
                apply_edits(self.draft(), value.edits, self.tools)
            except EditRejected as error:
                raise RepairNeeded(str(error)) from None
        return value

    def draft(self) -> Draft:
        return Draft(parse_model(self.model), tuple(self.checks), frozenset(), self.scenario)

    def statement(self) -> str:
        return (
            "one JSON object fitting the schema (a locus, a reason and typed edits); for locus world_model or checks "
            "the edits must apply to the case's world model and checks"
        )


@dataclass(frozen=True)
class AuditContext:
    """What the judge of one case reads besides the case: its sample's excerpt and its scenario, as the other
    judges see them, and the scenario id its requests are keyed by."""

    scenario_id: str
    excerpt: str
    scenario: str


def survivors_text(results: Sequence[MutantResult]) -> str:
    """The surviving mutants as the judge reads them: what changed, the calls, and who says what."""
    blocks = []
    for n, result in enumerate(results, start=1):
        calls = "\n".join(
            f"   {i}. {call.tool}({', '.join(f'{k}={_json(v)}' for k, v in call.arguments.items())})"
            for i, call in enumerate(result.mutant.calls)
        )
        verdict = "passes" if result.passed else "fails"
        blocks.append(
            f"{n}. [{result.mutant.kind}] {result.mutant.detail}\n{calls or '   (no calls)'}\n"
            f"   judged {result.classification}: {result.reason}; the verdict {verdict} it"
        )
    return "\n".join(blocks)


def _json(value: JsonValue) -> str:
    return json.dumps(value, ensure_ascii=False)


def revalidated(
    case: Case,
    tools: Sequence[ToolSpec],
    bound: int,
    timeout_ms: int,
    refuse_invented_ids: bool = False,
    witness_at_own_length: bool = False,
    array_relevancy: bool = False,
) -> str:
    """Why the case does not validate on its own ("" if it does): forward and every backward query consistent, a
    compliant witness within ``bound``, in the validation's own modes (the config's
    ``validation.refuse_invented_ids``, ``validation.witness_at_own_length`` and ``validation.array_relevancy``)."""
    try:
        solver = CaseSolver(
            case.world_model,
            case.checks,
            bound,
            case.scenario.valuation,
            tools,
            timeout_ms,
            refuse_invented_ids=refuse_invented_ids,
            witness_at_own_length=witness_at_own_length,
            array_relevancy=array_relevancy,
        )
        forward = solver.forward()
        if forward.status != "consistent":
            return f"forward {forward.status}"
        for result in solver.backward_all():
            if result.status != "consistent":
                return f"backward {result.status} on check {result.check_id}"
        witness = solver.compliant_witness()
    except MantraError as error:
        return f"does not encode: {error}"
    return "" if witness.status == "found" else f"compliant witness {witness.status}"


def _entry(**fields: JsonValue) -> dict[str, JsonValue]:
    return {"stage": STAGE, **fields}


async def audit_cases(
    client: LLMClient,
    cases: Sequence[Case],
    domain: Domain,
    tools: Sequence[ToolSpec],
    contexts: Mapping[str, AuditContext],
    bound: int,
    timeout_ms: int,
    refuse_invented_ids: bool = False,
    witness_at_own_length: bool = False,
    array_relevancy: bool = False,
    judge_scope_rules: bool = False,
) -> tuple[list[Case], dict[str, str]]:
    """The cases after the audit, and case id → reason of each case the judge declared invalid (with
    ``judge_scope_rules``, config ``validation.judge_scope_rules``, the judges get :func:`prompts.judge_scope`).

    Raises:
        AnswerPending: some judge has not answered yet (every request is written before this is raised).
    """
    planned: list[Case] = []
    for case in cases:
        try:
            plan = [PlannedCall.model_validate(a) for a in oracle_plan(case, tools)]
        except OracleError:  # no compliant plan: the export's screen says so; nothing to mutate
            plan = []
        planned.append(_with_facts(case.model_copy(update={"oracle_plan": plan or None}), domain))
    manifest = SuiteManifest(name="mutation-audit", domain=domain.name, case_count=len(planned))
    env = MantraEnv(Suite(manifest=manifest, cases=planned), domain)
    results = {case.id: audit_case(env, case, tools) for case in planned}
    scope = prompts.judge_scope(tools) if judge_scope_rules else ""
    pending: set[str] = set()

    async def one(original: Case, audited: Case) -> tuple[Case | None, str]:
        found = results[audited.id]
        survivors = [r for r in found if r.survives]
        summary = _entry(mutants=len(found), survivors=len(survivors))
        if not survivors or audited.id not in contexts:
            return _noted(original, summary), ""
        context = contexts[audited.id]
        checks_text = "\n".join(f"{entry.id}: {entry.text}" for entry in original.checks)
        messages = prompts.mutation_audit(
            context.excerpt,
            original.world_model,
            context.scenario,
            checks_text,
            survivors_text(survivors),
            scope,
        )
        check = MutationAuditCheck(
            model=original.world_model, checks=list(original.checks), scenario=context.scenario_id, tools=list(tools)
        )
        try:
            repair = await client.generate(STAGE, context.scenario_id, messages, check)
        except AnswerPending as waiting:
            pending.update(waiting.keys)
            return original, ""
        except GenerationError as error:
            log.warning("mutation audit of %s: %s", original.id, error)
            return _noted(original, {**summary, "outcome": "no usable answer"}), ""
        decided = {**summary, "locus": repair.locus, "reason": repair.reason}
        if repair.locus == "scenario_invalid":
            return None, repair.reason or "the mutation audit's judge declared the scenario invalid"
        if repair.locus == "none":
            return _noted(original, {**decided, "outcome": "verdict declared right"}), ""
        draft = apply_edits(check.draft(), repair.edits, tools)
        scenario = original.scenario
        if draft.initial:  # start values of variables the judge added join the case's internal valuation
            scenario = scenario.model_copy(update={"internal": {**scenario.internal, **draft.initial}})
        edited = original.model_copy(
            update={"world_model": format_model(draft.model), "checks": list(draft.checks), "scenario": scenario}
        )
        edits: list[JsonValue] = [edit.model_dump(mode="json") for edit in repair.edits]
        why = revalidated(
            edited,
            tools,
            original.validation.trace_bound or bound,
            timeout_ms,
            refuse_invented_ids,
            witness_at_own_length,
            array_relevancy,
        )
        if why:
            log.info("mutation audit of %s: edits dropped (%s)", original.id, why)
            return _noted(original, {**decided, "edits": edits, "outcome": f"edits dropped: {why}"}), ""
        return _noted(edited, {**decided, "edits": edits, "outcome": "applied and revalidated"}), ""

    answered = await asyncio.gather(*(one(original, audited) for original, audited in zip(cases, planned, strict=True)))
    if pending:
        raise AnswerPending(pending)
    kept = [case for case, _ in answered if case is not None]
    invalid = {case.id: why for case, (found, why) in zip(cases, answered, strict=True) if found is None}
    return kept, invalid


def _with_facts(case: Case, domain: Domain) -> Case:
    """``case`` as the env can grade it: its ANSWER checks with their facts, which the export resolves only after
    the audit (config ``checks.answer_checks``); one whose facts the database does not hold is left out of the
    audit's copy (the export refuses or repairs the case). Mutants change the calls, not the final answer, so the
    facts do not decide a mutant's verdict; the env refuses ANSWER checks without them."""
    if not any(isinstance(entry.check, Answer) for entry in case.checks):
        return case
    try:
        return with_answer_facts(case, domain)
    except AnswerUnresolved:
        return case.model_copy(update={"checks": [e for e in case.checks if not isinstance(e.check, Answer)]})


def _noted(case: Case, entry: dict[str, JsonValue]) -> Case:
    history = [*case.validation.history, entry]
    return case.model_copy(update={"validation": case.validation.model_copy(update={"history": history})})
