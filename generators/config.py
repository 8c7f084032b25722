"""The generation pipeline's YAML configuration (paper App. "Pipeline Configuration").

The keys are the paper's example config (``run_dir_base``, ``document_path``, ``tools``, ``env_bindings``,
``llm`` with per-stage overrides, ``retry`` and ``cache``, ``chunking``, ``sampling``, ``validation``,
``web_ui``, ``logging``) plus ``domain`` (the registered domain whose toolkit and database the cases run
against), ``export`` (the suite written at the end), ``checks`` (the checks stage's stricter answer checks),
``references`` (governing rules) and ``scenarios`` (the outcome mix). Keys that switch on a newer stage or check
(``validation.mutation_audit``, ``checks.*``, ``references.*``, ``scenarios.*``) are off when absent, so a
recorded run replays as it was. ``${VAR}`` and ``${VAR:-default}`` are expanded from
the environment in scalar values after parsing (a variable cannot change the file's structure); relative
file paths are relative to the config file, except ``run_dir_base``, which is relative to the working
directory (where runs go is the caller's choice, not the config's).

Models. A stage's model is named like ``--model`` of the runner: an alias or role of ``agents/models.yaml``
(``local``, ``qwen``, ``role:generator``, ``role:judge``), any litellm model string (``openai/gpt-5.4``), or a
bare model name with a ``provider`` (``provider: ollama`` + ``model: qwen3:8b``). ``replay/<name>`` serves
recorded responses (:mod:`mantra_env.generators.replay`).
"""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mantra_env.case import SolverModes, modes_on
from mantra_env.domains import Domain, load_domain
from mantra_env.errors import MantraError, did_you_mean, error_path
from mantra_env.generators.artifacts import Outcome
from mantra_env.generators.records import DEFAULT_BUDGET_CHARS
from mantra_env.generators.sampling import SamplingSettings
from mantra_env.generators.stages import JUDGE_STAGES, STAGE_NAMES
from mantra_env.tools import ToolSpec
from mantra_env.userfiles import load_yaml, read_text

STAGES = STAGE_NAMES
"""The model stages' names (the records are :data:`mantra_env.generators.stages.MODEL_STAGES`)."""

StructuredOutput = Literal["auto", "json_schema", "llama_grammar", "none"]


