"""Cases and suites: the validated benchmark items and the files they live in.

A suite is a folder (or a ``.jsonl`` file) holding ``suite.jsonl`` with one :class:`Case` per line and a
``manifest.json`` with the :class:`SuiteManifest`. Loading names the file, line and field of every problem.
"""

from __future__ import annotations

import hashlib
import json
import numbers
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    PrivateAttr,
    ValidationError,
    field_validator,
)
from pydantic.json_schema import SkipJsonSchema

from mantra_env.checks import Check, check_from_json, format_check
from mantra_env.errors import CaseFileError, MantraError, did_you_mean, error_path
from mantra_env.files import write_atomic
from mantra_env.limits import bounded
from mantra_env.userfiles import read_text

SCHEMA_VERSION: Literal[1] = 1

Author = Literal["llm", "human"]


class UnknownCaseError(MantraError, KeyError, IndexError):
    """A case id or index that the suite does not have (a :class:`KeyError` and an :class:`IndexError`, as
    a dict or a list lookup would raise)."""

    def __str__(self) -> str:
        return str(self.args[0])  # KeyError's str() would show the message quoted


def _check_or_text(value: Any) -> Any:
    # Checks may be written in their text form in hand-made files; they are stored in JSON form. Both go
    # through check_from_json, which bounds their nesting before anything recursive sees them.
    return check_from_json(value) if isinstance(value, str | dict) else value


class CaseCheck(BaseModel):
    """One check of a case, with a stable id and who wrote it (human-authored checks are locked)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z0-9_.:-]+$")
    check: Annotated[Check, BeforeValidator(_check_or_text)]
    author: Author = "llm"
    written_by: str | None = Field(
        default=None,
        exclude_if=lambda by: by is None,  # suites exported without provenance keep their bytes
        description="Which generation step wrote the check: 'checks' (the checks stage) or '<judge stage> round "
        "<n>' (a judge's edit); recorded only with the generator's export.check_provenance key on.",
    )

    @property
    def text(self) -> str:
        return format_check(self.check)


class Scenario(BaseModel):
    """What the agent is asked to do, and the valuation of the scenario variables.

    ``external`` variables are observable in the database through tools; ``internal`` ones are not in the
    database and are stated in the prompt.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt: str = Field(min_length=1)
    external: dict[str, JsonValue] = Field(default_factory=dict)
    internal: dict[str, JsonValue] = Field(default_factory=dict)

    @property
    def valuation(self) -> dict[str, JsonValue]:
        """External and internal variables together: what pins a world model's initial state."""
        return {**self.external, **self.internal}


class SolverModes(TypedDict, total=False):
    """``CaseSolver`` options a case was validated with: a validation record's fields and a generation config's
    ``validation`` keys of the same names."""

    refuse_invented_ids: bool
    canonical_lists: bool
    witness_at_own_length: bool
    array_relevancy: bool
    conflicts_at_own_length: bool
    short_conflicts_first: bool


def modes_on(
    *,
    refuse_invented_ids: bool = False,
    canonical_lists: bool = False,
    witness_at_own_length: bool = False,
    array_relevancy: bool = False,
    conflicts_at_own_length: bool = False,
    short_conflicts_first: bool = False,
) -> SolverModes:
    """The modes that are on, only those: a record, a memo key or solver options without them read as before."""
    modes = SolverModes()
    if refuse_invented_ids:
        modes["refuse_invented_ids"] = True
    if canonical_lists:
        modes["canonical_lists"] = True
    if witness_at_own_length:
        modes["witness_at_own_length"] = True
    if array_relevancy:
        modes["array_relevancy"] = True
    if conflicts_at_own_length:
        modes["conflicts_at_own_length"] = True
    if short_conflicts_first:
        modes["short_conflicts_first"] = True
    return modes


