"""The run directory's reset for ``--from-stage``: a stage's artifacts go, answers kept in its folder stay."""

from __future__ import annotations

from pathlib import Path

from mantra_env.generators.rundir import RunDir


def _tree(root: Path) -> set[str]:
    return {path.relative_to(root).as_posix() for path in root.rglob("*") if path.is_file()}


def _write(root: Path, *names: str) -> None:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x", encoding="utf-8")


def test_a_stage_folder_that_is_also_an_exchange_folder_keeps_its_requests_and_answers(tmp_path: Path) -> None:
    _write(tmp_path, "scenarios/s000.json", "scenarios/DONE", "checks/s000.json", "checks/DONE", "checks/pending.json")
    _write(tmp_path, "checks/check_generation/s000-1#0.request.json", "checks/check_generation/s000-1#0.answer.json")
    _write(tmp_path, "validation/s000.json", "export/suite/suite.jsonl")
    _write(tmp_path, "exchange/scenario_generation/s000#0.answer.json")
    _write(tmp_path, "validation/memo/a.json")  # a kept folder deeper in a stage's folder
    removed = RunDir(tmp_path).reset_from("checks", keep=[tmp_path / "checks", tmp_path / "validation" / "memo"])
    assert removed == ["checks", "validation", "export"]
    assert _tree(tmp_path) == {
        "scenarios/s000.json",
        "scenarios/DONE",
        "checks/check_generation/s000-1#0.request.json",
        "checks/check_generation/s000-1#0.answer.json",
        "validation/memo/a.json",
        "exchange/scenario_generation/s000#0.answer.json",
    }
    assert not (tmp_path / "export").exists()


def test_without_kept_folders_every_later_stage_folder_goes(tmp_path: Path) -> None:
    _write(tmp_path, "checks/s000.json", "checks/check_generation/s000-1#0.answer.json", "world_models/s000.json")
    assert RunDir(tmp_path).reset_from("checks") == ["checks", "world_models"]
    assert _tree(tmp_path) == set()
