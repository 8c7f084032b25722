"""Stage ``export``: the validated scenarios become a suite (``suite.jsonl`` + ``manifest.json``).

A case is exported only if it was validated forward and backward and passes the screen
(:mod:`mantra_env.generators.screening`): the oracle agent, replaying its compliant SMT witness in the gymnasium
environment, passes every check with no tool error and no premature write, and no trivial agent passes it. The
manifest's ``stage_counts`` give the funnel (paper Table 2): ``generated``, ``forward_validated``,
``backward_validated``, ``final``, plus how many ended ``awaiting_human`` or ``rejected``, how many the oracle
does not pass cleanly (``replay_failed``) and how many a trivial agent passes (``trivially_passed``);
``screening`` counts the screened-out cases by reason. With config ``scenarios.outcome_mix`` the counts also give
``refusals`` (exported cases whose oracle plan writes nothing: the refusal share is ``refusals / final``) and
``intended_<outcome>`` (exported cases by the outcome their scenario writer intended). Each shipped case stores
the oracle's plan the screen replayed (``Case.oracle_plan``), so that nobody has to solve its canonical witness
again.

The world model's own initial values (its progress variables) are stored with the scenario's internal
variables, as in the hand-written suites: the case's valuation is the complete initial state it is solved from.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import get_args

from pydantic import JsonValue

from mantra_env.case import Case, PlannedCall, Provenance, SolverModes, Suite, SuiteManifest, ValidationRecord
from mantra_env.case import Scenario as CaseScenario
from mantra_env.domains import Domain
from mantra_env.env import MantraEnv
from mantra_env.generators.answer_gate import ANSWER_REASONS, answer_gate
from mantra_env.generators.artifacts import Outcome, SampleValidation, Scenario, ScenarioOutcome
from mantra_env.generators.screening import ORACLE_REASONS, screen_case
from mantra_env.generators.worldgen import case_internal, with_goal
from mantra_env.oracle import oracle_plan
from mantra_env.worldmodel import format_model, parse_model

GENERATOR_VERSION = "mantra-env generators 1"


def first_valid_round(history: Sequence[Mapping[str, JsonValue]], last_round: int) -> int | None:
    """The round after which a case was first valid: the first round after which its latest forward query was
    consistent and every backward query since was consistent; None when its history has no round numbers or it
    never was.

    Entries carry the round they were asked in; a memoized query is not asked again, so a round without entries
    keeps the state before it. The final re-check after the last round (``last_round``, the rounds the sample
    used) counts in that round, since it checks that round's repairs.
    """
    forward: str | None = None
    backward: list[str] = []
    rounds = sorted({number for entry in history if isinstance(number := entry.get("round"), int)})
    for number in rounds:
        for entry in history:
            if entry.get("round") != number or "query" not in entry:
                continue
            if entry["query"] == "forward":  # a new evaluation: earlier backward results were for other artifacts
                forward, backward = str(entry.get("status")), []
            elif entry["query"] == "backward":
                backward.append(str(entry.get("status")))
        if forward == "consistent" and backward and all(status == "consistent" for status in backward):
            return min(number, last_round)
    return None


def build_case(
    suite_name: str,
    domain: str,
    scenario: Scenario,
    outcome: ScenarioOutcome,
    validation: SampleValidation,
    chunk_ids: Sequence[str],
    relevant_tools: Sequence[str],
    bound: int,
    provenance: Provenance,
    modes: SolverModes | None = None,
) -> Case:
    """The case of one validated scenario (``outcome``: its outcome in ``validation``; ``modes``: the solver modes
    it was validated in, which its record keeps for re-validation and the oracle)."""
    draft = scenario.draft
    history = [entry for entry in validation.history if entry.get("scenario") in (scenario.id, None)]
    model = with_goal(parse_model(validation.model), validation.goals.get(scenario.id, []))
    return Case(
        id=f"{suite_name}-{scenario.id}",
        domain=domain,
        scenario=CaseScenario(
            prompt=draft.prompt, external=draft.external, internal=case_internal(validation.initial, scenario)
        ),
        checks=outcome.checks,
        world_model=format_model(model),
        sample_chunk_ids=list(chunk_ids),
        relevant_tools=list(relevant_tools),
        database_patch=[op.model_dump(mode="json") for op in draft.database_patch] or None,
        argument_bindings=draft.argument_bindings,
        validation=ValidationRecord(
            status="validated",
            trace_bound=bound,
            forward=outcome.forward,
            backward=outcome.backward,
            rounds=outcome.rounds,
            first_valid_round=first_valid_round(history, max(outcome.rounds, 1)),
            history=history,
            locks=list(validation.locks),
            reviewer=outcome.reviewer,
            **(modes or SolverModes()),
        ),
        provenance=provenance,
    )


def with_oracle_plans(cases: Sequence[Case], domain: Domain) -> list[Case]:
    """``cases``, each with the oracle's plan on ``domain``'s tools stored in it (``Case.oracle_plan``).

    Raises:
        OracleError: a case has no complete compliant plan (the screen keeps such cases out of a suite).
    """
    tools = domain.tool_specs()
    return [
        case.model_copy(update={"oracle_plan": [PlannedCall.model_validate(a) for a in oracle_plan(case, tools)]})
        for case in cases
    ]


def outcome_counts(cases: Sequence[Case], domain: Domain, intended: Mapping[str, Outcome | None]) -> dict[str, int]:
    """``refusals``: the cases whose oracle plan makes no write; ``intended_<outcome>``: the cases by the outcome
    their scenario writer intended (a case without one is not counted there)."""
    writes = {spec.name for spec in domain.tool_specs() if spec.kind == "write"}
    tools = domain.tool_specs()
    counts = {"refusals": 0, **{f"intended_{outcome}": 0 for outcome in get_args(Outcome)}}
    for case in cases:
        plan = case.oracle_plan or [PlannedCall.model_validate(call) for call in oracle_plan(case, tools)]
        counts["refusals"] += not any(call.tool in writes for call in plan)
        if (outcome := intended.get(case.id)) is not None:
            counts[f"intended_{outcome}"] += 1
    return counts


UNWRITTEN_ACTION = "action_without_write"


def unwritten_actions(
    cases: Sequence[Case], domain: Domain, intended: Mapping[str, Outcome | None]
) -> dict[str, tuple[str, str]]:
    """The cases intended as actions whose oracle plan (stored) makes no write, each with its reason and detail."""
    writes = {spec.name for spec in domain.tool_specs() if spec.kind == "write"}
    return {
        case.id: (UNWRITTEN_ACTION, "the scenario asks for an action, but the oracle's plan makes no write")
        for case in cases
        if intended.get(case.id) == "action" and not any(call.tool in writes for call in case.oracle_plan or ())
    }


def export_suite(
    name: str,
    domain: Domain,
    version: int,
    description: str,
    candidates: Sequence[Case],
    validations: Mapping[str, SampleValidation],
    store_plans: bool = True,
    information: Collection[str] | None = None,
    intended: Mapping[str, Outcome | None] | None = None,
    screen_unwritten_actions: bool = False,
) -> tuple[Suite, dict[str, str]]:
    """The suite of the candidates that pass the screen (:mod:`mantra_env.generators.screening`), with the funnel counts
    and the screened-out cases by reason; and case id → ``reason: detail`` of every case screened out. With
    ``store_plans`` each case carries the oracle's plan (``Case.oracle_plan``). ``information`` (config
    ``checks.answer_checks``; None: off) names the cases whose request asks for information: the ANSWER gate
    (:mod:`mantra_env.generators.answer_gate`) resolves every ANSWER check's facts and refuses such a case without one.
    ``intended`` (config ``scenarios.outcome_mix``; None: off) gives each case's intended outcome: the counts then
    report the refusals and the intended outcomes of the exported cases. ``screen_unwritten_actions`` (config
    ``export.screen_unwritten_actions``, with ``intended``) screens out the cases intended as actions whose oracle
    makes no write (:func:`unwritten_actions`; counted as ``intent_refused``)."""
    outcomes = [o for v in validations.values() for o in v.outcomes]
    refused: dict[str, tuple[str, str]] = {}
    if information is not None:
        candidates, refused = answer_gate(candidates, domain, information)
    draft_suite = Suite(
        manifest=SuiteManifest(name=name, domain=domain.name, version=version, case_count=len(candidates)),
        cases=list(candidates),
    )
    env = MantraEnv(draft_suite, domain)
    screened = {case.id: found for case in candidates if (found := screen_case(env, case.id)) is not None}
    screened.update(refused)
    if screen_unwritten_actions and intended is not None:
        kept = [case for case in candidates if case.id not in screened]
        screened.update(unwritten_actions(with_oracle_plans(kept, domain), domain, intended))
    reasons = Counter(reason for reason, _ in screened.values())
    cases = [case for case in candidates if case.id not in screened]
    if store_plans:  # the plans the screen just replayed (cached): users and tests need not solve them again
        cases = with_oracle_plans(cases, domain)
    counts = {
        "generated": len(outcomes),
        "forward_validated": sum(o.forward == "consistent" for o in outcomes),
        "backward_validated": sum(o.forward == "consistent" and o.backward == "consistent" for o in outcomes),
        "final": len(cases),
        "human_validated": sum(case.validation.reviewer is not None for case in cases),
        "awaiting_human": sum(o.status == "awaiting_human" for o in outcomes),
        "rejected": sum(o.status == "rejected" for o in outcomes),
        "replay_failed": sum(reasons[reason] for reason in ORACLE_REASONS),
        "trivially_passed": sum(
            n
            for reason, n in reasons.items()
            if reason not in ORACLE_REASONS and reason not in ANSWER_REASONS and reason != UNWRITTEN_ACTION
        ),
    }
    if screen_unwritten_actions and intended is not None:  # only with the screen on: others keep their bytes
        counts["intent_refused"] = reasons[UNWRITTEN_ACTION]
    if information is not None:  # only with the gate on: a suite exported without it keeps its manifest bytes
        counts["answer_refused"] = sum(reasons[reason] for reason in ANSWER_REASONS)
    if intended is not None:  # only with the outcome mix on, for the same reason
        counts.update(outcome_counts(cases, domain, intended))
    manifest = SuiteManifest(
        name=name,
        domain=domain.name,
        version=version,
        description=description or f"Generated by the MANTRA pipeline from the {domain.name} manual.",
        case_count=len(cases),
        stage_counts=counts,
        screening=dict(sorted(reasons.items())),
    )
    why = {case_id: f"{reason}: {detail}" for case_id, (reason, detail) in screened.items()}
    return Suite(manifest=manifest, cases=cases), why
