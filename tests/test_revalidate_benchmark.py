"""benchmarks/revalidate.py on two starter cases: the per-case rows (verdict, phases, calibration), the report's
distribution and slowest list at the 25 us reference, and ``--memo DIR`` reading a solved case back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.revalidate import PHASES, main, percentile, scaled, shipped_suites
from mantra_env import authoring
from tests.spies import keyword_calls

CASES = ["fig1-case1", "fig1-case2"]


@pytest.mark.slow
def test_rows_report_and_memo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows_path, memo = tmp_path / "rows.jsonl", tmp_path / "memo"
    argv = ["--suite", "operations/starter", "--cases", *CASES, "--json", str(rows_path), "--memo", str(memo)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    rows = [json.loads(line) for line in rows_path.read_text().splitlines()]
    assert [row["case"] for row in rows] == CASES
    for row in rows:
        assert (
            row["verdict"] == "valid" and row["memo"] is False and row["calibration_us"] > 0 < row["cpu_calibration_us"]
        )
        assert set(row["phases"]) == set(PHASES) and row["phases"]["build"] > 0 and row["phases"]["forward"] > 0
    assert "operations/starter (2 cases): median" in out and "at the 25 us reference: median" in out
    assert "overall (2 cases)" in out and "slowest ten" in out and "verdicts: 2 valid" in out
    assert out.count("calibration: sum(range(1000)) takes") == 4  # before, over the run (wall, CPU), after
    assert "CPU seconds at the reference: median" in out

    assert main(argv) == 0  # again: both read back from the memo
    rows = [json.loads(line) for line in rows_path.read_text().splitlines()]
    assert [(row["memo"], row["verdict"]) for row in rows] == [(True, "valid")] * 2
    capsys.readouterr()

    assert main(["--from-json", str(rows_path)]) == 0  # the report again from stored rows, nothing solved
    out = capsys.readouterr().out
    assert "operations/starter (2 cases): median" in out and "CPU seconds at the reference" in out
    assert "wall time: " not in out


def test_figures_scale_to_the_reference_and_p90_is_nearest_rank() -> None:
    assert scaled({"seconds": 2.0, "calibration_us": 50.0}) == pytest.approx(1.0)
    assert scaled({"cpu_seconds": 0.8, "cpu_calibration_us": 10.0, "calibration_us": 50.0}, cpu=True) == pytest.approx(
        2.0
    )
    assert percentile([float(n) for n in range(1, 11)], 0.9) == 9.0
    assert percentile([5.0], 0.9) == 5.0
    assert {Path(folder).name for folder in shipped_suites()} >= {"starter", "generated"}


@pytest.mark.slow
def test_modes_forced_on_reach_the_solver_the_rows_and_the_memo_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = keyword_calls(monkeypatch, authoring, "CaseSolver")
    rows_path, memo = tmp_path / "rows.jsonl", tmp_path / "memo"
    argv = ["--suite", "operations/starter", "--cases", CASES[0], "--json", str(rows_path), "--memo", str(memo)]
    assert main([*argv, "--canonical-lists", "--refuse-invented-ids"]) == 0
    assert "solver modes forced on: canonical_lists, refuse_invented_ids" in capsys.readouterr().out
    # the compliant witness is found at its own length in any mode (authoring.validate_case)
    assert asked == [{"refuse_invented_ids": True, "canonical_lists": True, "witness_at_own_length": True}]
    (row,) = [json.loads(line) for line in rows_path.read_text().splitlines()]
    assert row["modes"] == ["canonical_lists", "refuse_invented_ids"] and row["verdict"] == "valid"
    assert main(argv) == 0  # off: another memo key, so solved again, in the default modes
    (row,) = [json.loads(line) for line in rows_path.read_text().splitlines()]
    assert row["memo"] is False and "modes" not in row and asked[-1] == {"witness_at_own_length": True}


def test_short_conflicts_first_reaches_the_solver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked = keyword_calls(monkeypatch, authoring, "CaseSolver")
    argv = ["--suite", "operations/starter", "--cases", CASES[0], "--json", str(tmp_path / "rows.jsonl")]
    assert main([*argv, "--short-conflicts-first"]) == 0
    assert asked == [{"short_conflicts_first": True, "witness_at_own_length": True}]
