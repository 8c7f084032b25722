"""The main command, run in-process with scripted agents (no model needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mantra_env.run import main
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
    assert "Pass@1             100.0%" in out and "Pass^2             100.0%" in out
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


def test_noop_fails_and_case_filter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "runs.duckdb")
    assert main(["--model", "scripted:noop", "--attempts", "1", "--cases", "fig1-*", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "2 cases x 1 attempts" in out and "Pass@1               0.0%" in out


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


def test_d8_the_local_servers_log_goes_beside_the_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mantra_env.run import _agent_factory, parser

    started: dict[str, object] = {}

    class Server:
        api_base = "http://127.0.0.1:9/v1"

        def stop(self) -> None:
            started["stopped"] = True

    def start_server(**options: object) -> Server:
        started.update(options)
        return Server()

    monkeypatch.setattr("agents.local_server.start_server", start_server)
    args = parser().parse_args(["--model", "local", "--db", str(tmp_path / "runs" / "r.duckdb")])
    stack: list[object] = []
    _agent_factory(args.model, args, stack)
    assert started["log_dir"] == tmp_path / "runs" and len(stack) == 1
