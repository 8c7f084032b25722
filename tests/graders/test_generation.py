"""The report knows generation: the paper's Table 2 row and the validated-by-round curves of a generated suite,
from its manifest and its cases' own first-valid rounds (a manifest fixture written here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mantra_env.case import Suite, ValidationRecord, write_suite
from mantra_env.domains import find_suite, load_domain
from mantra_env.graders.generation import (
    GENERATION_COLUMNS,
    GENERATION_TITLES,
    generation_row,
    generation_tables,
    rounds_table,
)
from mantra_env.graders.metrics import bootstrap_ci
from mantra_env.graders.report import main
from mantra_env.graders.table import Table

COUNTS = {"generated": 12, "forward_validated": 9, "backward_validated": 7, "final": 6, "awaiting_human": 2,
          "rejected": 3, "replay_failed": 1, "trivially_passed": 2}  # fmt: skip
SCREENING = {"oracle_fails": 1, "passed_by_noop": 2}
ROUNDS = [1, 2, 3, 2, 5, None]  # of the six final cases below (the last records no rounds)


@pytest.fixture
def generated(tmp_path: Path) -> Path:
    """Six of the operations starter cases as a generated suite, with their first-valid rounds (the sample used 5)."""
    _, starter = find_suite("operations/starter")
    cases = [
        case.model_copy(
            update={"validation": ValidationRecord(status="validated", rounds=5, first_valid_round=first_round)}
        )
        for case, first_round in zip(starter.cases, ROUNDS, strict=False)
    ]
    update = {"name": "gen", "case_count": len(cases), "stage_counts": COUNTS, "screening": SCREENING}
    manifest = starter.manifest.model_copy(update=update)
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
    assert row.counts == (12, 9, 7, 6) and row.outcomes == (2, 3, 1, 2) and row.screening == SCREENING
    assert row.first_rounds == tuple(ROUNDS)
    assert row.validated_by_round() == [1, 3, 4, 4, 5]

    tables = generation_tables([row])
    assert [t.title for t in tables] == list(GENERATION_TITLES)
    assert all(t.header[:2] == ["domain", "suite"] and len(t.header) <= 11 for t in tables)  # fits 1280 px
    header = [*tables[0].header[:-1], *tables[1].header[2:], tables[0].header[-1]]  # the paper's column order
    assert header == [column.label for column in GENERATION_COLUMNS]
    table = Table("", header, [[*tables[0].rows[0][:-1], *tables[1].rows[0][2:], tables[0].rows[0][-1]]])
    cells = dict(zip(table.header, table.rows[0], strict=True))
    estimate = row.checks_per_case
    shown = f"{estimate.value:.2f} [{estimate.low:.2f}, {estimate.high:.2f}]"
    assert cells["checks / case (mean [95% interval])"] == shown
    assert (cells["generated"], cells["final"], cells["final / generated (%)"]) == ("12", "6", "50.0")
    assert table.header[-6:] == [
        "final / generated (%)", "awaiting a human", "rejected", "replay failed", "passed by a trivial agent",
        "screened out (by reason)"]  # fmt: skip
    assert table.rows[0][-5:] == ["2", "3", "1", "2", "oracle_fails 1, passed_by_noop 2"]
    rounds = rounds_table([row])
    assert rounds.header == ["domain / suite", "R1", "R2", "R3", "R4", "R5"]
    assert rounds.rows == [["operations / gen", "1 (8.3%)", "3 (25.0%)", "4 (33.3%)", "4 (33.3%)", "5 (41.7%)"]]


def test_a_manifest_without_some_counts_shows_n_a(generated: Path) -> None:
    domain, suite = find_suite(str(generated))
    partial = suite.model_copy(
        update={"manifest": suite.manifest.model_copy(update={"stage_counts": {"generated": 3}, "screening": {}})}
    )
    row = generation_row(partial, domain)
    assert row is not None and row.counts == (3, None, None, None)
    cells = {label: cell for t in generation_tables([row]) for label, cell in zip(t.header, t.rows[0], strict=True)}
    assert (cells["forward-validated"], cells["final / generated (%)"], cells["rejected"]) == ("n/a", "n/a", "n/a")
    assert (cells["passed by a trivial agent"], cells["screened out (by reason)"]) == ("n/a", "n/a")
    assert generation_row(find_suite("operations/starter")[1], domain) is None  # hand-written: no row


@pytest.mark.slow
def test_report_shows_table_2_and_the_rounds_figure(generated: Path, scripted_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    assert main(["--db", str(scripted_db), "--out", str(out), "--k", "1", "--suite", str(generated)]) == 0
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert all(f"## {title}" in markdown for title in GENERATION_TITLES)
    assert "| operations / gen | 1 (8.3%) | 3 (25.0%) |" in markdown
    assert "![validated_by_round](figures/validated_by_round.png)" in markdown
    assert (out / "figures" / "validated_by_round.png").stat().st_size > 1000
    assert (out / "report.html").read_text(encoding="utf-8").count("data:image/png;base64,") == 5


def test_judge_edits_count_by_direction_and_a_samples_shared_entries_once(generated: Path) -> None:
    domain, suite = find_suite(str(generated))
    assert generation_row(suite, domain).judge_edits is None  # type: ignore[union-attr]  # no history: n/a
    shared = {"round": 1, "stage": "conflict_resolution", "scenario": None, "applied": True,
              "edits": [{"op": "add_condition", "tool": "t", "section": "pre", "expr": "x"}]}  # fmt: skip
    own_edits = [{"op": "add_check", "check": "CALL t()"}, {"op": "replace_goal", "index": 0, "expr": "y"}]
    own = {"round": 2, "stage": "backward_audit", "applied": True, "edits": own_edits}
    refused = {
        "round": 2,
        "stage": "locus_reassessment",
        "applied": False,
        "edits": [{"op": "remove_check", "id": "a"}],
    }
    histories = {"gen-s000-1": [shared, {**own, "scenario": "s000-1"}], "gen-s000-2": [shared, refused],
                 "gen-s001-1": [shared, {**own, "scenario": "s001-1"}]}  # fmt: skip
    cases = [
        case.model_copy(update={"id": cid, "validation": ValidationRecord(status="validated", history=history)})
        for case, (cid, history) in zip(suite.cases, histories.items(), strict=False)
    ]
    row = generation_row(suite.model_copy(update={"cases": cases}), domain)
    assert row is not None
    # world model: the shared condition once per sample (2) and each own goal (2); checks: each own add_check
    assert row.judge_edits == (4, 2)
    cells = {label: cell for t in generation_tables([row]) for label, cell in zip(t.header, t.rows[0], strict=True)}
    assert (cells["judge edits: world model"], cells["judge edits: checks"]) == ("4", "2")