class ValidationRecord(BaseModel):
    """How a case was validated against its world model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: Literal["validated", "awaiting_human", "rejected", "unvalidated"] = "unvalidated"
    trace_bound: int | None = Field(default=None, ge=1)
    forward: Literal["consistent", "conflict", "unknown"] | None = None
    backward: Literal["consistent", "conflict", "unknown"] | None = None
    rounds: int = Field(default=0, ge=0, description="The validation rounds the case's sample used.")
    first_valid_round: int | None = Field(
        default=None,
        ge=1,
        description="The round after which this case was first valid (its own, not its sample's; the re-check "
        "after the last round counts in that round); None for hand-written cases.",
    )
    history: list[dict[str, JsonValue]] = Field(default_factory=list)
    locks: list[str] = Field(
        default_factory=list,
        description="World-model parts a human edited (var:NAME, pre:TOOL, ...); automated edits may not change them.",
    )
    reviewer: str | None = Field(
        default=None, description="Who accepted the case in the review UI (None: validated by the solver alone)."
    )
    # The solver modes the case was validated in (a generation config's validation keys of the same names);
    # re-validation and the oracle ask the solver in the same modes. Left out when off: older suites keep their bytes.
    refuse_invented_ids: bool = Field(
        default=False,
        exclude_if=lambda on: not on,
        description="Validated with calls on identifiers nobody could know left out of every trace.",
    )
    canonical_lists: bool = Field(
        default=False,
        exclude_if=lambda on: not on,
        description="Validated with list arguments' items in canonical order in the compliant witness.",
    )
    array_relevancy: bool = Field(
        default=False,
        exclude_if=lambda on: not on,
        description="Validated with the solver's relevancy filtering on for world models that write arrays.",
    )
    # Carried, never written (nor in the schema): the generation config's validation.witness_at_own_length reaches
    # the oracle that plans, screens and audits the exported cases through it. Written, it would change the bytes
    # of retail v4, which was validated with it but shipped before the key existed; a suite read back has it off.
    witness_at_own_length: SkipJsonSchema[bool] = Field(default=False, exclude=True)
    # Carried, never written: it shapes the conflict witnesses of the validation history only, and a validated
    # case has none (its forward and backward queries are consistent), so nothing read back depends on it.
    conflicts_at_own_length: SkipJsonSchema[bool] = Field(default=False, exclude=True)
    short_conflicts_first: SkipJsonSchema[bool] = Field(default=False, exclude=True)  # as conflicts_at_own_length

    @property
    def solver_modes(self) -> SolverModes:
        """The ``CaseSolver`` options of the modes the case was validated in (only those that are on)."""
        return modes_on(
            refuse_invented_ids=self.refuse_invented_ids,
            canonical_lists=self.canonical_lists,
            witness_at_own_length=self.witness_at_own_length,
            array_relevancy=self.array_relevancy,
            conflicts_at_own_length=self.conflicts_at_own_length,
            short_conflicts_first=self.short_conflicts_first,
        )


class Provenance(BaseModel):
    """Where a case came from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: Literal["generated", "hand-written"] = "hand-written"
    generator_version: str | None = None
    models: dict[str, str] = Field(default_factory=dict, description="Model per pipeline stage.")
    run_id: str | None = None
    notes: str = ""


class PlannedCall(BaseModel):
    """One tool call of a case's stored oracle plan."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str = Field(min_length=1)
    arguments: dict[str, JsonValue] = Field(default_factory=dict)


class Case(BaseModel):
    """One benchmark item: scenario + checks + world model + provenance + validation record."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = SCHEMA_VERSION
    id: str = Field(pattern=r"^[A-Za-z0-9_.:-]+$")
    domain: str = Field(min_length=1)
    scenario: Scenario
    checks: list[CaseCheck] = Field(min_length=1)
    world_model: str = Field(default="", description="World model in the S-expression DSL.")
    sample_chunk_ids: list[str] = Field(default_factory=list)
    relevant_tools: list[str] = Field(default_factory=list)
    database_patch: list[dict[str, JsonValue]] | None = Field(
        default=None, description="Patch applied to the domain database on reset (domain-defined operations)."
    )
    argument_bindings: dict[str, dict[str, JsonValue]] = Field(
        default_factory=dict,
        description="Per-tool argument values an oracle uses for arguments the checks leave open.",
    )
    oracle_plan: list[PlannedCall] | None = Field(
        default=None,
        exclude_if=lambda plan: plan is None,  # a suite exported before plans were stored keeps its bytes
        description=(
            "The oracle's tool calls (the canonical compliant witness filled with the case's bindings, "
            "mantra_env.oracle), stored at export once the screen has replayed them; absent, the oracle solves them."
        ),
    )
    validation: ValidationRecord = Field(default_factory=ValidationRecord)
    provenance: Provenance = Field(default_factory=Provenance)

    @field_validator("checks")
    @classmethod
    def _unique_check_ids(cls, checks: list[CaseCheck]) -> list[CaseCheck]:
        seen: set[str] = set()
        for entry in checks:
            if entry.id in seen:
                raise ValueError(f"check id {entry.id!r} appears twice; check ids must be unique within a case")
            seen.add(entry.id)
        return checks


