"""The report's numbers equal the metric functions' output; files exist; bad input is a clear error."""

import json
from pathlib import Path

import pytest

from mantra_env.graders.analysis import summarize_run
from mantra_env.graders.report import main, write_report
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
            # "ops" is no suite mantra-env can find: its size is unknown ("?"), and a note says so
            row = f"| {summary.model} | ops | 3 / ? | 12 | 0 | {100 * summary.pass_at_1.value:.1f} \\["
            assert row in markdown
            assert f"{100 * summary.premature_write_rate:.1f}" in markdown
    assert "| ops | strong | weak | +50.0 \\[" in markdown


@pytest.mark.slow  # the retail suite's generation row (Table 2) takes seconds
def test_report_shows_each_suites_refusal_share(db: Path, tmp_path: Path) -> None:
    """The refusal share (what scripted:decline can score) of every suite the report looks up; the hand-written
    starter suite stores no plans, so its cases are counted as n/a."""
    out = tmp_path / "report"
    assert main(["--db", str(db), "--out", str(out), "--suite", "retail", "--suite", "operations"]) == 0
    markdown = (out / "report.md").read_text()
    assert "## Refusal share per suite" in markdown
    assert "| retail/generated | 260 | 90 | 170 | 0 | 34.6 |" in markdown
    assert "| operations/starter | 14 | 0 | 0 | 14 | n/a |" in markdown
    assert "Refusal share per suite" in (out / "report.html").read_text()


def test_report_with_unknown_run_is_a_clear_error(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(db), "--run", "nope", "--out", str(tmp_path)]) == 2
    assert "no such run(s)" in capsys.readouterr().err


def test_report_without_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", str(tmp_path / "missing.duckdb"), "--out", str(tmp_path)]) == 2
    assert "no rollout database" in capsys.readouterr().err


def test_report_of_empty_database(tmp_path: Path) -> None:
    with RolloutStore(tmp_path / "empty.duckdb") as store, pytest.raises(Exception, match="holds no runs yet"):
        write_report(store, tmp_path / "out")


# -- databases the report did not create, and hostile text (issue 13: D10, D16, D17) -----------------------------


def _one_line_error(capsys: pytest.CaptureFixture[str], *parts: str) -> None:
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    for part in parts:
        assert part in err, err


def test_d10_report_on_another_applications_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import duckdb

    path = tmp_path / "other.duckdb"
    conn = duckdb.connect(str(path))
    conn.execute("CREATE TABLE runs (id INTEGER)")
    conn.close()
    before = path.read_bytes()
    assert main(["--db", str(path), "--out", str(tmp_path / "out")]) == 2
    _one_line_error(capsys, "is not a mantra-env rollout database")
    assert path.read_bytes() == before and not (tmp_path / "out").exists()


def test_d10_report_on_an_older_or_newer_schema(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with RolloutStore(db) as store:
        store.conn.execute("DELETE FROM schema_migrations WHERE version > 1")  # back to what version 1 made
        store.conn.execute("ALTER TABLE runs DROP COLUMN suite_hash; ALTER TABLE runs DROP COLUMN settings")
        store.conn.execute("ALTER TABLE runs DROP COLUMN grader_version")
        store.conn.execute("DROP VIEW v_unrequested_writes")
        store.conn.execute("ALTER TABLE episodes DROP COLUMN all_checks_passed")
        store.conn.execute("ALTER TABLE episodes DROP COLUMN unrequested_writes")
        for view in ("v_failed_checks", "v_attempt_behaviour", "v_first_steps", "v_task_counts", "v_episodes"):
            store.conn.execute(f"DROP VIEW {view}")
    assert main(["--db", str(db), "--out", str(tmp_path / "out")]) == 2
    _one_line_error(capsys, "schema version 1, older", f"python -m mantra_env.store --db {db}")
    with RolloutStore(db) as store:
        store.conn.execute("INSERT INTO schema_migrations VALUES (99, now())")
    assert main(["--db", str(db), "--out", str(tmp_path / "out")]) == 2
    _one_line_error(capsys, "schema version 99, newer than this mantra-env")


@pytest.mark.parametrize("k", ["0", "-3"])
def test_d10_report_k_below_one(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], k: str) -> None:
    assert main(["--db", str(db), "--k", k, "--out", str(tmp_path / "out")]) == 2
    _one_line_error(capsys, f"--k must be at least 1 (got {k})")


