"""The typed artifacts of the generation stages: what each LLM stage must answer (its JSON schema is sent as the
structured-output format) and what the run directory stores."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from mantra_env.case import CaseCheck
from mantra_env.generators.sampling import Coverage, CoverageStats, Sample
from mantra_env.lints import Lint
from mantra_env.worldmodel.edits import Edit


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- LLM answers ------------------------------------------------------------------------------------------------


class Reference(_Answer):
    target: str = Field(description="Id of the node this one refers to, from the table of contents.")
    explicit: bool = Field(description="True if the text names the target (e.g. 'see 4.2'), False if implied.")
    reason: str = Field(default="", description="One sentence: what the reference is about.")


class ReferenceAnswer(_Answer):
    """References of one node; or, first, a request to read other nodes before answering."""

    read_nodes: list[str] = Field(default_factory=list, description="Node ids to read before answering.")
    references: list[Reference] = Field(default_factory=list)


class GoverningAnswer(_Answer):
    """Stage ``governing_rules`` (config ``references.governing_rules``): the tools whose calls one node's rules
    govern wherever they are made. A request of its own, so that the references stage's requests, and with them
    the graph and the samples, stay those of a run without the key."""

    governs: list[str] = Field(
        default_factory=list,
        description="Names of the tools whose every call this node's rules govern, wherever in the manual the call "
        "is made (identity checks, confirmations, hand-off policy, steps every order or ticket needs); empty when "
        "its rules apply only to its own procedure.",
    )
    reason: str = ""


class ToolRelevance(_Answer):
    tools: list[str] = Field(description="Names of the tools an agent needs for the procedures in the excerpt.")
    reason: str = ""
    governing: list[str] = Field(
        default_factory=list,
        exclude_if=lambda found: not found,  # an artifact written before governing rules reads the same
        description="Chunks outside the sample whose rules govern its tools (config references.governing_rules).",
    )


class PatchOperation(_Answer):
    op: Literal["set", "remove"]
    path: str = Field(description="Dot path into the database, e.g. items.HWM2741.stock")
    value: JsonValue = None


class ScenarioDraft(_Answer):
    """One scenario as the scenario generator writes it."""

    prompt: str = Field(min_length=1, description="The user's request, with named entities and exact quantities.")
    external: dict[str, JsonValue] = Field(
        default_factory=dict, description="Scenario variables observable in the database through tools."
    )
    internal: dict[str, JsonValue] = Field(
        default_factory=dict, description="Scenario variables not in the database; each is stated in the prompt."
    )
    database_patch: list[PatchOperation] = Field(
        default_factory=list, description="Changes that make the database agree with the external variables."
    )
    argument_bindings: dict[str, dict[str, JsonValue]] = Field(
        default_factory=dict,
        description="Per tool, the argument values a compliant agent would pass (addresses, ids, free text).",
    )


class ScenarioBatch(_Answer):
    scenarios: list[ScenarioDraft] = Field(min_length=1)


Outcome = Literal["action", "refusal", "information"]
"""A scenario's intended outcome: the agent makes the requested change, declines it, or tells facts."""


class OutcomeScenarioDraft(ScenarioDraft):
    """:class:`ScenarioDraft` with its intended outcome (config ``scenarios.outcome_mix``)."""

    outcome: Outcome = Field(
        description="What a compliant agent ends up doing: action (makes the requested change), refusal (the "
        "manual has it decline), information (it only tells the customer facts)."
    )


class OutcomeScenarioBatch(ScenarioBatch):
    scenarios: list[OutcomeScenarioDraft] = Field(min_length=1)  # type: ignore[assignment]


class CheckDraft(_Answer):
    id: str = Field(pattern=r"^[A-Za-z0-9_.:-]+$", description="Short snake_case name of the rule.")
    check: str = Field(description="The check in its text form, e.g. CALL a(x=1) PRECEDES CALL b()")
    rationale: str = ""


class CheckSet(_Answer):
    checks: list[CheckDraft] = Field(min_length=1)


class CheckSetWithFacts(CheckSet):
    """The check set when ANSWER checks are on (config ``checks.answer_checks``): the writer also says whether the
    request asks to be told facts (then it needs an ANSWER check, or the case is refused at export)."""

    asks_for_information: bool = Field(
        description="True when the customer asks to be told facts (times, dates, amounts, statuses, ids)."
    )