class SuiteManifest(BaseModel):
    """The small file beside a suite's JSONL: what the suite is and how it was made."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = SCHEMA_VERSION
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    domain: str
    version: int = Field(
        default=0,
        ge=0,
        description="Bumped whenever the cases change; the suite's gymnasium ids end in -v<version>.",
    )
    description: str = ""
    case_count: int = Field(ge=0)
    cases_digest: str = Field(
        default="",
        description="SHA-256 of the cases (their JSON without defaults), set when the suite is written; a suite "
        "whose cases no longer match it is refused at load (edit the cases, bump the version, rewrite the suite).",
    )
    stage_counts: dict[str, int] = Field(
        default_factory=dict,
        description="Per-stage counts: generated, forward_validated, backward_validated, final.",
    )
    screening: dict[str, int] = Field(
        default_factory=dict,
        description="Validated cases not exported, by screening reason (oracle_fails, oracle_tool_errors, "
        "oracle_premature_write, oracle_error, passed_by_noop, passed_by_random, passed_by_write_first).",
    )


class Suite(BaseModel):
    """A manifest and its cases."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    manifest: SuiteManifest
    cases: list[Case]
    _source: tuple[Path, SuiteManifest] | None = PrivateAttr(default=None)  # the folder it was read from, as read

    def __reduce__(self) -> tuple[Any, ...]:
        # A suite read from a folder and unchanged since travels by folder and digest (trainers send envs to
        # worker processes; a generated suite is megabytes): the receiver reads the same bytes back.
        source = self._source
        if source is not None and source[1] == self.manifest and self.manifest.cases_digest == cases_digest(self.cases):
            return _reload_suite, (str(source[0]), self.manifest.model_dump(mode="json"))
        reduced = super().__reduce__()
        assert isinstance(reduced, tuple)
        return reduced

    def case(self, key: str | int) -> Case:
        """A case by id or by index.

        Raises:
            UnknownCaseError: for an unknown id, an index out of range, or a key of another type.
        """
        name = self.manifest.name
        if isinstance(key, numbers.Integral) and not isinstance(key, bool):
            if not -len(self.cases) <= int(key) < len(self.cases):
                raise UnknownCaseError(f"suite {name!r} has {len(self.cases)} cases; index {key} is out of range")
            return self.cases[int(key)]
        if not isinstance(key, str):
            raise UnknownCaseError(
                f"a case is chosen by its id (a string) or its index (an int), not by a {type(key).__name__}"
            )
        for case in self.cases:
            if case.id == key:
                return case
        ids = [c.id for c in self.cases]
        hint = did_you_mean(key, ids)
        known = ", ".join(ids[:10])
        raise UnknownCaseError(
            f"suite {name!r} has no case {bounded(key)!r}; {hint + ' ' if hint else ''}its cases include: {known}"
        )


def _describe(exc: ValidationError) -> str:
    return "; ".join(
        f"{error_path(err['loc'], '(top level)')}: {err['msg'].removeprefix('Value error, ')}" for err in exc.errors()
    )


