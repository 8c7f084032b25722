"""The report's numbers equal the metric functions' output; files exist; bad input is a clear error."""

from pathlib import Path

import pytest

from graders.analysis import summarize_run
from graders.report import main, write_report
from mantra_env.store import RolloutStore, RunRecord

from .test_analysis import FORBIDDEN, GOOD, WRITE_FIRST, episode


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "mantra.duckdb"
    with RolloutStore(path) as store:
        for run, model, plan in [
            ("r1", "strong", [GOOD, GOOD, GOOD, WRITE_FIRST]),
            ("r2", "weak", [WRITE_FIRST, FORBIDDEN, [], GOOD]),
        ]:
            store.start_run(RunRecord(run_id=run, suite="ops", model=model, agent="strands"))
            for case in ("A", "B", "C"):
                for attempt, tools in enumerate(plan):
                    store.record_episode(episode(case, attempt, tools, run=run))
    return path


def test_report_files_and_numbers(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    assert main(["--db", str(db), "--out", str(out), "--k", "2"]) == 0
    markdown = (out / "report.md").read_text()
    page = (out / "report.html").read_text()
    for name in ("pass_at_k", "failure_categories", "premature_write"):
        assert (out / "figures" / f"{name}.png").stat().st_size > 1000
        assert (out / "figures" / f"{name}.svg").exists()
    assert page.count("data:image/png;base64,") == 3
    assert "<table>" in page and "Leaderboard" in page
    with RolloutStore(db, read_only=True) as store:
        for run in ("r1", "r2"):
            summary = summarize_run(store, run, k=2)
            row = f"| {summary.model} | ops | 3 | 12 | 0 | {100 * summary.pass_at_1.value:.1f} ± "
            assert row in markdown
            assert f"{100 * summary.premature_write_rate:.1f}" in markdown
    assert "| ops | strong | weak | +50.0 |" in markdown


def test_report_with_unknown_run_is_a_clear_error(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(db), "--run", "nope", "--out", str(tmp_path)]) == 2
    assert "no such run(s)" in capsys.readouterr().err


def test_report_without_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(tmp_path / "missing.duckdb"), "--out", str(tmp_path)]) == 2
    assert "no rollout database" in capsys.readouterr().err


def test_report_of_empty_database(tmp_path: Path) -> None:
    with RolloutStore(tmp_path / "empty.duckdb") as store, pytest.raises(Exception, match="holds no runs yet"):
        write_report(store, tmp_path / "out")