class ConfigError(MantraError, ValueError):
    """The generation config is not usable; the message names the file, the key and how to fix it."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StageModel(_Strict):
    """Which model one stage uses (every field optional: unset ones fall back to the ``llm`` defaults)."""

    provider: str | None = None
    model: str | None = None
    api_base: str | None = None
    api_key: str | None = None
    params: dict[str, Any] = Field(default_factory=dict, description="Extra litellm completion parameters.")
    structured_output: StructuredOutput | None = None


class RetrySettings(_Strict):
    max_attempts: int = Field(default=4, ge=1, description="Tries per request on provider failures (429, time-out).")
    base_delay_s: float = Field(default=0.5, ge=0)
    max_repair_attempts: int = Field(default=3, ge=0, description="Syntactic repair rounds per artifact.")


class CacheSettings(_Strict):
    enabled: bool = True
    path: Path | None = Field(default=None, description="Default: <run_dir>/llm_cache.")


class ReplaySettings(_Strict):
    """Recorded responses: ``path`` is served to ``replay/*`` models; ``record_to`` records real responses."""

    path: Path | None = None
    record_to: Path | None = None
    record_model: bool = Field(
        default=False,
        description="Each recorded answer also names the model id its stage declared (model: e.g. "
        "openai/gpt-5.4, exchange/retail). Off: the recording has key, response and role, as before.",
    )


class LLMSettings(_Strict):
    provider_default: str | None = None
    default_model: str = "role:generator"
    judge_model: str = Field(default="role:judge", description="Default model of the judge stages.")
    ollama_base_url: str | None = None
    openai_api_key: str | None = None
    anthropic_api_key: str | None = None
    codex_executable: str | None = Field(default=None, description="Accepted for the paper's config; unused.")
    api_base: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    structured_output: StructuredOutput = "auto"
    request_timeout_s: float = Field(default=120.0, gt=0)
    stage_overrides: dict[str, StageModel] = Field(default_factory=dict)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    cache: CacheSettings = Field(default_factory=CacheSettings)
    replay: ReplaySettings = Field(default_factory=ReplaySettings)

    @model_validator(mode="after")
    def _known_stages(self) -> LLMSettings:
        for stage in self.stage_overrides:
            if stage not in STAGES:
                hint = did_you_mean(stage, STAGES)
                raise ValueError(
                    f"unknown stage {stage!r} in stage_overrides; {hint or 'stages: ' + ', '.join(STAGES)}"
                )
        return self


class ToolsSettings(_Strict):
    """Where the tool schema comes from: a registered domain's toolkit (``domain``), or a ``tools.json`` file."""

    format: Literal["domain", "python_callable", "json"] = "domain"
    source: str | None = Field(default=None, description="Domain name, module path, or JSON file.")


class EnvBindings(_Strict):
    path: Path | None = None


class ChunkingSettings(_Strict):
    max_chunk_tokens: int = Field(default=4000, ge=16)
    always_split_headings: bool = True


class GenerationSampling(SamplingSettings):
    max_parallel_samples: int = Field(default=3, ge=1)
    scenarios_per_sample: int = Field(default=4, ge=1)
    database_chars: int = Field(
        default=DEFAULT_BUDGET_CHARS, ge=200, description="Budget of the database records a scenario writer sees."
    )


class ValidationSettings(_Strict):
    refuse_invented_ids: bool = Field(
        default=False,
        description=(
            "Leave out of every trace a call whose identifier argument (a String parameter named id or *_id that"
            " the world model binds) names no record the scenario states, the database holds or an earlier call"
            " returned: the env answers it 'not found'. Set it to true in new configs; the shipped configs leave"
            " it off so that their suites regenerate byte for byte."
        ),
    )
    canonical_lists: bool = Field(
        default=False,
        description=(
            "The compliant witness (the oracle's plan) holds each list argument's items in canonical order (sorted"
            " where the world model allows), so list-argument witnesses are shaped at their own length: fast. Set it"
            " to true in new configs; the shipped configs leave it off so that their suites regenerate byte for byte."
        ),
    )
    witness_at_own_length: bool = Field(
        default=False,
        description=(
            "The compliant witness (recorded in each round's validation history, and the oracle's plan) is found"
            " and shaped on the case encoded at the witness's own length: much faster on large cases (minutes to"
            " under a second), the same calls up to the solver's free choices (which of two calls of one tool comes"
            " first), which may differ from a witness shaped at the bound. Set it to true in new configs; off when"
            " absent (every pass at the trace bound), as the telecom, airline and operations recordings were made,"
            " so that their suites regenerate byte for byte. Retail v4 was recorded with it on."
        ),
    )
    array_relevancy: bool = Field(
        default=False,
        description=(
            "Z3 filters by relevancy when a world model writes arrays (set updates such as a booking's passenger"
            " names): without it, the store terms of every tool at every step of the trace take part in the array"
            " theory, and the airline re-audit's booking models ran out of their budget on queries a four-call trace"
            " answers. The answers stay the same; the witnesses are the solver's other choices. Set it to true in"
            " new configs; off when absent, so that the shipped suites regenerate byte for byte."
        ),
    )
    conflicts_at_own_length: bool = Field(
        default=False,
        description=(
            "A forward or backward conflict (a witness the judges read) is looked for on the case encoded at bounds"
            " 2, 4, 8, ... below the trace bound first, and shortened on encodings at its own length: the same"
            " answers, seconds instead of a budget run out where a short trace answers but the open steps of the"
            " bound lead the solver astray (the airline re-audit's booking models), witnesses up to the solver's"
            " free choices. Set it to true in new configs; off when absent, so that the shipped validation histories"
            " regenerate byte for byte."
        ),
    )
    short_conflicts_first: bool = Field(
        default=False,
        description=(
            "A forward or backward conflict is looked for among the traces of at most 4, 8, 16, ... calls below the"
            " trace bound first, on the same solver (no other encoding): the same answers, shorter conflict"
            " witnesses, a third less solver work at a bound of 64 and somewhat less at 16 (not for world models that"
            " write arrays: see conflicts_at_own_length); a query without a conflict pays for the short checks (a few"
            " percent on an all-consistent suite). Set it to true in new configs; off when absent, so that the"
            " shipped validation histories regenerate byte for byte."
        ),
    )
    encode_world_models: bool = Field(
        default=False,
        description=(
            "The world-model stage encodes each answer with each scenario's goal at the trace bound, and a model the"
            " solver cannot encode (more list slots than it allows, a term past its size limit) goes back to its"
            " writer with the reason, instead of reaching validation, where only a person could repair it. Set it"
            " to true in new configs; off when absent, so older recordings replay."
        ),
    )
    judge_scope_rules: bool = Field(
        default=False,
        description=(
            "Every judge of validation and of the mutation audit is also told that the sample's scenarios share"
            " one world model (an edit there binds them all; a condition serving another scenario is no reason"
            " for a check in this one), that a check enforces a rule the excerpt states (quoted in the reason),"
            " that reads may come in any order the tools allow, and is shown every tool of the domain. Set it to"
            " true in new configs; off when absent, so older recordings replay."
        ),
    )
    fix_repair_shows_model: bool = Field(
        default=False,
        description=(
            "A judge whose edits were rejected (stage fix_repair) also sees the world model and the scenario's"
            " checks they apply to, instead of only its repair and the error (the airline re-audit's judges took"
            " indices and parameter names on trust). Set it to true in new configs; off when absent, so older"
            " recordings replay."
        ),
    )
    n_rounds: int = Field(default=5, ge=1)
    z3_trace_bound: int = Field(default=16, ge=1, le=256)
    timeout_ms: int = Field(default=20_000, ge=100)
    mutation_audit: bool = Field(
        default=False,
        description="After the rounds, replay each validated case's mutants (mantra_env.generators.mutation) and ask a "
        "judge once per case about those the verdict misjudges (stage mutation_audit). Off when absent, so older "
        "recordings replay; new configs set it.",
    )

    @property
    def solver_modes(self) -> SolverModes:
        """The solver modes these settings switch on (the ones each exported case records)."""
        return modes_on(
            refuse_invented_ids=self.refuse_invented_ids,
            canonical_lists=self.canonical_lists,
            witness_at_own_length=self.witness_at_own_length,
            array_relevancy=self.array_relevancy,
            conflicts_at_own_length=self.conflicts_at_own_length,
            short_conflicts_first=self.short_conflicts_first,
        )


class CheckSettings(_Strict):
    """The checks stage's gated behaviours (issue 33 items 3 and 5); each off when absent, so older recordings
    replay byte for byte."""

    answer_checks: bool = Field(
        default=False,
        description="The checks stage writes ANSWER checks for information requests (their facts resolved on the "
        "case's database at export), and the export refuses a case that asks for information without one "
        "(screening reason missing_answer_check). Off: the checks stage and the export as before.",
    )

    refuse_unfit_pins: bool = Field(
        default=False,
        description="Refuse a check whose pinned value does not fit its parameter's schema (a quoted number for "
        "an integer): the checks writer gets the problem back as a syntactic repair.",
    )
    repair_answer_checks: bool = Field(
        default=False,
        description="With answer_checks: before the export, a case whose ANSWER checks name facts its database "
        "does not hold (or that asks for information with none) goes back to the checks writer with the reads' "
        "real results (stage answer_repair), instead of being refused. Off: such a case is refused at export.",
    )
    lint_free_text_pins: bool = Field(
        default=False,
        description="Warn (in the checks artifact and session.log) about checks that pin a free-text "
        "parameter (x-free-text): a correct agent words it otherwise.",
    )
    refuse_echoed_facts: bool = Field(
        default=False,
        description="With repair_answer_checks: an ANSWER check whose every fact the customer's request already "
        "states (the zip code the customer typed) is no evidence the agent read anything, so it goes back to the "
        "checks writer (stage answer_repair) like one that does not resolve, and a rewritten one must not echo "
        "the request either.",
    )
    answer_on_refusals: bool = Field(
        default=False,
        description="With repair_answer_checks: a case whose compliant run declines (its oracle writes nothing; "
        "not an information request) and that has no ANSWER check goes to the checks writer (stage "
        "answer_repair) once, asking for the fact that decides the refusal (an order's status, a payment "
        "method), so an agent that claims the refused change was made fails; the writer may answer none when "
        "the manual forbids the request whatever the records say.",
    )

    @model_validator(mode="after")
    def _repairs_need_their_stage(self) -> CheckSettings:
        for key in ("refuse_echoed_facts", "answer_on_refusals"):
            if getattr(self, key) and not (self.answer_checks and self.repair_answer_checks):
                raise ValueError(
                    f"checks.{key} works through the answer_repair stage: set checks.answer_checks and "
                    "checks.repair_answer_checks to true as well (or remove the key)"
                )
        return self


class ReferenceSettings(_Strict):
    """The references stage's gated behaviours (issue 33 item 2); off when absent, so older recordings replay."""

    governing_rules: bool = Field(
        default=False,
        description="Each section is also asked (stage governing_rules, a request of its own, so the references "
        "requests and the samples stay those of a run without the key) which tools' calls its rules govern "
        "wherever they happen (identity, confirmation, hand-off policy, steps every order needs): such a section "
        "reaches every sample whose relevant tools it governs (tool relevance asks once more with it, and the "
        "scenario, check and world-model writers see it in their excerpt).",
    )


class ScenarioSettings(_Strict):
    """The scenario stage's gated behaviours (issue 33 item 4); off when absent, so older recordings replay."""

    outcome_mix: dict[Outcome, float] | None = Field(
        default=None,
        description="Shares of intended outcomes the scenario writer is asked for (e.g. {action: 0.6, refusal: "
        "0.25, information: 0.15}); each scenario then states its intended outcome, and the export reports the "
        "refusal share in the manifest.",
    )
    anchor_by_fields: bool = Field(
        default=False,
        description="The scenario writer also sees records the sample's tools look up by a value that is no id "
        "(outages by zip code, flights by number): a parameter names the collections whose records hold a field "
        "of its name or its plural. Off: only *_id parameters choose the collections shown.",
    )

    @model_validator(mode="after")
    def _shares(self) -> ScenarioSettings:
        mix = self.outcome_mix
        shares = list((mix or {}).values())
        if mix is not None and (not shares or min(shares) < 0 or abs(sum(shares) - 1) > 0.01):
            raise ValueError(
                f"outcome_mix {mix} must give non-negative shares of action, refusal and information that sum to 1"
            )
        return self


class WebUISettings(_Strict):
    port: int = Field(default=8080, ge=1, le=65535)


class LoggingSettings(_Strict):
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    console: bool = False
    filename: str = "session.log"


class ExportSettings(_Strict):
    suite_name: str = Field(default="generated", pattern=r"^[a-z0-9][a-z0-9_-]*$")
    version: int = Field(default=0, ge=0)
    description: str = ""
    oracle_plans: bool = Field(
        default=True,
        description="Store each case's oracle plan in the suite (false leaves it out, and the oracle then solves "
        "each case's canonical witness again when it plays the case).",
    )
    check_provenance: bool = Field(
        default=False,
        description="Record on each exported check who wrote it (written_by: the checks stage, or a judge's "
        "stage and round). Off: the checks carry no such field, as before.",
    )
    screen_unwritten_actions: bool = Field(
        default=False,
        description="Screen out a case whose scenario writer intended an action but whose oracle plan makes no "
        "write (reason action_without_write; needs scenarios.outcome_mix): the sample's tools, checks or world "
        "model left out the change the customer asked for, so an agent that makes it, as the manual may allow, "
        "would fail for an unrequested write. Off: such a case ships, counted as a refusal, as before.",
    )


class GenerationConfig(_Strict):
    """A whole config file."""

    run_dir_base: Path = Path("runs")
    document_path: Path
    domain: str = Field(description="The registered domain the cases run against (toolkit and database).")
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    env_bindings: EnvBindings = Field(default_factory=EnvBindings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    chunking: ChunkingSettings = Field(default_factory=ChunkingSettings)
    sampling: GenerationSampling = Field(default_factory=GenerationSampling)
    validation: ValidationSettings = Field(default_factory=ValidationSettings)
    checks: CheckSettings = Field(default_factory=CheckSettings)
    references: ReferenceSettings = Field(default_factory=ReferenceSettings)
    scenarios: ScenarioSettings = Field(default_factory=ScenarioSettings)
    web_ui: WebUISettings = Field(default_factory=WebUISettings)
    logging: LoggingSettings = Field(default_factory=LoggingSettings)
    export: ExportSettings = Field(default_factory=ExportSettings)

    def stage_model(self, stage: str) -> StageModel:
        """The effective model settings of ``stage`` (override fields over the ``llm`` defaults)."""
        if stage not in STAGES:
            raise ConfigError(f"unknown stage {stage!r}; stages: {', '.join(STAGES)}")
        llm = self.llm
        override = llm.stage_overrides.get(stage, StageModel())
        default = llm.judge_model if stage in JUDGE_STAGES else llm.default_model
        return StageModel(
            provider=override.provider or (None if override.model else llm.provider_default),
            model=override.model or default,
            api_base=override.api_base or llm.api_base,
            api_key=override.api_key,
            params={**llm.params, **override.params},
            structured_output=override.structured_output or llm.structured_output,
        )


def _resolve_paths(config: GenerationConfig, base: Path) -> GenerationConfig:
    def resolve(path: Path | None) -> Path | None:
        return None if path is None else path if path.is_absolute() else (base / path)

    llm = config.llm.model_copy(
        update={
            "cache": config.llm.cache.model_copy(update={"path": resolve(config.llm.cache.path)}),
            "replay": config.llm.replay.model_copy(
                update={"path": resolve(config.llm.replay.path), "record_to": resolve(config.llm.replay.record_to)}
            ),
        }
    )
    tools = config.tools
    if tools.format == "json" and tools.source:
        tools = tools.model_copy(update={"source": str(resolve(Path(tools.source)))})
    return config.model_copy(
        update={
            "tools": tools,
            "document_path": resolve(config.document_path),
            "env_bindings": EnvBindings(path=resolve(config.env_bindings.path)),
            "llm": llm,
        }
    )


def parse_config(
    text: str, origin: str = "config", base: Path | None = None, env: dict[str, str] | None = None
) -> GenerationConfig:
    """Parse config text (``${VAR:-default}`` expanded from ``env`` or the process environment)."""
    data = load_yaml(text, origin, ConfigError, env if env is not None else os.environ)
    if not isinstance(data, dict):
        raise ConfigError(f"{origin}: expected a mapping of settings (document_path, domain, llm, ...)")
    try:
        config = GenerationConfig.model_validate(data)
    except ValidationError as error:
        problems = []
        for item in error.errors()[:10]:
            where = error_path(item["loc"], "(top level)")
            message = item["msg"].removeprefix("Value error, ")
            if item["type"] == "extra_forbidden":
                known = _known_keys(item["loc"][:-1])
                hint = did_you_mean(str(item["loc"][-1]), known)
                message = f"unknown key; {hint or 'known keys: ' + ', '.join(known)}"
            problems.append(f"{where}: {message}")
        raise ConfigError(f"{origin}: " + "; ".join(problems)) from None
    return _resolve_paths(config, base or Path.cwd())


def _known_keys(location: tuple[Any, ...]) -> list[str]:
    model: type[BaseModel] = GenerationConfig
    for part in location:
        field = model.model_fields.get(str(part))
        annotation = getattr(field, "annotation", None) if field else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        model = annotation
    return list(model.model_fields)


def load_config(path: Path, env: dict[str, str] | None = None) -> GenerationConfig:
    """Read and validate a config file; relative paths in it are relative to the file."""
    text = read_text(path, "the config", ConfigError)
    config = parse_config(text, str(path), path.resolve().parent, env)
    if not config.document_path.is_file():
        raise ConfigError(f"{path}: document_path {config.document_path} does not exist")
    return config


def domain_tools(config: GenerationConfig, domain: Domain) -> list[ToolSpec]:
    """The tool schema the pipeline works with: the toolkit of the domain (``format: domain``, ``source`` a
    registered domain, default ``domain``), of a module's ``DOMAIN`` (``python_callable``, ``source`` the module
    path), or a ``tools.json`` list of tool specs (``json``). The cases always run against ``domain``'s
    toolkit; the export's oracle replay catches a schema that does not fit it."""
    source = config.tools.source
    if config.tools.format == "json":
        if not source:
            raise ConfigError("tools.format is json but tools.source names no file; give the tools.json path")
        path = Path(source)
        try:
            return [ToolSpec.model_validate(item) for item in json.loads(path.read_text(encoding="utf-8"))]
        except (OSError, ValueError, TypeError) as error:
            raise ConfigError(f"tools.source {path}: cannot read a list of tool specs: {error}") from None
    if config.tools.format == "python_callable":
        if not source:
            raise ConfigError("tools.format is python_callable but tools.source names no module")
        try:
            module = importlib.import_module(source)
        except ImportError as error:
            raise ConfigError(f"tools.source {source}: cannot import it ({error})") from None
        provided = getattr(module, "DOMAIN", None)
        if not isinstance(provided, Domain):
            raise ConfigError(f"tools.source {source}: the module has no DOMAIN (a mantra_env Domain)")
        return provided.tool_specs()
    return (load_domain(source) if source and source != domain.name else domain).tool_specs()