def load_cases(path: Path) -> list[Case]:
    """Read a JSONL file of cases; every problem names the file, line and field."""
    lines = read_text(path, "case file", CaseFileError).splitlines()
    cases: list[Case] = []
    ids: set[str] = set()
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CaseFileError(f"{path}:{lineno}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        except (ValueError, RecursionError):  # an integer of more than 4300 digits; nesting beyond ~1000
            raise CaseFileError(f"{path}:{lineno}: not usable JSON (a huge number or nesting too deep)") from None
        try:
            case = Case.model_validate(data)
        except ValidationError as exc:
            raise CaseFileError(f"{path}:{lineno}: invalid case: {_describe(exc)}") from None
        except RecursionError:
            raise CaseFileError(f"{path}:{lineno}: invalid case: a value nests too deep") from None
        if case.id in ids:
            raise CaseFileError(f"{path}:{lineno}: case id {case.id!r} appears twice in the file")
        ids.add(case.id)
        cases.append(case)
    return cases


def load_manifest(path: Path) -> SuiteManifest:
    """Read a suite's ``manifest.json`` (or the one in the folder ``path``); problems name the file."""
    return _read_manifest(path / "manifest.json" if path.is_dir() else path)


def _read_manifest(path: Path) -> SuiteManifest:
    text = read_text(path, "suite manifest", CaseFileError)
    try:
        return SuiteManifest.model_validate_json(text)
    except ValidationError as exc:
        raise CaseFileError(f"{path}: invalid manifest: {_describe(exc)}") from None


def load_suite(path: Path) -> Suite:
    """Load a suite from its folder (``suite.jsonl`` + ``manifest.json``) or its ``suite.jsonl``."""
    if not path.exists():
        raise CaseFileError(f"{path}: no such suite folder or file")
    folder = path if path.is_dir() else path.parent
    jsonl = folder / "suite.jsonl" if path.is_dir() else path
    manifest_path = folder / "manifest.json"
    manifest = _read_manifest(manifest_path)
    cases = load_cases(jsonl)
    if manifest.case_count != len(cases):
        raise CaseFileError(
            f"{manifest_path}: case_count is {manifest.case_count} but {jsonl} holds {len(cases)} cases; "
            "update case_count"
        )
    if manifest.cases_digest and manifest.cases_digest != cases_digest(cases):
        raise CaseFileError(
            f"{jsonl}: the cases changed since {manifest_path} was written (cases_digest differs); rebuild the "
            "suite (python -m mantra_env.authoring SOURCE, or the generator's export), bumping its version"
        )
    suite = Suite(manifest=manifest, cases=cases)
    suite._source = (folder.resolve(), manifest)
    return suite


def _reload_suite(folder: str, manifest: dict[str, Any]) -> Suite:
    """A pickled suite, read back from its folder (see :meth:`Suite.__reduce__`)."""
    suite = load_suite(Path(folder))
    if suite.manifest.model_dump(mode="json") != manifest:
        raise CaseFileError(f"{folder}: the suite changed since it was pickled (its manifest differs); pickle it again")
    return suite


def cases_digest(cases: Sequence[Case]) -> str:
    """The manifest's ``cases_digest``: SHA-256 of the cases' JSON without default values, so that neither the
    file's layout nor a new field with a default (a schema extension) changes it, and any change of content does."""
    text = "\n".join(case.model_dump_json(exclude_defaults=True) for case in cases)
    return hashlib.sha256(text.encode()).hexdigest()


def write_suite(suite: Suite, folder: Path) -> Suite:
    """Write a suite as ``suite.jsonl`` + ``manifest.json`` (one case per line, keys in model order); returns the
    suite as written (its manifest's ``cases_digest`` set), equal to what :func:`load_suite` reads back."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [case.model_dump_json(exclude_defaults=False) for case in suite.cases]
    jsonl = ("\n".join(lines) + ("\n" if lines else "")).encode()
    manifest = suite.manifest.model_copy(update={"cases_digest": cases_digest(suite.cases)})
    write_atomic(folder / "suite.jsonl", jsonl)
    write_atomic(folder / "manifest.json", manifest.model_dump_json(indent=2) + "\n")
    written = suite.model_copy(update={"manifest": manifest})
    written._source = (folder.resolve(), manifest)
    return written
