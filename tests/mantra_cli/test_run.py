"""The main command, run in-process with scripted agents (no model needed)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mantra_env.graders.report import main as report_main
from mantra_env.mantra_cli.run import main
from mantra_env.store import RolloutStore


def test_example_grades_the_running_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--example"]) == 0
    out = capsys.readouterr().out
    assert "fig1-case1 / compliant: PASS (4/4 checks)" in out
    assert "fig1-case1 / premature write: FAIL (2/4 checks)" in out
    assert "FAIL [ordering_violation]" in out
    assert "graded 4 traces" in out


def test_oracle_run_prints_the_summary_and_stores_every_episode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "runs.duckdb"
    args = ["--model", "scripted:oracle", "--attempts", "2", "--db", str(db), "--run-name", "oracle"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "run oracle: scripted:oracle on operations/starter, 14 cases x 2 attempts" in out
    assert "Pass@1 (%)         100.0 [78.5, 100.0] Wilson" in out  # 14 of 14 cases
    assert "Pass^2 (%)         100.0 [78.5, 100.0] Wilson" in out
    assert "unrequested writes not graded for writes (the suite stores no oracle plans: checks only)" in out
    assert f"rollouts: {db}" in out
    with RolloutStore(db) as store:
        assert store.query("SELECT count(*), count(*) FILTER (WHERE status = 'passed') FROM episodes") == [(28, 28)]

    # The same run again needs --resume, and resuming a finished run stores nothing new.
    assert main(args) == 2
    assert "add --resume" in capsys.readouterr().err
    assert main([*args, "--resume"]) == 0
    assert "28 episodes were already stored" in capsys.readouterr().out
    with RolloutStore(db) as store:
        assert store.query("SELECT count(*) FROM episodes") == [(28,)]


def test_the_summary_gives_the_unrequested_writes_of_a_suite_with_oracle_plans(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--model", "scripted:oracle", "--suite", "operations/generated", "--attempts", "1"]
    assert main([*args, "--cases", "generated-s000-1", "--db", str(tmp_path / "r.duckdb")]) == 0
    assert "unrequested writes 0.0% of the 1 episodes graded for writes" in capsys.readouterr().out


def test_noop_fails_and_case_filter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "runs.duckdb")
    assert main(["--model", "scripted:noop", "--attempts", "1", "--cases", "fig1-*", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "2 cases x 1 attempt" in out and "Pass@1 (%)         0.0 [0.0, 65.8] Wilson" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "scripted:genius"], "unknown scripted agent 'genius'"),
        (["--model", "scripted:oracle", "--cases", "nope-*"], "matches no case"),
        (["--model", "scripted:oracle", "--suite", "nowhere"], "nowhere"),
        (["--model", "gtp-4"], "unknown model 'gtp-4'"),
    ],
)
def test_bad_options_are_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main([*args, "--db", str(tmp_path / "x.duckdb")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err


def stub_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, api_base: str, key: bool = True) -> None:
    models = tmp_path / "models.yaml"
    key_line = "    api_key: not-a-key\n" if key else ""
    models.write_text(f"models:\n  stub:\n    model: openai/stub-model\n    api_base: {api_base}\n{key_line}")
    monkeypatch.setenv("MANTRA_MODELS_FILE", str(models))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def run_stub(tmp_path: Path, *extra: str) -> int:
    args = ["--model", "stub", "--attempts", "1", "--cases", "fig1-case1", "--retries", "0"]
    return main([*args, "--db", str(tmp_path / "r.duckdb"), *extra])


@pytest.mark.parametrize(
    ("answer", "fix"),
    [
        ({"status": 401}, "refused the API key"),
        ({"status": 404}, "does not know this model"),
        ({"status": 400}, "tool calling"),
        (None, "cannot reach the endpoint"),
        ("no key", "no API key; set OPENAI_API_KEY"),
    ],
    ids=["401", "404", "400", "unreachable", "missing-key"],
)
def test_d3_a_wrong_key_model_or_endpoint_is_one_line_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], answer: object, fix: str
) -> None:
    from tests.agents.stub_server import serve

    with serve([answer] * 5 if isinstance(answer, dict) else []) as stub:
        api_base = stub.api_base
        if answer is None:
            stub.server.server_close()  # nothing listens on the port any more
        stub_models(tmp_path, monkeypatch, api_base, key=answer != "no key")
        assert run_stub(tmp_path) == 2
        assert len(stub.requests) == (1 if isinstance(answer, dict) else 0)
    captured = capsys.readouterr()
    lines = [line for line in (captured.out + captured.err).splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: stub (openai/stub-model at {api_base}): ") and fix in lines[0]
    assert not (tmp_path / "r.duckdb").exists()  # no run row, no episodes


def test_d11_a_run_whose_every_episode_is_an_infrastructure_error_exits_non_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.agents.stub_server import serve, text

    with serve([text("ready"), {"status": 500}]) as stub:  # the preflight passes, the episode fails
        stub_models(tmp_path, monkeypatch, stub.api_base)
        assert run_stub(tmp_path) == 1
    assert "every episode ended in an infrastructure error" in capsys.readouterr().err
    with RolloutStore(tmp_path / "r.duckdb") as store:
        assert store.query("SELECT status, error_kind FROM episodes") == [("error", "server")]


def test_a_key_revoked_mid_run_stops_the_run_with_a_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.agents.stub_server import serve, text

    with serve([text("ready")] + [{"status": 401}] * 20) as stub:
        stub_models(tmp_path, monkeypatch, stub.api_base)
        assert run_stub(tmp_path, "--cases", "tr-*", "--concurrency", "1") == 1
    assert "stopped after 3 consecutive authentication errors" in capsys.readouterr().err
    with RolloutStore(tmp_path / "r.duckdb") as store:
        assert store.query("SELECT count(*) FROM episodes") == [(3,)]


# -- integrity of runs and options (issue 13: D4, D6, D10, D15, D17) ---------------------------------------------

NOOP = ["--model", "scripted:noop", "--attempts", "1", "--cases", "fig1-*"]


def _rows(db: Path) -> list[tuple[object, ...]]:
    with RolloutStore(db, read_only=True) as store:
        return store.query(
            "SELECT run_id, case_id, attempt, status, error_kind FROM episodes ORDER BY run_id, case_id, attempt"
        )


def _one_line_error(capsys: pytest.CaptureFixture[str], *parts: str) -> str:
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    for part in parts:
        assert part in err, err
    return err


def _starter_copy(folder: Path) -> Path:
    """A copy of the operations starter suite (same domain/name) to edit (without the manifest's cases_digest, which
    refuses hand-edited cases)."""
    from mantra_env.domains import load_domain

    source = load_domain("operations").suite_dirs["starter"]
    shutil.copytree(source, folder)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    (folder / "manifest.json").write_text(json.dumps({**manifest, "cases_digest": ""}), encoding="utf-8")
    return folder


def _edit_case(suite: Path, case_id: str, **changes: object) -> None:
    lines = (suite / "suite.jsonl").read_text(encoding="utf-8").splitlines()
    cases = [json.loads(line) for line in lines if line.strip()]
    for case in cases:
        if case["id"] == case_id:
            case.update(changes)
    (suite / "suite.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")


def test_d4_resume_without_run_name_continues_the_latest_run_of_the_suite_and_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "r.duckdb")
    assert main([*NOOP, "--db", db, "--run-name", "first"]) == 0
    assert main([*NOOP, "--db", db, "--run-name", "second"]) == 0
    capsys.readouterr()
    assert main([*NOOP, "--db", db, "--resume"]) == 0
    captured = capsys.readouterr()
    assert "resuming second, the latest run of operations/starter with scripted:noop (1 older: first" in captured.err
    assert "run second:" in captured.out and "2 episodes were already stored" in captured.out
    assert [row[0] for row in _rows(Path(db))] == ["first", "first", "second", "second"]


def test_d4_resume_without_run_name_and_no_run_of_that_model_names_the_candidates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.duckdb"
    assert main([*NOOP, "--db", str(db), "--run-name", "first"]) == 0
    before = _rows(db)
    capsys.readouterr()
    args = ["--model", "scripted:oracle", "--attempts", "1", "--cases", "fig1-*", "--db", str(db), "--resume"]
    assert main(args) == 2
    _one_line_error(capsys, "holds no run of operations/starter with model scripted:oracle",
                    "first (operations/starter, scripted:noop); name one with --run-name")  # fmt: skip
    assert _rows(db) == before


@pytest.mark.parametrize(
    ("change", "difference"),
    [
        (["--attempts", "2"], "attempts: 1 -> 2"),
        (["--seed", "7"], "seed: 0 -> 7"),
        (["--max-steps", "5"], "max_steps: 30 -> 5"),
        (["--timeout", "60"], "timeout: 300.0 -> 60.0"),
        (["--max-cycles", "3"], "max_cycles: 20 -> 3"),
        (["--model", "scripted:random"], "model: 'scripted:noop' -> 'scripted:random'"),
    ],
)
def test_d4_resuming_with_changed_settings_is_refused_with_the_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: list[str], difference: str
) -> None:
    db = tmp_path / "r.duckdb"
    assert main([*NOOP, "--db", str(db), "--run-name", "R"]) == 0
    before = _rows(db)
    capsys.readouterr()
    assert main([*NOOP, "--db", str(db), "--run-name", "R", "--resume", *change]) == 2
    _one_line_error(capsys, "run 'R' was stored with other settings", difference)
    assert _rows(db) == before


def test_d4_resuming_with_a_changed_suite_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "r.duckdb"
    suite = _starter_copy(tmp_path / "starter")
    assert main([*NOOP, "--db", str(db), "--run-name", "R", "--suite", str(suite)]) == 0
    before = _rows(db)
    _edit_case(
        suite, "fig1-case1", checks=json.loads((suite / "suite.jsonl").read_text().splitlines()[0])["checks"][:1]
    )
    capsys.readouterr()
    assert main([*NOOP, "--db", str(db), "--run-name", "R", "--resume", "--suite", str(suite)]) == 2
    _one_line_error(capsys, "suite content (hash of cases, manual, tools, database): ")
    assert _rows(db) == before


def test_resuming_a_run_graded_by_another_grader_version_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 31: a run stored before unrequested writes were graded (grader 1) is not continued by grader 2."""
    import duckdb

    db = tmp_path / "r.duckdb"
    assert main([*NOOP, "--db", str(db), "--run-name", "R"]) == 0
    conn = duckdb.connect(str(db))  # as migration 4 leaves a run stored before it
    conn.execute("UPDATE runs SET grader_version = 1")
    conn.close()
    before = _rows(db)
    capsys.readouterr()
    assert main([*NOOP, "--db", str(db), "--run-name", "R", "--resume"]) == 2
    _one_line_error(capsys, "run 'R' was graded by grader version 1 (the checks alone)", "another --run-name")
    assert _rows(db) == before
    assert main([*NOOP, "--db", str(db), "--run-name", "R2"]) == 0  # what the message says to do