def test_d10_report_out_on_an_unwritable_path(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("not a folder")
    assert main(["--db", str(db), "--out", str(tmp_path / "file" / "report")]) == 2
    _one_line_error(capsys, f"cannot write the report to {tmp_path / 'file' / 'report'}")


def test_d16_a_crafted_view_cannot_put_a_local_file_into_the_report(db: Path, tmp_path: Path) -> None:
    import duckdb

    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0:TOP-SECRET\n")
    conn = duckdb.connect(str(db))
    conn.execute(
        "CREATE OR REPLACE VIEW v_failed_checks AS SELECT c.*, "
        f"(SELECT split_part(content, chr(10), 1) FROM read_text('{secret}')) AS model, r.suite, "
        "json_extract_string(c.evidence, '$.explanation') AS explanation "
        "FROM check_verdicts c JOIN runs r USING (run_id) WHERE NOT c.passed"
    )
    conn.close()
    out = tmp_path / "report"
    assert main(["--db", str(db), "--out", str(out)]) == 0
    for name in ("report.md", "report.html"):
        text = (out / name).read_text(encoding="utf-8")
        assert "TOP-SECRET" not in text and "strong" in text


def test_d17_report_md_escapes_cell_text(tmp_path: Path) -> None:
    path = tmp_path / "db.duckdb"
    model = "a|b <script>alert(1)</script> [x](http://e)"
    with RolloutStore(path) as store:
        store.start_run(RunRecord(run_id="r", suite="ops", model=model, agent="strands"))
        store.record_episode(episode("A", 0, GOOD, run="r"))
    out = tmp_path / "report"
    assert main(["--db", str(path), "--out", str(out)]) == 0
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert "<script>" not in markdown
    lines = markdown.splitlines()
    for title in ("## Leaderboard", "## Leaderboard: behaviour, errors and cost"):
        start = lines.index(title)
        header, row = lines[start + 2], lines[start + 4]
        assert r"a\|b &lt;script&gt;alert(1)&lt;/script&gt; \[x\](http://e)" in row and "| ops |" in row
        assert row.count(" | ") == header.count(" | ")  # the table keeps its columns


def test_price_gives_the_cost_column(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    assert main(["--db", str(db), "--out", str(out), "--k", "2", "--price", "strong=3,15"]) == 0
    markdown = (out / "report.md").read_text()
    # every episode of the fixture used 100 input and 10 output tokens; "weak" has no price
    assert "| 110 | 0.0004 |" in markdown and "| 110 | n/a |" in markdown


def test_price_by_the_litellm_model_string_of_the_alias_the_run_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 34, point 10: a run stores the alias it was given (``mini``); ``--price`` with the alias's litellm
    model string was silently ignored (cost n/a)."""
    models = tmp_path / "models.yaml"
    models.write_text("models:\n  mini:\n    model: openai/gpt-4o-mini\n", encoding="utf-8")
    monkeypatch.setenv("MANTRA_MODELS_FILE", str(models))
    path = tmp_path / "db.duckdb"
    with RolloutStore(path) as store:
        store.start_run(RunRecord(run_id="r", suite="ops", model="mini", agent="strands"))
        store.record_episode(episode("A", 0, GOOD, run="r"))
    out = tmp_path / "report"
    assert main(["--db", str(path), "--out", str(out), "--price", "openai/gpt-4o-mini=3,15"]) == 0
    assert "| 110 | 0.0004 |" in (out / "report.md").read_text()


def test_a_price_for_a_model_of_no_run_is_refused_in_one_line(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", str(db), "--out", str(tmp_path / "report"), "--price", "openai/gpt-4o=2.5,10"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --price openai/gpt-4o: no run of that model in the report; its models are strong")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "report").exists()  # refused before anything is written


@pytest.mark.parametrize("price", ["strong", "strong=3", "=1,2", "strong=a,b", "strong=-1,2"])
def test_a_malformed_price_is_a_clear_error(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], price: str
) -> None:
    assert main(["--db", str(db), "--out", str(tmp_path), "--price", price]) == 2
    assert f"--price {price!r}: expected MODEL=IN,OUT" in capsys.readouterr().err


def test_importing_the_figures_leaves_the_backend_alone() -> None:
    """A notebook's inline backend must survive ``from graders import figures`` (only the CLI forces Agg)."""
    import subprocess
    import sys

    code = (
        "import matplotlib; matplotlib.use('svg'); import mantra_env.graders.figures, mantra_env.graders.report; "
        "print(matplotlib.get_backend())"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "svg"


def test_audit_file_gives_the_suite_audit_table(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--audit FILE`` shows the table ``mantra audit`` printed (one definition: mantra_env.graders.suite_audit)."""
    entry = {
        "suite": "retail/generated-v3", "cases": 80, "refusals": 46, "baseline_passed": {"decline": 46, "read-all": 23},
        "checks_per_case": 5.14, "independent_checks_per_case": 5.0, "answer_checked": 0, "wrong_mutants": 242,
        "wrong_failed_by_checks": 239, "wrong_failed": 242, "variants": 89, "variants_passed": 89,
    }  # fmt: skip
    audit = tmp_path / "audit.json"
    audit.write_text(json.dumps([entry]))
    out = tmp_path / "report"
    assert main(["--db", str(db), "--out", str(out), "--audit", str(audit)]) == 0
    markdown = (out / "report.md").read_text()
    assert "## Suite audit:" in markdown
    assert (
        "| retail/generated-v3 | 80 | 57.5 % (46/80) | 57.5 % (46/80) | 28.8 % (23/80) | 5.14 (5.00) | 0 "
        "| 98.8 % (239/242) | 100.0 % (242/242) | 100.0 % (89/89) |"
    ) in markdown
    assert "Suite audit" in (out / "report.html").read_text()
    audit.write_text(json.dumps([{"suite": "x"}]))
    assert main(["--db", str(db), "--out", str(out), "--audit", str(audit)]) == 2
    err = capsys.readouterr().err
    assert "entry 0 is not an audit of a suite" in err and "mantra audit SUITE... --json FILE" in err
