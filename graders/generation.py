"""What the report knows about how a generated suite was made (the paper's Table 2 and its validated-by-round
figure), read from the suite's manifest and its cases' validation records.

A case's first-valid round is its own (``ValidationRecord.first_valid_round``, set at export by
:func:`mantra_env.generators.export.first_valid_round`); ``ValidationRecord.rounds`` is the rounds its *sample* used.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mantra_env.case import Case, Suite
from mantra_env.domains import Domain
from mantra_env.graders.intervals import format_estimate
from mantra_env.graders.metrics import Estimate, bootstrap_ci
from mantra_env.graders.table import Column, Table, count, make_table, percent
from mantra_env.smt import implied_checks

STAGES = ("generated", "forward_validated", "backward_validated", "final")
"""The generation pipeline's ``stage_counts`` keys, in funnel order."""
STAGE_LABELS = {
    "generated": "generated",
    "forward_validated": "forward-validated",
    "backward_validated": "backward-validated",
    "final": "final",
}
OUTCOMES = {
    "awaiting_human": "awaiting a human",
    "rejected": "rejected",
    "replay_failed": "replay failed",
    "trivially_passed": "passed by a trivial agent",
}
"""The other ``stage_counts`` keys: where the cases that were not kept went (labels for tables)."""
ROUNDS = 5
"""Validation rounds shown (R1..R5, the paper's setting)."""


@dataclass(frozen=True, slots=True)
class GenerationRow:
    """One generated suite: its domain's size, checks per case, the funnel and each case's first-valid round."""

    domain: str
    suite: str
    words: int | None
    tools: int | None
    checks_per_case: Estimate
    independent_checks_per_case: Estimate
    """Checks per case not counting those the case's other checks imply (:func:`mantra_env.smt.implied_checks`)."""
    counts: tuple[int | None, ...]
    """Cases left after each of :data:`STAGES` (None: the manifest does not say)."""
    outcomes: tuple[int | None, ...]
    """Cases per :data:`OUTCOMES` key (None: the manifest does not say)."""
    screening: dict[str, int] | None
    """Screened-out cases by reason (None: the manifest predates screening)."""
    first_rounds: tuple[int | None, ...]
    """Each final case's first-valid round (None: not recorded)."""
    judge_edits: tuple[int, int] | None = None
    """Applied judge edits to the world model and to the checks (None: no case records a validation history)."""

    @property
    def label(self) -> str:
        return f"{self.domain} / {self.suite}"

    @property
    def final_share(self) -> float:
        """Final cases as a fraction of generated ones (NaN when either is missing or nothing was generated)."""
        generated, final = self.counts[0], self.counts[-1]
        return final / generated if generated and final is not None else math.nan

    def validated_by_round(self) -> list[int] | None:
        """Cumulative cases first valid by R1..R5 (None when no case records its rounds)."""
        if not any(r is not None for r in self.first_rounds):
            return None
        return [sum(r is not None and r <= number for r in self.first_rounds) for number in range(1, ROUNDS + 1)]


def _count_of(counts: dict[str, int], key: str) -> int | None:
    value = counts.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None  # read defensively


def generation_row(suite: Suite, domain: Domain | None) -> GenerationRow | None:
    """The suite's Table 2 row, or None for a suite without generation records (hand-written)."""
    manifest = suite.manifest
    if STAGES[0] not in manifest.stage_counts:
        return None
    name = manifest.name if manifest.version == 0 else f"{manifest.name} v{manifest.version}"
    tools = domain.tool_specs() if domain is not None else None
    return GenerationRow(
        domain=manifest.domain,
        suite=name,
        words=len(domain.manual.split()) if domain is not None else None,
        tools=len(tools) if tools is not None else None,
        checks_per_case=bootstrap_ci([float(len(case.checks)) for case in suite.cases]),
        independent_checks_per_case=bootstrap_ci(
            [float(len(case.checks) - len(implied_checks(case.checks, tools))) for case in suite.cases]
        ),
        counts=tuple(_count_of(manifest.stage_counts, stage) for stage in STAGES),
        outcomes=tuple(_count_of(manifest.stage_counts, outcome) for outcome in OUTCOMES),
        # a screened manifest says so with its screening counts, zeros included in stage_counts
        screening=dict(manifest.screening) if manifest.screening or "replay_failed" in manifest.stage_counts else None,
        first_rounds=tuple(case.validation.first_valid_round for case in _final(suite.cases)),
        judge_edits=judge_edits(suite.cases),
    )


def _is_check_edit(edit: object) -> bool:
    return isinstance(edit, Mapping) and str(edit.get("op", "")).endswith("_check")