def test_d4_retry_errors_reruns_the_error_episodes_in_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mantra_env.store import EpisodeRecord

    db = tmp_path / "r.duckdb"
    assert main([*NOOP, "--db", str(db), "--run-name", "R"]) == 0
    with RolloutStore(db) as store:  # as a provider outage would have left it
        store.conn.execute("DELETE FROM check_verdicts WHERE case_id = 'fig1-case1'")
        store.conn.execute("DELETE FROM steps WHERE case_id = 'fig1-case1'")
        store.conn.execute("DELETE FROM episodes WHERE case_id = 'fig1-case1'")
        error = EpisodeRecord(run_id="R", case_id="fig1-case1", attempt=0, status="error", error_kind="server")
        store.record_episode(error)
    assert main([*NOOP, "--db", str(db), "--run-name", "R", "--resume"]) == 0  # errors are kept without the flag
    assert "2 episodes were already stored" in capsys.readouterr().out
    assert ("R", "fig1-case1", 0, "error", "server") in _rows(db)
    assert main([*NOOP, "--db", str(db), "--resume", "--retry-errors"]) == 0
    assert "1 episodes were already stored" in capsys.readouterr().out
    assert _rows(db) == [("R", "fig1-case1", 0, "failed", None), ("R", "fig1-case2", 0, "failed", None)]
    assert main([*NOOP, "--db", str(db), "--retry-errors"]) == 2
    _one_line_error(capsys, "--retry-errors reruns the error episodes of a stored run: add --resume")


