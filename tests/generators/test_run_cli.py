"""``python -m generators.run`` in-process: a run, a resumed run, and bad input as one-line errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generators.run import main

FIXTURE = Path(__file__).parent / "fixtures" / "ops-mini"


@pytest.mark.slow
def test_run_stop_and_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("config.yaml", "manual.md", "responses.yaml"):
        shutil.copy(FIXTURE / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    assert main(["--config", "config.yaml", "--stop-after", "samples"]) == 0
    captured = capsys.readouterr()
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert "stopped after samples; resume with --resume" in captured.out
    assert "stage graph done" in captured.err and (run_dir / "config.yaml").exists()
    assert main(["--resume", str(run_dir)]) == 0  # the run's own copy of the config
    out = capsys.readouterr().out
    assert "funnel: generated 3, forward_validated 3, backward_validated 3, final 2" in out
    assert "screened out: oracle_premature_write 1" in out
    assert f"suite: {run_dir / 'export' / 'suite'}" in out
    assert "LLM: 13 requests, 0 cache hits" in out  # the 6 graph requests were not repeated
    assert (run_dir / "session.log").read_text().count("attempt 0 unusable") == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--resume", "/nonexistent/run"], "--resume /nonexistent/run: no such run directory"),
        ([], "give --config CONFIG.yaml"),
        (["--config", "/nonexistent.yaml"], "cannot read the config"),
    ],
)
def test_bad_input_is_one_line(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err
