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
