"""Hand-written suites: a readable YAML source → a suite folder validated by the SMT engine.

The YAML source (``source.yaml`` beside ``suite.jsonl``) lists cases with their scenario, checks (text form),
world model, argument bindings and database patch. Shared world models are written once under
``world_models:`` and referenced by name; a case adds its scenario's ``goal`` conditions to it. Building a
suite runs, for every case at the trace bound, the forward query, the backward audit of every check and the
compliant-witness query, and writes the outcome into the case's validation record. A case that does not
validate is an error that shows the solver's witness, so the author can fix the checks or the model. A world
model whose effects ignore the arguments (:mod:`mantra_env.lints`: a write tool's postcondition ignores every
identifying parameter; a postcondition of a tool the checks pin ignores the pinned parameters) is a warning with
the place and a hint.

``python -m mantra_env.authoring SOURCE.yaml`` rebuilds; ``--check`` fails if ``suite.jsonl`` is stale.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from mantra_env.case import (
    Case,
    CaseCheck,
    PlannedCall,
    Provenance,
    Scenario,
    SolverModes,
    Suite,
    SuiteManifest,
    ValidationRecord,
    write_suite,
)
from mantra_env.checks import tools_mentioned
from mantra_env.cli import command_parser
from mantra_env.domains import load_domain
from mantra_env.errors import MantraError, error_path
from mantra_env.lints import Lint, ignored_pins, insensitive_writes
from mantra_env.oracle import oracle_plan
from mantra_env.smt import CaseSolver, QueryResult
from mantra_env.tools import ToolSpec
from mantra_env.userfiles import load_yaml, read_text
from mantra_env.worldmodel import parse_model

DEFAULT_BOUND = 16


class AuthoringError(MantraError, ValueError):
    """A suite source is malformed or one of its cases does not validate."""


class CaseSource(BaseModel):
    """One hand-written case."""

    model_config = ConfigDict(extra="forbid")

    id: str
    prompt: str
    external: dict[str, JsonValue] = Field(default_factory=dict)
    internal: dict[str, JsonValue] = Field(default_factory=dict)
    checks: dict[str, str] = Field(min_length=1, description="Check id → check text.")
    world_model: str = Field(description="A name under world_models, or the model's DSL text.")
    goal: list[str] = Field(default_factory=list, description="Goal conditions added to the world model.")
    argument_bindings: dict[str, dict[str, JsonValue]] = Field(default_factory=dict)
    database_patch: list[dict[str, JsonValue]] | None = None
    notes: str = ""


class SuiteSource(BaseModel):
    """A whole source file."""

    model_config = ConfigDict(extra="forbid")

    name: str
    domain: str
    description: str = ""
    version: int = 0
    bound: int = Field(default=DEFAULT_BOUND, ge=1)
    world_models: dict[str, str] = Field(default_factory=dict)
    valuation_defaults: dict[str, dict[str, JsonValue]] = Field(
        default_factory=dict, description="Valuations to reuse: YAML anchors merged into cases with '<<: *name'."
    )
    oracle_plans: bool = Field(
        default=True,
        description=(
            "Store each case's oracle plan (Case.oracle_plan): an episode is graded for unrequested writes only "
            "against a stored plan. false keeps a suite written before plans were stored in its bytes (its cases "
            "are graded on their checks alone)."
        ),
    )
    cases: list[CaseSource] = Field(min_length=1)


def load_source(path: Path) -> SuiteSource:
    """Read a ``source.yaml``; bad bytes, broken YAML, duplicate keys and case ids are errors naming the place."""
    data = load_yaml(read_text(path, "suite source", AuthoringError), str(path), AuthoringError)
    try:
        source = SuiteSource.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(f"{error_path(e['loc'])}: {e['msg']}" for e in error.errors())
        raise AuthoringError(f"{path}: {problems}") from None
    seen: dict[str, int] = {}
    for position, case in enumerate(source.cases):
        if case.id in seen:
            raise AuthoringError(
                f"{path}: cases.{position}: case id {case.id!r} is also the id of cases.{seen[case.id]}; "
                "case ids must be unique"
            )
        seen[case.id] = position
    return source


def world_model_text(source: SuiteSource, case: CaseSource) -> str:
    """The case's complete world model: the shared model (or inline text) with the case's goal appended."""
    text = source.world_models.get(case.world_model, case.world_model).rstrip()
    if not case.goal:
        return text + "\n"
    if not text.endswith(")"):
        raise AuthoringError(f"case {case.id}: its world model does not end with ')'")
    goal = "\n\n  (goal " + "\n        ".join(case.goal) + ")"
    return text[:-1] + goal + ")\n"


def validate_case(
    case: Case, tools: Sequence[ToolSpec], bound: int, timings: dict[str, float] | None = None
) -> tuple[ValidationRecord, list[QueryResult]]:
    """Run the forward, backward and compliant-witness queries for ``case`` at ``bound``.

    ``timings``, if given, receives where the time went, in seconds: ``build`` (encoding and loading the formula),
    ``forward``, ``backward`` and ``witness`` (the queries' own solves), and the witness passes ``shortest``,
    ``readable`` and ``canonical`` (benchmarks/revalidate.py reports what dominates). The queries run in the solver
    modes the case was validated in (``case.validation.solver_modes``), which the record returned keeps; but the
    compliant witness is always found at its own length (``witness_at_own_length``), since only whether there is
    one counts here: the bound answers that as the shorter encodings do, minutes slower on large cases. The
    witness in the results may then list two calls of one tool in another order than the oracle's plan (which
    the oracle solves in the record's modes); nothing here compares them."""
    started = time.perf_counter()
    modes = case.validation.solver_modes
    asked: SolverModes = {**modes, "witness_at_own_length": True}
    solver = CaseSolver(case.world_model, case.checks, bound, case.scenario.valuation, tools, **asked)
    if timings is not None:
        solver.pass_seconds = timings
        solver.solver  # noqa: B018 -- built here, so that the first query's time is its own
        timings["build"] = time.perf_counter() - started
    forward = solver.forward(shortest=True)
    backward = solver.backward_all(shortest=True)
    witness = solver.compliant_witness()
    if timings is not None:
        for query, solved in (("forward", [forward]), ("backward", backward), ("witness", [witness])):
            timings[query] = sum(result.seconds for result in solved)
    return validation_record(bound, forward, backward, witness, modes), [forward, *backward, witness]


def validation_record(
    bound: int,
    forward: QueryResult,
    backward: Sequence[QueryResult],
    witness: QueryResult,
    modes: SolverModes | None = None,
) -> ValidationRecord:
    """The validation record of a case from its queries' results: validated if forward and every backward query
    are consistent and a compliant witness was found; ``modes``: the solver modes they ran in
    (``ValidationRecord.solver_modes``)."""
    results = [forward, *backward, witness]
    backward_status = (
        "unknown" if any(r.status == "unknown" for r in backward)
        else "conflict" if any(r.status == "conflict" for r in backward)
        else "consistent"
    )  # fmt: skip
    ok = forward.status == "consistent" and backward_status == "consistent" and witness.status == "found"
    return ValidationRecord(
        status="validated" if ok else "awaiting_human",
        trace_bound=bound,
        forward=forward.status if forward.status != "found" else None,
        backward=backward_status,
        history=[{"query": r.query, "check_id": r.check_id, "status": r.status} for r in results],
        **(modes or SolverModes()),
    )


def case_lints(case: Case, tools: Sequence[ToolSpec], model_name: str) -> list[Lint]:
    """The world-model warnings of one case, placed as ``case ID: world model NAME, transition TOOL (line N)``
    (the line within the world model's text)."""
    model = parse_model(case.world_model)
    found = [*insensitive_writes(model, tools), *ignored_pins(model, {"": case.checks})]
    place = f"case {case.id}: world model {model_name}"
    return [lint.model_copy(update={"place": f"{place}, {lint.place.removeprefix(': ')}"}) for lint in found]


def build_suite(source_path: Path, warn: Callable[[Lint], None] | None = None) -> Suite:
    """Build and validate every case of a source file (raises :class:`AuthoringError` listing failures, with the
    world-model warnings of each failed case); each world-model warning goes to ``warn``."""
    source = load_source(source_path)
    domain = load_domain(source.domain)
    tools = domain.tool_specs()
    cases: list[Case] = []
    failures: list[str] = []
    for entry in source.cases:
        try:
            checks = [CaseCheck(id=cid, check=text, author="human") for cid, text in entry.checks.items()]
            case = Case(
                id=entry.id,
                domain=source.domain,
                scenario=Scenario(prompt=entry.prompt, external=entry.external, internal=entry.internal),
                checks=checks,
                world_model=world_model_text(source, entry),
                relevant_tools=sorted({tool for c in checks for tool in tools_mentioned(c.check)}),
                database_patch=entry.database_patch,
                argument_bindings=entry.argument_bindings,
                provenance=Provenance(source="hand-written", notes=entry.notes),
            )
        except (ValidationError, MantraError) as error:
            failures.append(f"case {entry.id}: {error}")
            continue
        try:
            record, results = validate_case(case, tools, source.bound)
            name = entry.world_model if entry.world_model in source.world_models else "(inline)"
            lints = case_lints(case, tools, name)
        except MantraError as error:
            failures.append(f"case {entry.id}: {error}")
            continue
        if warn is not None:
            for lint in lints:
                warn(lint)
        if record.status != "validated":
            # an argument-insensitive effect is the usual cause of a backward conflict: say so beside the witness
            maybe = "".join(f"\nwarning: {lint.render()}" for lint in lints)
            failures.append(f"case {entry.id} does not validate:\n" + explain(results) + maybe)
            continue
        validated = case.model_copy(update={"validation": record})
        if source.oracle_plans:
            try:
                plan = oracle_plan(validated, tools, source.bound)
            except MantraError as error:
                failures.append(f"case {entry.id}: no oracle plan to store: {error}")
                continue
            validated = validated.model_copy(update={"oracle_plan": [PlannedCall.model_validate(a) for a in plan]})
        cases.append(validated)
    if failures:
        raise AuthoringError(f"{source_path}: {len(failures)} case(s) failed\n\n" + "\n\n".join(failures))
    manifest = SuiteManifest(
        name=source.name,
        domain=source.domain,
        version=source.version,
        description=source.description,
        case_count=len(cases),
        stage_counts={"written": len(source.cases), "validated": len(cases), "final": len(cases)},
    )
    return Suite(manifest=manifest, cases=cases)


def explain(results: list[QueryResult]) -> str:
    """The queries that failed (conflict, unknown, infeasible), each with its reason and witness."""
    lines = []
    for result in results:
        bad = result.status in ("conflict", "unknown", "infeasible")
        if not bad:
            continue
        title = f"{result.query}{' ' + result.check_id if result.check_id else ''}: {result.status}"
        lines.append(title + (f" ({result.reason})" if result.reason else ""))
        if result.witness is not None:
            lines += ["    " + line for line in result.witness.render().splitlines()]
    return "\n".join(lines)


def _warn_about(source_path: Path) -> Callable[[Lint], None]:
    def warn(lint: Lint) -> None:
        print(f"warning: {source_path}: {lint.render()}", file=sys.stderr)

    return warn


def main(argv: Sequence[str] | None = None) -> int:
    parser = command_parser(
        "mantra_env.authoring",
        __doc__.split("\n\n")[0],
        "mantra_env/domains/operations/suites/starter/source.yaml   # writes suite.jsonl, manifest.json beside it",
        "--check mantra_env/domains/*/suites/*/source.yaml          # fails if a written suite is stale",
    )
    parser.add_argument("sources", nargs="+", type=Path, help="source.yaml files; the suite is written beside each")
    parser.add_argument("--check", action="store_true", help="fail if a written suite differs from its source")
    args = parser.parse_args(argv)
    status = 0
    for source_path in args.sources:
        try:
            suite = build_suite(source_path, _warn_about(source_path))
        except MantraError as error:
            print(error, file=sys.stderr)
            status = 1
            continue
        folder = source_path.parent
        if args.check:
            with tempfile.TemporaryDirectory() as scratch:
                write_suite(suite, Path(scratch))
                stale = [
                    name
                    for name in ("suite.jsonl", "manifest.json")
                    if not (folder / name).exists()
                    or (folder / name).read_bytes() != (Path(scratch) / name).read_bytes()
                ]
            if stale:
                print(
                    f"{folder}: {', '.join(stale)} stale; run python -m mantra_env.authoring {source_path}",
                    file=sys.stderr,
                )
                status = 1
            continue
        write_suite(suite, folder)
        print(f"wrote {folder} ({len(suite.cases)} cases, all validated at h={suite.cases[0].validation.trace_bound})")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
