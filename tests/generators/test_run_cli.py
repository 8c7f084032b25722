"""``python -m mantra_env.generators.run`` in-process: a run, a resumed run, and bad input as one-line errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mantra_env.generators.config import load_config
from mantra_env.generators.document import chunk_document
from mantra_env.generators.exchange import ExchangeDir
from mantra_env.generators.run import PENDING_EXIT, _StageProgress, main

FIXTURE = Path(__file__).parent / "fixtures" / "ops-mini"
RETAIL = Path(__file__).parents[2] / "mantra_env" / "domains" / "retail" / "generation.yaml"


@pytest.fixture
def ops_mini(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``tmp_path`` holding the ops-mini config, manual and recorded answers, made the working directory."""
    for name in ("config.yaml", "manual.md", "responses.yaml"):
        shutil.copy(FIXTURE / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.slow
@pytest.mark.usefixtures("ops_mini")
def test_run_stop_and_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", "config.yaml", "--stop-after", "samples"]) == 0
    captured = capsys.readouterr()
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert "stopped after samples; resume with --resume" in captured.out
    assert "stage graph done" in captured.err and (run_dir / "config.yaml").exists()
    # Progress within a stage, as lines (stderr is no terminal here): the graph's 5 chunks, one line each.
    assert [line.split()[2] for line in captured.err.splitlines() if line.startswith("stage graph: ")] == [
        f"{n}/5" for n in range(1, 6)
    ]
    assert main(["--resume", str(run_dir)]) == 0  # the run's own copy of the config
    captured = capsys.readouterr()
    out = captured.out
    assert "stage graph:" not in captured.err  # a finished stage is loaded, not redone
    for stage in ("relevance", "scenarios", "checks", "world_models", "validation"):  # one sample
        assert f"stage {stage}: 1/1 (100%)" in captured.err
    log = (run_dir / "session.log").read_text()
    assert "stage validation done" in log and "checks: sample s000 done (1/1)" in log  # the session log has it too
    assert "funnel: generated 3, forward_validated 3, backward_validated 3, final 3" in out
    assert "screened out" not in out  # every validated case passes the screen
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


@pytest.mark.slow  # importing litellm dominates
def test_retail_run_writes_its_first_wave_and_exits_pending(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MANTRA_RUNS", str(tmp_path))
    monkeypatch.delenv("MANTRA_GENERATOR_MODEL", raising=False)
    monkeypatch.delenv("MANTRA_JUDGE_MODEL", raising=False)
    assert main(["--config", str(RETAIL)]) == PENDING_EXIT
    (run_dir,) = tmp_path.iterdir()
    config = load_config(RETAIL, env={})
    manual = config.document_path.read_text(encoding="utf-8")
    chunks = chunk_document(manual, config.chunking.max_chunk_tokens).nodes
    waiting = ExchangeDir(run_dir / "exchange").unanswered()
    assert waiting == sorted(f"document_extraction/{node.id}#0" for node in chunks)  # one per chunk, at once
    assert f"{len(waiting)} requests pending in {run_dir / 'exchange'}" in capsys.readouterr().out


def test_a_stage_whose_later_pass_brings_more_samples_shows_the_new_total(
    capsys: pytest.CaptureFixture[str],
) -> None:
    shown = _StageProgress()
    shown.update("validation", 8, 8)  # the first pass: 8 samples had reached validation
    shown.update("validation", 17, 30)  # a later pass of a waiting run: 30 have
    shown.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("stage validation: 8/8 (100%)")
    assert lines[-1].startswith("stage validation: 17/30 (56%)")


@pytest.mark.usefixtures("ops_mini")
def test_resuming_with_another_config_records_it_and_keeps_the_former(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    started = (tmp_path / "config.yaml").read_bytes()
    assert main(["--config", "config.yaml", "--stop-after", "graph"]) == 0
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert (run_dir / "config.yaml").read_bytes() == started and "differs" not in capsys.readouterr().err
    later = started.replace(b"  level: INFO", b"  level: DEBUG")  # a config the later stages follow
    (tmp_path / "later.yaml").write_bytes(later)
    assert main(["--resume", str(run_dir), "--config", "later.yaml", "--stop-after", "samples"]) == 0
    err = capsys.readouterr().err
    assert f"later.yaml differs from the config this run last ran with (kept as {run_dir / 'config.1.yaml'})" in err
    assert (run_dir / "config.yaml").read_bytes() == later and (run_dir / "config.1.yaml").read_bytes() == started
    assert json.loads((run_dir / "run.json").read_text())["config_path"] == str((tmp_path / "later.yaml").resolve())
    assert "differs from the config this run last ran with" in (run_dir / "session.log").read_text()
    # resumed again without --config: run.json's file, unchanged, so nothing more is recorded
    assert main(["--resume", str(run_dir), "--stop-after", "samples"]) == 0
    assert "differs" not in capsys.readouterr().err and not (run_dir / "config.2.yaml").exists()
    # the file run.json names edited since: recorded too, the former copy kept beside the first
    (tmp_path / "later.yaml").write_bytes(later.replace(b"DEBUG", b"WARNING"))
    assert main(["--resume", str(run_dir), "--stop-after", "samples"]) == 0
    assert "kept as" in capsys.readouterr().err and (run_dir / "config.2.yaml").read_bytes() == later