class WorldModelSchema(_Answer):
    """The schema pre-pass: the state variables and constants, before any transition."""

    declarations: str = Field(description="(var NAME TYPE) and (const NAME TYPE VALUE) lines of the DSL.")
    initial: dict[str, JsonValue] = Field(
        default_factory=dict, description="Values of the model's own (progress) variables before any call."
    )


class WorldModelAnswer(_Answer):
    """The full pass: the whole model, the initial values of its own variables, and each scenario's goal."""

    model: str = Field(description="The whole (model ...) in the DSL, without a goal.")
    initial: dict[str, JsonValue] = Field(default_factory=dict)
    goals: dict[str, list[str]] = Field(
        default_factory=dict, description="Scenario id -> goal conditions (DSL expressions) a compliant run reaches."
    )


class Repair(_Answer):
    """A judge's decision: where the defect is and the typed edits that fix it."""

    locus: Literal["world_model", "checks", "none", "scenario_invalid"]
    edits: list[Edit] = Field(default_factory=list)
    reason: str = ""


# --- stored artifacts -------------------------------------------------------------------------------------------


class Scenario(BaseModel):
    """A generated scenario with its id (``s000-1``: sample s000, scenario 1)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    sample_id: str
    draft: ScenarioDraft
    outcome: Outcome | None = Field(
        default=None,
        exclude_if=lambda outcome: outcome is None,  # absent unless the outcome mix is on: older artifacts keep bytes
        description="The writer's intended outcome (only with config scenarios.outcome_mix).",
    )


class ScenarioChecks(BaseModel):
    model_config = ConfigDict(extra="forbid")

    scenario_id: str
    checks: list[CaseCheck] = Field(default_factory=list)
    asks_for_information: bool | None = Field(
        default=None,
        exclude_if=lambda asks: asks is None,  # absent unless ANSWER checks are on: older artifacts keep their bytes
        description="Whether the request asks to be told facts (only with config checks.answer_checks).",
    )
    error: str = Field(default="", description="Why no usable checks were produced (then the scenario is rejected).")
    warnings: list[Lint] = Field(
        default_factory=list,
        exclude_if=lambda found: not found,  # an artifact written before the lint reads the same
        description="mantra_env.lints.free_text_pins (config checks.lint_free_text_pins)",
    )


class WorldModelArtifact(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sample_id: str
    schema_prepass: WorldModelSchema
    model: str
    initial: dict[str, JsonValue] = Field(default_factory=dict)
    goals: dict[str, list[str]] = Field(default_factory=dict)
    warnings: list[Lint] = Field(default_factory=list, description="mantra_env.lints.insensitive_writes")


ScenarioStatus = Literal["validated", "awaiting_human", "rejected"]


class ScenarioOutcome(BaseModel):
    """Where one scenario ended after the validation rounds."""

    model_config = ConfigDict(extra="forbid")

    scenario_id: str
    status: ScenarioStatus
    checks: list[CaseCheck]
    forward: Literal["consistent", "conflict", "unknown"] | None = None
    backward: Literal["consistent", "conflict", "unknown"] | None = None
    witness_found: bool = False
    rounds: int = 0
    reason: str = ""
    reviewer: str | None = Field(default=None, description="Who decided the scenario in the review UI, if anyone.")


class SampleValidation(BaseModel):
    """The validation stage's artifact of one sample: the final world model, every scenario's outcome and the
    full history of queries, witnesses and edits."""

    model_config = ConfigDict(extra="forbid")

    sample_id: str
    model: str
    initial: dict[str, JsonValue]
    goals: dict[str, list[str]]
    locks: list[str] = Field(default_factory=list)
    outcomes: list[ScenarioOutcome]
    history: list[dict[str, JsonValue]] = Field(default_factory=list)
    warnings: list[Lint] = Field(default_factory=list, description="mantra_env.lints.ignored_pins (final checks)")
    review_revision: int | None = Field(
        default=None, description="The revision of the sample's human review the rounds started from, if any."
    )


# The files of the stages before validation (RUN_DIR/samples/samples.json, RUN_DIR/<stage>/<sample>.json): the pipeline
# writes them, the review app reads them.


class SamplesArtifact(BaseModel):
    samples: list[Sample]
    coverage: Coverage
    stats: CoverageStats


class ScenarioSet(BaseModel):
    sample_id: str
    scenarios: list[Scenario]
    error: str = ""


class ChecksArtifact(BaseModel):
    sample_id: str
    scenarios: list[ScenarioChecks]


class WorldModelOrFailure(BaseModel):
    """A sample's world model, or why none could be generated (kept, so a resumed run does not ask again)."""

    world: WorldModelArtifact | None = None
    error: str = ""