def test_the_summary_scores_the_tasks_scored_k_times_when_some_attempts_errored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 34, point 1: one errored attempt made the summary say "n/a (no scored episodes)" for Pass@k and Pass^k
    although nearly every episode was scored."""
    from mantra_env.store import EpisodeRecord

    db = tmp_path / "r.duckdb"
    args = ["--model", "scripted:oracle", "--attempts", "2", "--cases", "fig1-*", "--db", str(db), "--run-name", "R"]
    assert main(args) == 0
    with RolloutStore(db) as store:  # as a provider outage would have left attempt 1 of one case
        for table in ("check_verdicts", "steps", "episodes"):
            store.conn.execute(f"DELETE FROM {table} WHERE case_id = 'fig1-case1' AND attempt = 1")
        store.record_episode(EpisodeRecord(run_id="R", case_id="fig1-case1", attempt=1, status="error",
                                           error_kind="server"))  # fmt: skip
    capsys.readouterr()
    assert main([*args, "--resume"]) == 0
    out = capsys.readouterr().out
    assert "no scored episodes" not in out
    assert "Pass@1 (%)         100.0 [34.2, 100.0] Wilson" in out  # both cases, n = 2 tasks
    assert "Pass^2 (%)         100.0 [20.7, 100.0] Wilson, 1 of 2 tasks" in out
    assert "errors             1 of 4 episodes" in out


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--attempts", "0"], "--attempts must be at least 1 (got 0)"),
        (["--attempts", "-1"], "--attempts must be at least 1 (got -1)"),
        (["--attempts", "1000000000"], "lower --attempts or split the run with --cases"),
        (["--retries", "-1"], "--retries must be at least 0 (got -1)"),
        (["--timeout", "0"], "--timeout must be a positive, finite number of seconds (got 0.0)"),
        (["--timeout", "-5"], "--timeout must be a positive, finite number of seconds"),
        (["--timeout", "inf"], "--timeout must be a positive, finite number of seconds (got inf)"),
        (["--max-steps", "0"], "--max-steps must be at least 1 (got 0)"),
        (["--concurrency", "0"], "--concurrency must be at least 1 (got 0)"),
        (["--max-cycles", "0"], "--max-cycles must be at least 1 (got 0)"),
        (["--seed", "-1"], "--seed must be at least 0 (got -1)"),
    ],
)
def test_d6_out_of_range_options_are_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: list[str], message: str
) -> None:
    db = tmp_path / "sub" / "r.duckdb"
    assert main([*NOOP, "--db", str(db), *option]) == 2
    _one_line_error(capsys, message)
    assert not db.parent.exists()


def test_d6_a_refused_run_leaves_no_run_row_and_its_name_can_be_used_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.duckdb"
    assert main(["--model", "scripted:noop", "--cases", "nope-*", "--db", str(db), "--run-name", "R"]) == 2
    _one_line_error(capsys, "matches no case")
    assert not db.exists()
    assert main([*NOOP, "--db", str(db), "--run-name", "R"]) == 0
    assert len(_rows(db)) == 2


def test_d15_a_db_whose_folder_cannot_be_created_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("not a folder")
    assert main([*NOOP, "--db", str(tmp_path / "file" / "sub" / "r.duckdb")]) == 2
    _one_line_error(capsys, "cannot create the folder of rollout database")


def test_d10_run_refuses_another_applications_database_without_writing_to_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import duckdb

    db = tmp_path / "other.duckdb"
    conn = duckdb.connect(str(db))
    conn.execute("CREATE TABLE runs (id INTEGER)")
    conn.close()
    before = db.read_bytes()
    assert main([*NOOP, "--db", str(db)]) == 2
    _one_line_error(capsys, "is not a mantra-env rollout database (it holds runs but no schema_migrations table)")
    assert db.read_bytes() == before


def test_d17_an_empty_model_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--model", "", "--db", str(tmp_path / "r.duckdb")]) == 2
    _one_line_error(capsys, "--model is empty; leave it out for the default model")
    assert not (tmp_path / "r.duckdb").exists()


def test_d17_an_in_memory_database_says_the_rollouts_are_gone(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*NOOP, "--db", ":memory:"]) == 0
    out = capsys.readouterr().out
    assert "kept in memory only (--db :memory:) and gone now; pass --db FILE" in out
    assert "report --db :memory:" not in out
    assert main([*NOOP, "--db", ":memory:", "--resume"]) == 2
    _one_line_error(capsys, "--resume needs the run's database file")


def test_d17_timeout_nan_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*NOOP, "--db", str(tmp_path / "r.duckdb"), "--timeout", "nan"]) == 2
    _one_line_error(capsys, "--timeout must be a positive, finite number of seconds (got nan)")


def test_d17_a_bad_database_patch_is_refused_before_the_run_naming_the_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _starter_copy(tmp_path / "starter")
    _edit_case(suite, "fig1-case2", database_patch=[{"op": "set", "path": "items.NOPE.x", "value": 1}])
    db = tmp_path / "r.duckdb"
    assert main(["--model", "scripted:noop", "--attempts", "1", "--suite", str(suite), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: suite 'starter' does not fit domain 'operations'") and "Traceback" not in err
    assert "case 'fig1-case2': database_patch[0]: path 'items.NOPE' does not exist" in err
    assert not db.exists()


def test_d17_a_case_of_another_domain_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = _starter_copy(tmp_path / "starter")
    _edit_case(suite, "fig1-case2", domain="retail")
    db = tmp_path / "r.duckdb"
    assert main(["--model", "scripted:noop", "--attempts", "1", "--suite", str(suite), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: suite 'starter' does not fit domain 'operations'") and "Traceback" not in err
    assert "case 'fig1-case2': its domain is 'retail', not 'operations'" in err
    assert not db.exists()


def test_d17_an_empty_suite_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = _starter_copy(tmp_path / "starter")
    (suite / "suite.jsonl").write_text("", encoding="utf-8")
    manifest = json.loads((suite / "manifest.json").read_text(encoding="utf-8"))
    (suite / "manifest.json").write_text(json.dumps({**manifest, "case_count": 0}), encoding="utf-8")
    db = tmp_path / "r.duckdb"
    assert main(["--model", "scripted:noop", "--suite", str(suite), "--db", str(db)]) == 2
    _one_line_error(capsys, "suite 'starter' has no cases: nothing to run")
    assert not db.exists()


def test_d8_the_local_servers_log_goes_beside_the_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mantra_env.mantra_cli.run import _agent_factory, parser

    started: dict[str, object] = {}

    class Server:
        api_base = "http://127.0.0.1:9/v1"

        def stop(self) -> None:
            started["stopped"] = True

    def start_server(**options: object) -> Server:
        started.update(options)
        return Server()

    monkeypatch.setattr("mantra_env.agents.local_server.start_server", start_server)
    args = parser().parse_args(["--model", "local", "--db", str(tmp_path / "runs" / "r.duckdb")])
    stack: list[object] = []
    _agent_factory(args.model, args, stack)
    assert started["log_dir"] == tmp_path / "runs" and len(stack) == 1


def test_a_run_whose_stderr_is_not_a_terminal_logs_progress_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """CI logs: a line per finished episode (here 4, fewer than one per 5 %), no carriage returns."""
    args = ["--model", "scripted:oracle", "--attempts", "2", "--cases", "fig1-*", "--db", str(tmp_path / "r.duckdb")]
    assert main(args) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("scripted:oracle episodes: ")]
    assert [line.split()[2:4] for line in lines] == [
        ["1/4", "(25%)"],
        ["2/4", "(50%)"],
        ["3/4", "(75%)"],
        ["4/4", "(100%)"],
    ]
    assert all("passed" in line and "errors 0" in line for line in lines) and "\r" not in err


def test_baselines_put_the_model_beside_the_reference_agents_on_the_same_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.duckdb"
    args = ["--model", "scripted:write-first", "--attempts", "1", "--cases", "fig1-*", "--db", str(db)]
    assert main([*args, "--run-name", "wf", "--baselines"]) == 0
    out = capsys.readouterr().out
    table = out[out.index("beside the reference agents") :].splitlines()[1:7]
    assert [line.split()[0] for line in table] == [
        "agent",
        "scripted:write-first",
        "scripted:oracle",
        "scripted:noop",
        "scripted:decline",
        "scripted:read-all",
    ]
    assert table[2].split()[1:] == ["100.0", "[34.2,", "100.0]", "Wilson", "0.0%", "0/2"]  # as the report prints
    assert table[3].split()[1] == "0.0"
    assert table[4].split()[1] == table[5].split()[1] == "0.0"  # both figure cases ask for a write
    assert table[4].split()[-2] == table[5].split()[-2] == "0.0%"  # and neither writes early
    with RolloutStore(db) as store:
        rows = store.query("SELECT run_id, model, count(*) FROM v_episodes GROUP BY ALL ORDER BY run_id")
    assert rows == [
        ("wf", "scripted:write-first", 2),
        ("wf-decline", "scripted:decline", 2),
        ("wf-noop", "scripted:noop", 2),
        ("wf-oracle", "scripted:oracle", 2),
        ("wf-read-all", "scripted:read-all", 2),
    ]


@pytest.mark.parametrize("name", ["a/b", "a#b", "a?b=c", "pct%2e%2e", "sp ace", "tab\tx", "..", "-x", "", "x" * 129])
def test_n5_run_names_outside_the_safe_charset_are_refused(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.duckdb"
    assert main([*NOOP, "--db", str(db), f"--run-name={name}"]) == 2
    _one_line_error(capsys, "is not a run name: use letters, digits and . _ : + @ -")
    assert not db.exists()


def test_n5_the_closing_hint_is_a_shell_quoted_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shlex

    db = tmp_path / "my runs; rm -rf x" / "r.duckdb"
    assert main([*NOOP, "--db", str(db), "--run-name", "nightly+v2@host:1"]) == 0
    hint = capsys.readouterr().out.rsplit("(report: ", 1)[1].rstrip().removesuffix(")")
    assert shlex.split(hint) == [
        "python",
        "-m",
        "mantra_env.graders.report",
        "--db",
        str(db),
        "--run",
        "nightly+v2@host:1",
    ]


def test_n10_a_run_on_an_edited_copy_of_a_suite_is_stored_under_its_path_and_exports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mantra_env.mantra_cli.export import main as export_main

    db, oracle = tmp_path / "r.duckdb", ["--model", "scripted:oracle", "--attempts", "1", "--cases", "fig1-case1"]
    same = _starter_copy(tmp_path / "same")
    assert main([*oracle, "--db", str(db), "--run-name", "same", "--suite", str(same)]) == 0
    edited = _starter_copy(tmp_path / "edited")
    case = json.loads((edited / "suite.jsonl").read_text(encoding="utf-8").splitlines()[0])
    _edit_case(
        edited, case["id"], scenario={**case["scenario"], "prompt": "An edited prompt. " + case["scenario"]["prompt"]}
    )
    assert main([*oracle, "--db", str(db), "--run-name", "edited", "--suite", str(edited)]) == 0
    with RolloutStore(db, read_only=True) as store:
        stored = store.query("SELECT run_id, suite FROM runs ORDER BY run_id")
    assert stored == [("edited", str(edited.resolve())), ("same", "operations/starter")]
    out = tmp_path / "export.jsonl"
    capsys.readouterr()
    assert export_main(["--db", str(db), "--format", "openai-jsonl", "--include-oracle", "--out", str(out)]) == 0
    records = {record["run_id"]: record for record in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert records["edited"]["suite"] == str(edited.resolve()) and records["same"]["suite"] == "operations/starter"
    prompts = [message["content"] for message in records["edited"]["messages"] if message["role"] == "user"]
    assert prompts[0].startswith("An edited prompt. ")


@pytest.mark.slow  # the retail suite's generation row (Table 2) takes seconds
def test_the_summary_prints_the_refusal_share_of_the_cases_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a generated suite decline's Pass@1 is the refusal share; the starter suite stores no plans: n/a."""
    db = str(tmp_path / "r.duckdb")
    base = ["--model", "scripted:decline", "--attempts", "1", "--db", db]
    cases = ["generated-s000-1", "generated-s000-2", "generated-s000-3"]  # one pays, two decline (retail)
    assert main([*base, "--suite", "retail", "--cases", *cases]) == 0
    out = capsys.readouterr().out
    assert "refusal share      66.7% (2 of 3 cases with a stored plan)" in out
    assert "Pass@1 (%)         66.7 [20.8, 93.9] Wilson" in out
    assert main([*base, "--cases", "fig1-*"]) == 0
    assert "refusal share      n/a (2 case(s) without a stored plan: n/a)" in capsys.readouterr().out

    # The report: decline is a leaderboard row like any model, beside its suites' refusal shares.
    assert report_main(["--db", db, "--out", str(tmp_path / "report"), "--k", "1"]) == 0
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "| scripted:decline | retail/generated | " in markdown and "| 3 / 260 (partial) |" in markdown
    assert "| retail/generated | 260 | 90 | 170 | 0 | 34.6 |" in markdown
    assert "| operations/starter | 14 | 0 | 0 | 14 | n/a |" in markdown
