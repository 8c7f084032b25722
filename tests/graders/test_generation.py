"""The report knows generation: the paper's Table 2 row and the validated-by-round curves of a generated suite,
from its manifest and its cases' own validation histories (a manifest fixture written here)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import JsonValue

from graders.generation import (
    GENERATION_TITLE,
    first_valid_round,
    generation_row,
    generation_table,
    rounds_table,
)
from graders.metrics import bootstrap_ci
from graders.report import main
from mantra_env.case import Suite, ValidationRecord, write_suite
from mantra_env.domains import find_suite, load_domain

History = list[dict[str, JsonValue]]


def query(number: int, kind: str, status: str, check: str | None = None) -> dict[str, JsonValue]:
    entry: dict[str, JsonValue] = {"round": number, "scenario": "s", "query": kind, "status": status}
    return entry | ({"check": check} if check else {})


def valid_in(number: int) -> History:
    return [query(number, "forward", "consistent"), query(number, "backward", "consistent", "c1"),
            query(number, "backward", "consistent", "c2")]  # fmt: skip


HISTORIES: dict[str, tuple[History, int | None]] = {
    "first round": (valid_in(1), 1),
    "repaired forward conflict": ([query(1, "forward", "conflict"), *valid_in(2)], 2),
    # forward consistent in R2 but the backward audit waited (another scenario had a conflict) until R3, asked on
    # the same artifacts (the forward result memoized, so not asked again)
    "memoized forward": (
        [query(1, "forward", "conflict"), query(2, "forward", "consistent"), query(3, "backward", "consistent", "c1")],
        3,
    ),
    "backward conflict repaired": (
        [*valid_in(1)[:2], query(1, "backward", "conflict", "c2"), *valid_in(2)],
        2,
    ),
    # valid only at the re-check after the last round (R5): it counts in R5, whose repairs it checks
    "final re-check": (
        [
            query(1, "forward", "conflict"),
            query(2, "forward", "conflict"),
            query(3, "forward", "conflict"),
            query(4, "forward", "conflict"),
            query(5, "forward", "conflict"),
            *valid_in(6),
        ],
        5,
    ),
    "never valid": ([query(1, "forward", "consistent"), query(1, "backward", "conflict", "c1")], None),
    "hand-written (no rounds)": ([{"query": "forward", "status": "consistent"}], None),
    "repair entries only": ([{"round": 1, "stage": "backward_audit", "scenario": "s", "applied": True}], None),
}


@pytest.mark.parametrize("name", HISTORIES)
def test_first_valid_round_is_the_case_s_own(name: str) -> None:
    history, expected = HISTORIES[name]
    # rounds=5 is what the sample used; the case's own round comes from its history
    assert first_valid_round(ValidationRecord(status="validated", rounds=5, history=history)) == expected


COUNTS = {"generated": 12, "forward_validated": 9, "backward_validated": 7, "final": 6, "awaiting_human": 2,
          "rejected": 3, "replay_failed": 1}  # fmt: skip
ROUNDS = [1, 2, 3, 2, 5, None]  # of the six final cases below (the last records no rounds)


@pytest.fixture
def generated(tmp_path: Path) -> Path:
    """Six of the operations starter cases as a generated suite with round-numbered validation histories."""
    _, starter = find_suite("operations/starter")
    histories = [HISTORIES[name][0] for name in ("first round", "repaired forward conflict", "memoized forward",
                 "backward conflict repaired", "final re-check", "hand-written (no rounds)")]  # fmt: skip
    cases = [
        case.model_copy(update={"validation": ValidationRecord(status="validated", rounds=5, history=history)})
        for case, history in zip(starter.cases, histories, strict=False)
    ]
    manifest = starter.manifest.model_copy(update={"name": "gen", "case_count": len(cases), "stage_counts": COUNTS})
    write_suite(Suite(manifest=manifest, cases=cases), tmp_path / "gen")
    return tmp_path / "gen"


def test_table_2_row_and_rounds_from_a_manifest(generated: Path) -> None:
    domain, suite = find_suite(str(generated))
    row = generation_row(suite, domain)
    assert row is not None
    operations = load_domain("operations")
    checks = [len(case.checks) for case in suite.cases]
    assert (row.domain, row.suite, row.words, row.tools) == (
        "operations", "gen", len(operations.manual.split()), len(operations.tool_specs()))  # fmt: skip
    assert row.checks_per_case == bootstrap_ci([float(n) for n in checks])
    assert row.checks_per_case.value == pytest.approx(sum(checks) / len(checks))
    assert row.counts == (12, 9, 7, 6) and row.outcomes == (2, 3, 1)
    assert row.first_rounds == tuple(ROUNDS)
    assert row.validated_by_round() == [1, 3, 4, 4, 5]

    table = generation_table([row])
    assert table.title == GENERATION_TITLE
    cells = dict(zip(table.header, table.rows[0], strict=True))
    estimate = row.checks_per_case
    assert cells["checks / case (mean ± 95%)"] == f"{estimate.value:.2f} ± {estimate.half_width:.2f}"
    assert (cells["generated"], cells["final"], cells["final / generated (%)"]) == ("12", "6", "50.0")
    rounds = rounds_table([row])
    assert rounds.header == ["domain / suite", "R1", "R2", "R3", "R4", "R5"]
    assert rounds.rows == [["operations / gen", "1 (8.3%)", "3 (25.0%)", "4 (33.3%)", "4 (33.3%)", "5 (41.7%)"]]


def test_a_manifest_without_some_counts_shows_n_a(generated: Path) -> None:
    domain, suite = find_suite(str(generated))
    partial = suite.model_copy(
        update={"manifest": suite.manifest.model_copy(update={"stage_counts": {"generated": 3}})}
    )
    row = generation_row(partial, domain)
    assert row is not None and row.counts == (3, None, None, None)
    cells = dict(zip(generation_table([row]).header, generation_table([row]).rows[0], strict=True))
    assert (cells["forward-validated"], cells["final / generated (%)"], cells["rejected"]) == ("n/a", "n/a", "n/a")
    assert generation_row(find_suite("operations/starter")[1], domain) is None  # hand-written: no row


def test_report_shows_table_2_and_the_rounds_figure(generated: Path, scripted_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    assert main(["--db", str(scripted_db), "--out", str(out), "--k", "1", "--suite", str(generated)]) == 0
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert f"## {GENERATION_TITLE}" in markdown and "| operations / gen | 1 (8.3%) | 3 (25.0%) |" in markdown
    assert "![validated_by_round](figures/validated_by_round.png)" in markdown
    assert (out / "figures" / "validated_by_round.png").stat().st_size > 1000
    assert (out / "report.html").read_text(encoding="utf-8").count("data:image/png;base64,") == 5
