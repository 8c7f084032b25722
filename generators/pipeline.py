"""The generation pipeline: manual + tools → document graph → samples → relevant tools → scenarios → checks and,
independently, world models → cross-validation rounds → exported suite.

Stages run in order (:data:`mantra_env.generators.rundir.STAGE_ORDER`); each writes its artifacts to the run directory,
one per sample as soon as the sample finishes, and a ``DONE`` marker at the end. A rerun on the same directory skips
finished stages and finished samples, and every LLM request it repeats is a cache hit, so an interrupted run
resumes where it stopped and ends with the same result. Samples of a stage run concurrently
(``sampling.max_parallel_samples``), and so do the checks of a sample's scenarios and its world model.

A request whose answer is not written yet (an ``exchange/`` model, :mod:`mantra_env.generators.exchange`) stops only its
sample (or, in the checks, its scenario): the other samples go on through every stage they can, so one
invocation writes every request that can be asked, and a stage is marked done only when no sample waits in it.
The run then stops with the pending keys (``PipelineResult.pending``), or with ``wait`` polls the exchange
folders and goes on as answers arrive.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from mantra_env.case import Case, Provenance, Suite, write_suite
from mantra_env.domains import Domain, load_domain
from mantra_env.errors import MantraError
from mantra_env.generators.answer_repair import STAGE as STAGE_ANSWER_REPAIR
from mantra_env.generators.answer_repair import needs_repair, repair_answers
from mantra_env.generators.artifacts import (  # the stage files' records, re-exported: they were defined here
    ChecksArtifact,
    SamplesArtifact,
    SampleValidation,
    Scenario,
    ScenarioChecks,
    ScenarioSet,
    ToolRelevance,
    WorldModelOrFailure,
)
from mantra_env.generators.checkgen import generate_checks
from mantra_env.generators.config import STAGES, GenerationConfig, domain_tools
from mantra_env.generators.document import DocumentGraph, chunk_document
from mantra_env.generators.exchange import EXCHANGE_PROVIDER, AnswerPending, ExchangeDir, gather_all
from mantra_env.generators.export import GENERATOR_VERSION, build_case, export_suite
from mantra_env.generators.graph_plot import plot_graph
from mantra_env.generators.llm import GenerationError, LLMClient, StageUsage, usage_report
from mantra_env.generators.mutation_audit import AuditContext, audit_cases
from mantra_env.generators.oracle_arguments import fill_arguments
from mantra_env.generators.references import find_references
from mantra_env.generators.relevance import relevant_tools
from mantra_env.generators.replay import REPLAY_PROVIDER
from mantra_env.generators.review.state import load_review, reviewed_validation
from mantra_env.generators.rundir import STAGE_ORDER, RunDir, write_text
from mantra_env.generators.sampling import Sample, draw_samples
from mantra_env.generators.scenarios import generate_scenarios, scenario_text
from mantra_env.generators.solver_memo import SolverMemo
from mantra_env.generators.validation import SampleInput, validate_sample
from mantra_env.generators.worldgen import generate_world_model
from mantra_env.lints import free_text_pins
from mantra_env.offload import Offload, in_thread
from mantra_env.oracle import OracleError, argument_gaps
from mantra_env.tools import ToolSpec

log = logging.getLogger("mantra.generators")
M = TypeVar("M", bound=BaseModel)
RECORDED = "recorded.jsonl"
"""Where an exchange run records every answer (replay format) unless ``llm.replay.record_to`` is set."""
RECORDED_MODEL = "recorded"
"""The model an exported case names for a stage answered by key (``replay/`` or ``exchange/``): the same for a run
and its replay, so that a regeneration from the recorded answers exports the same bytes."""


class PipelineError(MantraError, RuntimeError):
    """The pipeline cannot go on (a stage failed for a reason no retry fixes)."""


@dataclass
class PipelineResult:
    run_dir: Path
    suite: Suite | None
    suite_dir: Path | None
    stages_run: list[str]
    usage: dict[str, StageUsage] = field(default_factory=dict)
    pending: list[str] = field(default_factory=list)
    """Keys of the requests waiting for an exchange answer (then ``suite`` is None)."""
    waiting_in: list[Path] = field(default_factory=list)
    """The exchange folders those requests are in."""


@dataclass
class Pipeline:
    config: GenerationConfig
    run: RunDir
    client: LLMClient
    domain: Domain
    tools: list[ToolSpec]
    stop_after: str | None = None
    on_stage: Callable[[str], None] | None = None
    on_progress: Callable[[str, int, int], None] | None = None
    """``(stage, done, total)`` each time a stage finishes a unit of its work (a sample; the graph: a chunk)."""
    stages_run: list[str] = field(default_factory=list)
    previous_usage: list[dict[str, StageUsage]] | None = None
    pending: set[str] = field(default_factory=set)
    governing: dict[str, list[str]] = field(default_factory=dict)
    """Sample id → the chunks outside it whose rules govern its relevant tools (config
    ``references.governing_rules``; set by the relevance stage, shown in the writers' excerpts)."""
    offload: Offload = in_thread
    """Where the validation stage's solver queries run (``generate --ray``: Ray's workers)."""

    @property
    def solver_memo(self) -> SolverMemo:
        return SolverMemo(self.run.root / "solver_memo")

    # --- helpers -----------------------------------------------------------------------------------------------

    def tools_named(self, names: Sequence[str]) -> list[ToolSpec]:
        return [spec for spec in self.tools if spec.name in names]

    async def per_sample(
        self, stage: str, samples: Sequence[Sample], kind: type[M], make: Callable[[Sample], Awaitable[M]]
    ) -> dict[str, M]:
        """Each sample's artifact of ``stage``: loaded if written, else made (concurrently) and written at once. A
        sample whose requests are pending has no entry (its keys join ``self.pending``); the others go on."""
        limit = asyncio.Semaphore(self.config.sampling.max_parallel_samples)
        results: dict[str, M] = {}

        async def one(sample: Sample) -> None:
            found = self.run.load(stage, sample.id, kind)
            if found is None:
                try:
                    async with limit:
                        found = await make(sample)
                except AnswerPending as pending:
                    self.pending.update(pending.keys)
                    return
                self.run.save(stage, sample.id, found)
                log.info("%s: sample %s done (%d/%d)", stage, sample.id, len(results) + 1, len(samples))
            results[sample.id] = found
            self.progress(stage, len(results), len(samples))

        await asyncio.gather(*(one(sample) for sample in samples))
        return {sample.id: results[sample.id] for sample in samples if sample.id in results}

    def progress(self, stage: str, done: int, total: int) -> None:
        if self.on_progress is not None and not self.run.done(stage):  # a finished stage is only loaded
            self.on_progress(stage, done, total)

    def finish(self, stage: str, complete: bool = True) -> bool:
        """Mark ``stage`` done if ``complete`` (every sample has its artifact) and this run computed it; True if
        the pipeline should stop here."""
        if complete and not self.run.done(stage):
            self.run.mark_done(stage)
            log.info("stage %s done", stage)
            self.stages_run.append(stage)
            self.write_usage()
            if self.on_stage is not None:
                self.on_stage(stage)
        return stage == self.stop_after

    def write_usage(self) -> None:
        """``usage.json``: this invocation's requests, cache hits, tokens and cost per stage, after those of the
        earlier invocations on the same run directory (a resumed run adds to them), and the totals."""
        if self.previous_usage is None:
            try:
                recorded = json.loads((self.run.root / "usage.json").read_text(encoding="utf-8"))["invocations"]
                self.previous_usage = [
                    {stage: StageUsage(**numbers) for stage, numbers in invocation.items()} for invocation in recorded
                ]
            except (OSError, ValueError, KeyError, TypeError):
                self.previous_usage = []
        invocations = [*self.previous_usage, self.client.usage]
        total: dict[str, StageUsage] = {}
        for invocation in invocations:
            for stage, usage in invocation.items():
                total.setdefault(stage, StageUsage()).add(usage)
        self.run.write_json(
            "usage.json",
            {"total": usage_report(total), "invocations": [usage_report(invocation) for invocation in invocations]},
        )

    def excerpt(self, graph: DocumentGraph, sample: Sample) -> str:
        return graph.excerpt(sample.node_ids, self.governing.get(sample.id, ()))

    # --- stages ------------------------------------------------------------------------------------------------

    async def graph(self) -> DocumentGraph | None:
        """The document graph (None while reference requests are pending: samples need the whole graph)."""
        path = self.run.artifact("graph", "graph")
        if self.run.done("graph"):
            return DocumentGraph.model_validate_json(path.read_text(encoding="utf-8"))
        chunked = chunk_manual(self.config)
        try:
            graph = await find_references(
                self.client,
                chunked,
                self.config.sampling.max_parallel_samples,
                lambda done, total: self.progress("graph", done, total),
                self.tools if self.config.references.governing_rules else None,
            )
        except AnswerPending as pending:
            self.pending.update(pending.keys)
            return None
        self.run.save("graph", "graph", graph)
        write_text(self.run.stage_dir("graph") / "toc.txt", graph.toc() + "\n")
        plot_graph(graph, self.run.stage_dir("graph") / "graph")
        return graph

    def samples(self, graph: DocumentGraph) -> list[Sample]:
        found = self.run.load("samples", "samples", SamplesArtifact)
        if found is not None and self.run.done("samples"):
            return found.samples
        samples, coverage = draw_samples(graph, self.config.sampling)
        self.run.save(
            "samples", "samples", SamplesArtifact(samples=samples, coverage=coverage, stats=coverage.stats(graph))
        )
        plot_graph(graph, self.run.stage_dir("samples") / "coverage", coverage)
        return samples

    async def relevance(self, graph: DocumentGraph, samples: list[Sample]) -> dict[str, ToolRelevance]:
        async def make(sample: Sample) -> ToolRelevance:
            try:
                found = await relevant_tools(self.client, sample.id, self.excerpt(graph, sample), self.tools)
                if self.config.references.governing_rules:
                    found = await self.with_governing_tools(graph, sample, found)
                return found
            except GenerationError as error:  # the sample goes no further; the others do
                log.warning("relevant tools of %s: %s", sample.id, error)
                return ToolRelevance(tools=[], reason=f"failed: {error}")

        found = await self.per_sample("relevance", samples, ToolRelevance, make)
        self.governing.update({sid: relevance.governing for sid, relevance in found.items() if relevance.governing})
        return found

    async def with_governing_tools(self, graph: DocumentGraph, sample: Sample, found: ToolRelevance) -> ToolRelevance:
        """``found`` plus the chunks whose rules govern its tools and the tools those rules need: relevance asks
        once more (``<sample>/governing``) on the excerpt with those chunks (config
        ``references.governing_rules``)."""
        governing = graph.governing(sample.node_ids, found.tools)
        if not governing:
            return found
        again = await relevant_tools(
            self.client, f"{sample.id}/governing", graph.excerpt(sample.node_ids, governing), self.tools
        )
        tools = [spec.name for spec in self.tools if spec.name in {*found.tools, *again.tools}]
        return ToolRelevance(tools=tools, reason=found.reason, governing=governing)

    async def scenarios(
        self, graph: DocumentGraph, samples: list[Sample], relevance: dict[str, ToolRelevance]
    ) -> dict[str, ScenarioSet]:
        bindings = ""
        if self.config.env_bindings.path is not None:
            bindings = self.config.env_bindings.path.read_text(encoding="utf-8")

        async def make(sample: Sample) -> ScenarioSet:
            if not relevance[sample.id].tools:
                return ScenarioSet(sample_id=sample.id, scenarios=[], error="no relevant tools")
            try:
                made = await generate_scenarios(
                    self.client, sample.id, self.excerpt(graph, sample), self.tools_named(relevance[sample.id].tools),
                    self.domain, self.config.sampling.scenarios_per_sample, bindings,
                    seed=self.config.sampling.seed, database_chars=self.config.sampling.database_chars,
                    outcome_mix=self.config.scenarios.outcome_mix,
                    anchor_by_fields=self.config.scenarios.anchor_by_fields,
                )  # fmt: skip
            except GenerationError as error:
                log.warning("scenarios of %s: %s", sample.id, error)
                return ScenarioSet(sample_id=sample.id, scenarios=[], error=str(error))
            return ScenarioSet(sample_id=sample.id, scenarios=made)

        ready = [sample for sample in samples if sample.id in relevance]
        return await self.per_sample("scenarios", ready, ScenarioSet, make)

    async def checks(
        self,
        graph: DocumentGraph,
        samples: list[Sample],
        relevance: dict[str, ToolRelevance],
        scenarios: dict[str, ScenarioSet],
    ) -> dict[str, ChecksArtifact]:
        async def make(sample: Sample) -> ChecksArtifact:
            async def one(scenario: Scenario) -> ScenarioChecks:
                try:
                    tools = self.tools_named(relevance[sample.id].tools)
                    made, asks = await generate_checks(
                        self.client,
                        scenario,
                        self.excerpt(graph, sample),
                        tools,
                        self.config.checks.answer_checks,
                        self.config.checks.refuse_unfit_pins,
                    )
                except GenerationError as error:
                    log.warning("checks of %s: %s", scenario.id, error)
                    return ScenarioChecks(scenario_id=scenario.id, error=str(error))
                warnings = []
                if self.config.checks.lint_free_text_pins:
                    warnings = free_text_pins(scenario.id, made, self.tools)
                    for lint in warnings:
                        log.warning("checks of %s: %s", scenario.id, lint.render())
                return ScenarioChecks(
                    scenario_id=scenario.id, checks=made, asks_for_information=asks, warnings=warnings
                )

            entries = await gather_all(one(scenario) for scenario in scenarios[sample.id].scenarios)
            return ChecksArtifact(sample_id=sample.id, scenarios=entries)

        ready = [sample for sample in samples if sample.id in scenarios]
        return await self.per_sample("checks", ready, ChecksArtifact, make)

    async def world_models(
        self,
        graph: DocumentGraph,
        samples: list[Sample],
        relevance: dict[str, ToolRelevance],
        scenarios: dict[str, ScenarioSet],
    ) -> dict[str, WorldModelOrFailure]:
        async def make(sample: Sample) -> WorldModelOrFailure:
            if not scenarios[sample.id].scenarios:
                return WorldModelOrFailure(error="the sample has no scenarios")
            try:
                validation = self.config.validation
                made = await generate_world_model(
                    self.client, sample.id, self.excerpt(graph, sample), self.tools_named(relevance[sample.id].tools),
                    scenarios[sample.id].scenarios,
                    validation.z3_trace_bound if validation.encode_world_models else None,
                )  # fmt: skip
            except GenerationError as error:
                log.warning("world model of %s: %s", sample.id, error)
                return WorldModelOrFailure(error=str(error))
            return WorldModelOrFailure(world=made)

        ready = [sample for sample in samples if sample.id in scenarios]
        return await self.per_sample("world_models", ready, WorldModelOrFailure, make)

    async def validation(
        self,
        graph: DocumentGraph,
        samples: list[Sample],
        scenarios: dict[str, ScenarioSet],
        checks: dict[str, ChecksArtifact],
        worlds: dict[str, WorldModelOrFailure],
    ) -> dict[str, SampleValidation | None]:
        ready = [s for s in samples if s.id in checks and s.id in worlds]
        usable = [s for s in ready if worlds[s.id].world is not None and scenarios[s.id].scenarios]

        async def make(sample: Sample) -> SampleValidation:
            world = worlds[sample.id].world
            assert world is not None
            by_scenario = {entry.scenario_id: entry for entry in checks[sample.id].scenarios}
            generated = {sid: entry.checks for sid, entry in by_scenario.items()}
            provenance = self.config.export.check_provenance
            if provenance:
                generated = {
                    sid: [c.model_copy(update={"written_by": "checks"}) for c in made]
                    for sid, made in generated.items()
                }
            review = load_review(self.run.root, sample.id)
            if review is not None:  # a reviewer's artifacts, with the parts they edited locked
                world = world.model_copy(
                    update={"model": review.model, "goals": review.goals, "initial": review.initial}
                )
                generated = {sid: review.checks.get(sid, found) for sid, found in generated.items()}
            data = SampleInput(
                sample_id=sample.id,
                excerpt=self.excerpt(graph, sample),
                tools=self.tools,
                scenarios=scenarios[sample.id].scenarios,
                checks=generated,
                world=world,
                check_errors={sid: entry.error for sid, entry in by_scenario.items() if entry.error},
                locks=frozenset(review.locks) if review else frozenset(),
                review_revision=review.revision if review else None,
                check_provenance=provenance,
            )
            return await validate_sample(self.client, data, self.config.validation, self.solver_memo, self.offload)

        done = await self.per_sample("validation", usable, SampleValidation, make)
        waiting = {s.id for s in usable} - set(done)
        return {s.id: done.get(s.id) for s in ready if s.id not in waiting}

    async def export(
        self,
        samples: list[Sample],
        relevance: dict[str, ToolRelevance],
        scenarios: dict[str, ScenarioSet],
        validations: dict[str, SampleValidation | None],
        checks: dict[str, ChecksArtifact] | None = None,
        excerpts: Mapping[str, str] | None = None,
    ) -> tuple[Suite, Path] | None:
        """The screened suite, written to the run directory; None while oracle arguments (or, with
        ``validation.mutation_audit``, the audit's judges: ``excerpts`` by sample id) are pending. With config
        ``checks.answer_checks`` the ANSWER gate runs on the cases whose check writer said they ask for
        information (``checks``)."""
        provenance = Provenance(
            source="generated",
            generator_version=GENERATOR_VERSION,
            models={stage: _exported_model(self.client.resolve(stage).model) for stage in self.exported_stages},
            run_id=None,  # the run directory's name (a timestamp) would differ in a regeneration
        )
        candidates = []
        validations = {
            sid: reviewed_validation(found, load_review(self.run.root, sid)) if found is not None else None
            for sid, found in validations.items()
        }
        for sample in samples:
            validation = validations.get(sample.id)
            if validation is None:
                continue
            for scenario in scenarios[sample.id].scenarios:
                outcome = next((o for o in validation.outcomes if o.scenario_id == scenario.id), None)
                if outcome is not None and outcome.status == "validated":
                    candidates.append(
                        build_case(
                            self.config.export.suite_name,
                            self.domain.name,
                            scenario,
                            outcome,
                            validation,
                            sample.node_ids,
                            relevance[sample.id].tools,
                            self.config.validation.z3_trace_bound,
                            provenance,
                            self.config.validation.solver_modes,
                        )
                    )
        completed = await self.complete_oracle_arguments(candidates)
        if completed is None:
            return None
        information = None
        if self.config.checks.answer_checks:
            information = {
                f"{self.config.export.suite_name}-{entry.scenario_id}"
                for artifact in (checks or {}).values()
                for entry in artifact.scenarios
                if entry.asks_for_information
            }
        intended = None
        if self.config.scenarios.outcome_mix is not None:
            intended = {
                f"{self.config.export.suite_name}-{scenario.id}": scenario.outcome
                for found in scenarios.values()
                for scenario in found.scenarios
            }
        if information is not None and self.config.checks.repair_answer_checks:
            repaired = await self.repair_answer_checks(completed, information)
            if repaired is None:
                return None
            completed = repaired
        invalid: dict[str, str] = {}
        if self.config.validation.mutation_audit:
            audited = await self.mutation_audit(completed, samples, scenarios, excerpts or {})
            if audited is None:
                return None
            completed, invalid = audited
        suite, failures = export_suite(
            self.config.export.suite_name, self.domain, self.config.export.version, self.config.export.description,
            completed, {sid: v for sid, v in validations.items() if v is not None}, self.config.export.oracle_plans,
            information, intended, self.config.export.screen_unwritten_actions,
        )  # fmt: skip
        if intended is not None and suite.cases:
            refusals = suite.manifest.stage_counts["refusals"]
            log.info(
                "export: refusal share %d of %d cases (%.0f %%)",
                refusals,
                len(suite.cases),
                100 * refusals / len(suite.cases),
            )
        folder = self.run.stage_dir("export") / "suite"
        write_suite(suite, folder)
        self.run.write_json("export/screened_out.json", {**failures, **invalid})
        return suite, folder

    @property
    def exported_stages(self) -> tuple[str, ...]:
        """The stages a case's provenance names: a gated stage only when it is on, so that a suite exported
        without it keeps its bytes."""
        gated = {
            "governing_rules": self.config.references.governing_rules,
            "mutation_audit": self.config.validation.mutation_audit,
            "answer_repair": self.config.checks.answer_checks and self.config.checks.repair_answer_checks,
        }
        return tuple(stage for stage in STAGES if gated.get(stage, True))

    async def mutation_audit(
        self,
        cases: list[Case],
        samples: list[Sample],
        scenarios: dict[str, ScenarioSet],
        excerpts: Mapping[str, str],
    ) -> tuple[list[Case], dict[str, str]] | None:
        """``cases`` after the mutation audit (:mod:`mantra_env.generators.mutation_audit`) and the ones its judges
        declared invalid (case id → ``scenario_invalid: reason``); None while some answer is pending."""
        contexts = {
            f"{self.config.export.suite_name}-{scenario.id}": AuditContext(
                scenario.id, excerpts.get(sample.id, ""), scenario_text(scenario)
            )
            for sample in samples
            if sample.id in scenarios
            for scenario in scenarios[sample.id].scenarios
        }
        settings = self.config.validation
        try:
            kept, invalid = await audit_cases(
                self.client,
                cases,
                self.domain,
                self.tools,
                contexts,
                settings.z3_trace_bound,
                settings.timeout_ms,
                settings.refuse_invented_ids,
                settings.witness_at_own_length,
                settings.array_relevancy,
                settings.judge_scope_rules,
            )
        except AnswerPending as pending:
            self.pending.update(pending.keys)
            return None
        return kept, {case_id: f"scenario_invalid: {why}" for case_id, why in invalid.items()}

    async def repair_answer_checks(self, cases: list[Case], information: Collection[str]) -> list[Case] | None:
        """``cases`` with the ANSWER checks that do not resolve (or are missing from an information request)
        written again by the checks writer, who sees the reads' results (stage ``answer_repair``, config
        ``checks.repair_answer_checks``); None while some answer is pending."""
        written_by = STAGE_ANSWER_REPAIR if self.config.export.check_provenance else None

        async def one(case: Case) -> Case | None:
            settings = self.config.checks
            problems = needs_repair(
                case, self.domain, case.id in information, settings.refuse_echoed_facts, settings.answer_on_refusals
            )
            if not problems:
                return case
            scenario_id = case.id.removeprefix(f"{self.config.export.suite_name}-")
            try:
                return await repair_answers(
                    self.client, case, scenario_id, self.domain, problems, written_by, settings.refuse_echoed_facts
                )
            except AnswerPending as pending:
                self.pending.update(pending.keys)
            except GenerationError as error:  # unusable answers: the export refuses the case, as before
                log.warning("answer checks of %s: %s", case.id, error)
                return case
            return None

        repaired = await asyncio.gather(*(one(case) for case in cases))
        return None if any(case is None for case in repaired) else [case for case in repaired if case is not None]

    async def complete_oracle_arguments(self, cases: list[Case]) -> list[Case] | None:
        """``cases`` with the arguments their oracle lacks asked of the scenario writer (stage
        ``oracle_arguments``); None while some answer is pending (its key joins ``self.pending``)."""

        async def one(case: Case) -> Case | None:
            try:
                missing = argument_gaps(case, self.tools)
            except OracleError:  # no compliant trace: the screen says so
                return case
            if missing is None:
                return case
            try:
                scenario_id = case.id.removeprefix(f"{self.config.export.suite_name}-")
                return await fill_arguments(self.client, case, scenario_id, missing, self.tools)
            except AnswerPending as pending:
                self.pending.update(pending.keys)
            except GenerationError as error:  # unusable answers: the case is screened out as it was
                log.warning("oracle arguments of %s: %s", case.id, error)
                return case
            return None

        filled = await asyncio.gather(*(one(case) for case in cases))
        return None if any(case is None for case in filled) else [case for case in filled if case is not None]

    async def run_all(self) -> PipelineResult:
        """Advance every sample as far as its answers allow (see the module docstring)."""
        self.pending.clear()
        result = PipelineResult(self.run.root, None, None, self.stages_run)
        try:
            return await self._advance(result)
        finally:
            result.pending = sorted(self.pending)

    async def _advance(self, result: PipelineResult) -> PipelineResult:
        graph = await self.graph()
        if graph is None or self.finish("graph"):
            return result
        samples = self.samples(graph)
        if self.finish("samples"):
            return result

        def complete(stage: str, done: Mapping[str, object]) -> bool:
            return self.finish(stage, complete=len(done) == len(samples))

        relevance = await self.relevance(graph, samples)
        if complete("relevance", relevance):
            return result
        scenarios = await self.scenarios(graph, samples, relevance)
        if complete("scenarios", scenarios):
            return result
        if self.stop_after == "checks":
            checks = await self.checks(graph, samples, relevance, scenarios)
            complete("checks", checks)
            return result
        # independent of each other (the world-model writer never sees the checks): asked together
        checks, worlds = await asyncio.gather(
            self.checks(graph, samples, relevance, scenarios), self.world_models(graph, samples, relevance, scenarios)
        )
        complete("checks", checks)
        if complete("world_models", worlds):
            return result
        validations = await self.validation(graph, samples, scenarios, checks, worlds)
        if complete("validation", validations) or len(validations) < len(samples):
            return result
        audited = self.config.validation.mutation_audit
        excerpts = {sample.id: self.excerpt(graph, sample) for sample in samples} if audited else None
        exported = await self.export(samples, relevance, scenarios, validations, checks, excerpts)
        if exported is None:
            return result
        suite, folder = exported
        self.finish("export")
        result.suite, result.suite_dir = suite, folder
        return result


def _exported_model(model: str) -> str:
    return RECORDED_MODEL if model.startswith((f"{REPLAY_PROVIDER}/", f"{EXCHANGE_PROVIDER}/")) else model


def chunk_manual(config: GenerationConfig) -> DocumentGraph:
    """The manual's document graph before references: its chunks and hierarchy, as the run's first stage cuts them."""
    return chunk_document(
        config.document_path.read_text(encoding="utf-8"), config.chunking.max_chunk_tokens,
        config.document_path.stem, config.chunking.always_split_headings,
    )  # fmt: skip


@contextlib.contextmanager
def _local_server(client: LLMClient) -> Iterator[None]:
    if not client.needs_local_server(list(STAGES)):
        yield
        return
    from mantra_env.agents.local_server import start_server

    with start_server(context_tokens=8192) as server:
        client.use_local_server(server.api_base)
        yield


def run_pipeline(
    config: GenerationConfig,
    run_dir: Path,
    from_stage: str | None = None,
    stop_after: str | None = None,
    on_stage: Callable[[str], None] | None = None,
    wait: bool = False,
    poll_s: float = 1.0,
    on_progress: Callable[[str, int, int], None] | None = None,
    offload: Offload = in_thread,
) -> PipelineResult:
    """Run (or resume) the pipeline in ``run_dir``; see the module docstring. With pending exchange requests it
    returns them in ``result.pending``, or with ``wait`` polls every ``poll_s`` seconds for their answers and goes
    on until the run ends. The validation stage's solver queries run through ``offload`` (default: threads here)."""
    for stage in (from_stage, stop_after):
        if stage is not None and stage not in STAGE_ORDER:
            raise PipelineError(f"unknown stage {stage!r}; stages: {', '.join(STAGE_ORDER)}")
    run = RunDir(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    domain = load_domain(config.domain)
    cache = config.llm.cache.path or run_dir / "llm_cache"
    client = LLMClient(config, cache if config.llm.cache.enabled else None, exchange_base=run_dir)
    folders = {folder.root: folder for stage in STAGES if (folder := client.exchange(stage)) is not None}
    if from_stage is not None:  # answers are never removed, also where a folder of them lies in a stage's folder
        removed = run.reset_from(from_stage, keep=[*folders, cache])
        log.info("recomputing from %s (removed: %s)", from_stage, ", ".join(removed) or "nothing")
    pipeline = Pipeline(config, run, client, domain, domain_tools(config, domain), stop_after, on_stage, on_progress)
    pipeline.offload = offload
    if folders and config.llm.replay.record_to is None:  # an exchange run is its own replay fixture
        client.record_to(run_dir / RECORDED)
    with _local_server(client):
        while True:
            result = asyncio.run(pipeline.run_all())
            for folder in folders.values():
                waiting = [key for key in result.pending if folder.request_path(key).exists()]
                folder.write_pending(waiting)
                if waiting:
                    result.waiting_in.append(folder.root)
            if not result.pending or not wait:
                break
            log.info("%d request(s) pending; waiting for answers", len(result.pending))
            _wait_for_any(list(folders.values()), result.pending, poll_s)
    pipeline.write_usage()  # also when no stage finished: the answers read so far count
    result.usage = client.usage
    return result


def _wait_for_any(folders: Sequence[ExchangeDir], keys: Sequence[str], poll_s: float) -> None:
    """Return once answers to ``keys`` have arrived in ``folders``: all of them, or some and none more for one
    poll (so that answers written one after another are taken in one round, not one round each)."""
    seen = 0
    while True:
        answered = sum(1 for key in keys if any(folder.answered(key) for folder in folders))
        if answered == len(keys) or 0 < answered == seen:
            return
        seen = answered
        time.sleep(poll_s)