def judge_edits(cases: Sequence[Case]) -> tuple[int, int] | None:
    """The applied judge edits recorded in the cases' validation histories, as (to the world model, to the
    checks): an edit whose op ends in ``_check`` edits the checks, any other (transitions, variables, constants,
    goals) the world model. A sample's shared entries (no scenario) are in each of its cases' histories and count
    once; None when no case records a judge's entry (a hand-made or pre-history suite)."""
    seen: set[tuple[str, int, str]] = set()
    world = checks = 0
    recorded = False
    for case in cases:
        sample = case.id.rsplit("-", 1)[0]  # export names cases <suite>-<sample>-<n>
        shared = 0  # the sample's entries come in the same order in each of its cases' histories
        for entry in case.validation.history:
            edits = entry.get("edits")
            if "stage" not in entry or not isinstance(edits, list):
                continue
            recorded = True
            if entry.get("scenario") is None:
                shared += 1
                key = (sample, shared, json.dumps(entry, sort_keys=True))
                if key in seen:
                    continue
                seen.add(key)
            if entry.get("applied") is True:
                moved = sum(_is_check_edit(edit) for edit in edits)
                checks += moved
                world += len(edits) - moved
    return (world, checks) if recorded else None


def _final(cases: Sequence[Case]) -> list[Case]:
    return [case for case in cases if case.validation.status == "validated"]


def _mean_ci(estimate: Estimate) -> str:
    return format_estimate(estimate, scale=1, digits=2)


def _stage(position: int) -> Column[GenerationRow]:
    return Column(STAGE_LABELS[STAGES[position]], lambda row: row.counts[position], count)


def _outcome(position: int, label: str) -> Column[GenerationRow]:
    return Column(label, lambda row: row.outcomes[position], count)


def _screening(row: GenerationRow) -> str:
    if row.screening is None:
        return "n/a"
    return ", ".join(f"{reason} {number}" for reason, number in sorted(row.screening.items())) or "none"


def _edits(position: int) -> Column[GenerationRow]:
    label = ("judge edits: world model", "judge edits: checks")[position]
    return Column(label, lambda row: row.judge_edits[position] if row.judge_edits else None, count)


GENERATION_COLUMNS: list[Column[GenerationRow]] = [
    Column("domain", lambda row: row.domain),
    Column("suite", lambda row: row.suite),
    Column("words", lambda row: row.words, count),
    Column("tools", lambda row: row.tools, count),
    Column("checks / case (mean [95% interval])", lambda row: row.checks_per_case, _mean_ci),
    Column("not implied by the others", lambda row: row.independent_checks_per_case, _mean_ci),
    _edits(0),
    _edits(1),
    *(_stage(position) for position in range(len(STAGES))),
    Column("final / generated (%)", lambda row: row.final_share, percent),
    *(_outcome(position, label) for position, label in enumerate(OUTCOMES.values())),
    Column("screened out (by reason)", _screening),
]

GENERATION_TITLES = (
    "Generated suites (paper Table 2): input size, checks per case and judge edits",
    "Generated suites (paper Table 2): cases kept by each stage",
)
_SIZE_COLUMNS = 8  # domain, suite, words, tools, the two checks-per-case and two judge-edit columns; then the stages


def generation_tables(rows: Sequence[GenerationRow]) -> list[Table]:
    """The paper's Table 2 as two tables that each fit a 1280 px page: input size, checks per case and the judges'
    edits by direction (with the screened-out cases), then the cases kept by each stage; both start with domain
    and suite."""
    size = [*GENERATION_COLUMNS[:_SIZE_COLUMNS], GENERATION_COLUMNS[-1]]
    stages = [*GENERATION_COLUMNS[:2], *GENERATION_COLUMNS[_SIZE_COLUMNS:-1]]
    return [make_table(title, columns, rows) for title, columns in zip(GENERATION_TITLES, (size, stages), strict=True)]


def rounds_table(rows: Sequence[GenerationRow]) -> Table:
    """Cumulative validated cases by round, absolute and as % of generated, for suites that record rounds."""

    def by_round(position: int) -> Column[GenerationRow]:
        def cell(row: GenerationRow) -> str:
            counts, generated = row.validated_by_round(), row.counts[0]
            if counts is None:
                return "n/a"
            share = f" ({percent(counts[position] / generated)}%)" if generated else ""
            return f"{counts[position]}{share}"

        return Column(f"R{position + 1}", cell)

    columns = [Column[GenerationRow]("domain / suite", lambda row: row.label), *map(by_round, range(ROUNDS))]
    title = "Validated cases by round (cumulative; % of generated), from each case's own first-valid round"
    return make_table(title, columns, rows)
