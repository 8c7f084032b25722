"""The bundled CPU model end to end through the main command (slow: about a minute on two cores)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mantra_env.mantra_cli.run import main
from mantra_env.store import RolloutStore


@pytest.mark.slow
def test_the_bundled_model_runs_a_case_through_the_main_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "local.duckdb"
    # --timeout: an episode takes ~16 s here but minutes on a loaded machine, which must not make it an error.
    # Two cycles: the model's second request carries the first one's tool call and its result back to the server.
    # One case (two took twice as long and tested nothing more: the server is started once per run either way).
    args = ["--cases", "tr-within-budget", "--attempts", "1", "--max-cycles", "2", "--timeout", "3600"]
    assert main([*args, "--concurrency", "1", "--db", str(db), "--run-name", "local"]) == 0
    out = capsys.readouterr().out
    assert "run local: local on operations/starter, 1 case x 1 attempt" in out
    with RolloutStore(db) as store:
        rows = store.query("SELECT status, model_calls, input_tokens, latency_s FROM episodes ORDER BY case_id")
    # The episode was graded (the model answered, however badly); it was no infrastructure error.
    assert [status in ("passed", "failed") for status, *_ in rows] == [True]
    assert all(calls >= 1 and tokens > 1000 for _, calls, tokens, _ in rows)
