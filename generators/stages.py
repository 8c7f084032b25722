"""The stages of generation, in one place: the pipeline's stages and one :class:`Stage` record per model stage.

Two words, two things:

- a **pipeline stage** (:data:`PIPELINE_STAGES`) is a step of a run, in order, with its folder in the run
  directory (``RUN_DIR/<stage>/``); ``--from-stage`` and ``--stop-after`` take one;
- a **model stage** (:data:`MODEL_STAGES`) is one kind of request to a model (the key's first part, the config's
  ``stage_overrides`` key, the usage table's row); each is asked within one pipeline stage.

Every table about model stages derives from the records: the config's stage names and judge stages
(:mod:`mantra_env.generators.config`), the exchange writer's role per stage (:mod:`mantra_env.generators.exchange`)
and the answer check per stage (:mod:`mantra_env.generators.answers`, which maps each record's ``answer`` to the
class beside its stage). This module imports nothing of generation, so every one of them can import it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PIPELINE_STAGES = ("graph", "samples", "relevance", "scenarios", "checks", "world_models", "validation", "export")
"""The pipeline's stages in order, each a folder of the run directory."""

Role = Literal["references", "relevance", "scenario", "checks", "world_model", "judge"]
"""Who writes a model stage's answers. The pipeline's independence needs the ``world_model`` writer never to see the
``checks`` requests (and the reverse); judge stages use the config's ``llm.judge_model``."""


@dataclass(frozen=True)
class Stage:
    """One model stage: its name, the writer's role, the pipeline stage it is asked in, the name of its answer check
    (an ``AnswerCheck`` class beside the stage) and what it asks, in a line."""

    name: str
    role: Role
    pipeline_stage: str
    answer: str
    asks: str

    @property
    def judge(self) -> bool:
        """Whether the stage uses the judge model by default (``llm.judge_model``)."""
        return self.role == "judge"


MODEL_STAGES = (
    Stage("document_extraction", "references", "graph", "ReferencesCheck", "the references of a manual chunk"),
    Stage(
        "governing_rules",
        "references",
        "relevance",
        "GoverningCheck",
        "which tools a chunk's rules govern wherever they are called (``references.governing_rules``)",
    ),
    Stage("tool_relevance", "relevance", "relevance", "RelevanceCheck", "the tools a sample's excerpt concerns"),
    Stage("scenario_generation", "scenario", "scenarios", "ScenarioCheck", "a sample's scenarios"),
    Stage("check_generation", "checks", "checks", "ChecksCheck", "a scenario's checks"),
    Stage("smt_schema_prepass", "world_model", "world_models", "SchemaCheck", "a sample's world-model schema"),
    Stage("smt_full_pass", "world_model", "world_models", "FullPassCheck", "a sample's world model and goals"),
    Stage("conflict_resolution", "judge", "validation", "RepairCheck", "the sample-batched world-model repair"),
    Stage("locus_reassessment", "judge", "validation", "RepairCheck", "the per-scenario check resolution"),
    Stage("fix_repair", "judge", "validation", "RepairCheck", "the retry of edits that did not apply"),
    Stage("backward_audit", "judge", "validation", "RepairCheck", "the judge's decision on an over-restrictive check"),
    Stage(
        "oracle_arguments",
        "scenario",
        "export",
        "ArgumentsCheck",
        "the scenario writer's values for free-text arguments a validated case's oracle lacks",
    ),
    Stage(
        "mutation_audit",
        "judge",
        "export",
        "MutationAuditCheck",
        "the traces a case's verdict misjudges (``validation.mutation_audit``)",
    ),
    Stage(
        "answer_repair",
        "checks",
        "export",
        "AnswerRepairCheck",
        "a case's ANSWER checks again, with the reads' real results (``checks.repair_answer_checks``)",
    ),
)
"""The model stages: the paper's nine, plus ``governing_rules``, ``backward_audit``, ``oracle_arguments``,
``mutation_audit`` and ``answer_repair`` (the config's order)."""

STAGE_NAMES = tuple(stage.name for stage in MODEL_STAGES)
JUDGE_STAGES = frozenset(stage.name for stage in MODEL_STAGES if stage.judge)
ROLES: dict[str, Role] = {stage.name: stage.role for stage in MODEL_STAGES}
