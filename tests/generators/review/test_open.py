"""``mantra review`` opens a run directory or a domain's recording run by the domain name alone (issue 34 point
7); a target that is neither, or a run without validation results, is one clear line."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from mantra_env.generators.review.__main__ import main


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The apps ``main`` would serve (it never serves)."""
    import uvicorn

    apps: list[Any] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: apps.append(app))
    return apps


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_an_unknown_domain_is_one_line(served: list[Any], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["no-such-domain"]) == 2
    line = _error(capsys)
    assert "no-such-domain is neither a run directory nor a domain" in line and "operations" in line
    assert served == []


def test_a_run_without_validation_results_is_one_line(
    served: list[Any], run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(run_dir), "--samples", "2"]) == 2
    assert "are for a domain's recording run, not a run directory" in _error(capsys)
    shutil.rmtree(run_dir / "validation")
    assert main([str(run_dir)]) == 2
    assert "has no validation results yet" in _error(capsys)


def test_a_run_that_does_not_name_its_config_points_to_the_domain_form(
    served: list[Any], run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (run_dir / "run.json").unlink()
    assert main([str(run_dir)]) == 2
    assert "mantra review DOMAIN --keep DIR" in _error(capsys)


@pytest.mark.slow
def test_a_domain_opens_its_recording_run(
    served: list[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first time the recording is replayed up to its validation in DIR/run; the second opens it at once."""
    from mantra_env.generators.review.run import ReviewRun

    opened: list[ReviewRun] = []

    def create_app(run: ReviewRun, *args: Any) -> ReviewRun:
        opened.append(run)
        return run

    monkeypatch.setattr("mantra_env.generators.review.app.create_app", create_app)
    keep = tmp_path / "keep"
    assert main(["operations", "--keep", str(keep), "--samples", "1", "--reviewer", "alice"]) == 0
    assert "replaying the recording of operations" in capsys.readouterr().out
    assert main(["operations", "--keep", str(keep), "--reviewer", "alice"]) == 0
    out = capsys.readouterr().out
    assert "replaying" not in out and f"review of {keep / 'run'} as alice" in out
    run = opened[-1]
    assert run.root == keep / "run" and run.sample_ids() and run.config.domain == "operations"
    assert len(served) == 2
