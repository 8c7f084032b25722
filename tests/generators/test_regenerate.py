"""``mantra_env.generators.regenerate``: a domain folder's generated suite rebuilt from its recording, byte for byte.

The domain folder is built from the ops-mini fixture: its config as ``generation.yaml``, its recorded answers as
``generation.recorded.jsonl`` (the format an exchange run records), and the suite shipped by ``--write``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mantra_env.generators.regenerate import (
    RECORDING,
    RegenerateError,
    regenerate_folder,
    ship_run_export,
    shipped_generated,
)
from mantra_env.generators.regenerate import main as regenerate_main
from mantra_env.generators.replay import load_fixture

FIXTURE = Path(__file__).parent / "fixtures" / "ops-mini"
pytestmark = pytest.mark.slow


def _domain_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "ops-mini-domain"
    folder.mkdir()
    text = (FIXTURE / "config.yaml").read_text(encoding="utf-8").replace("  replay:\n    path: responses.yaml\n", "")
    text = text.replace("document_path: manual.md", f"document_path: {FIXTURE / 'manual.md'}")
    (folder / "generation.yaml").write_text(text, encoding="utf-8")
    lines = [
        json.dumps({"key": key, "response": text}) for key, text in load_fixture(FIXTURE / "responses.yaml").items()
    ]
    (folder / RECORDING).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _ship(folder: Path, tmp_path: Path) -> Path:
    found = regenerate_folder(folder, tmp_path / "first")
    shipped = folder / "suites" / "ops-mini"
    shipped.mkdir(parents=True)
    for name in ("suite.jsonl", "manifest.json"):
        (shipped / name).write_bytes((found.rebuilt / name).read_bytes())
    return shipped


def test_a_second_replay_is_byte_identical_and_a_changed_suite_is_named(tmp_path: Path) -> None:
    folder = _domain_folder(tmp_path)
    shipped = _ship(folder, tmp_path)
    again = regenerate_folder(folder, tmp_path / "second")
    assert again.shipped == shipped and again.differences == []
    suite = shipped / "suite.jsonl"
    lines = suite.read_text().splitlines()
    first = json.loads(lines[1])
    first["relevant_tools"] = [*first["relevant_tools"], "edited_by_hand"]
    suite.write_text("\n".join([lines[0], json.dumps(first), *lines[2:]]) + "\n")
    changed = regenerate_folder(folder, tmp_path / "third")
    assert len(changed.differences) == 1
    assert f"line 2 differs (case {first['id']})" in changed.differences[0]
    (shipped / "manifest.json").unlink()
    assert any("manifest.json: not shipped" in line for line in regenerate_folder(folder, tmp_path / "4").differences)


def test_a_subset_of_samples_compares_only_their_cases(tmp_path: Path) -> None:
    folder = _domain_folder(tmp_path)
    shipped = _ship(folder, tmp_path)
    suite = shipped / "suite.jsonl"
    lines = suite.read_text().splitlines()
    other = json.loads(lines[0])
    other["id"] = other["id"].replace("-s000-", "-s001-")  # a case of a sample the subset does not replay
    suite.write_text("\n".join([*lines, json.dumps(other)]) + "\n")
    assert regenerate_folder(folder, tmp_path / "one", samples=1).differences == []
    assert regenerate_folder(folder, tmp_path / "whole").differences != []  # the whole suite has one case more
    suite.write_text("\n".join(lines[1:]) + "\n")  # a case of s000 is missing
    (difference,) = regenerate_folder(folder, tmp_path / "two", samples=1).differences
    assert "cases of the first 1 samples" in difference
    with pytest.raises(RegenerateError, match="1 or more"):
        regenerate_folder(folder, tmp_path / "zero", samples=0)


def test_a_recording_without_an_answer_stops_with_what_to_do(tmp_path: Path) -> None:
    folder = _domain_folder(tmp_path)
    recording = folder / RECORDING
    kept = [line for line in recording.read_text().splitlines() if '"smt_full_pass/' not in line]
    recording.write_text("\n".join(kept) + "\n")
    with pytest.raises(RegenerateError, match=r"no answer for 1 request\(s\) the replay asked \(smt_full_pass/s000#0"):
        regenerate_folder(folder, tmp_path / "run")
    recording.unlink()
    with pytest.raises(RegenerateError, match=r"generation\.recorded\.jsonl does not exist"):
        regenerate_folder(folder, tmp_path / "run2")


def test_the_command_needs_a_domain_or_all(capsys: pytest.CaptureFixture[str]) -> None:
    assert regenerate_main([]) == 2
    assert "name one domain or pass --all" in capsys.readouterr().err
    assert regenerate_main(["retail", "--all"]) == 2
    assert regenerate_main(["no-such-domain"]) == 2
    assert "no-such-domain" in capsys.readouterr().err


def test_all_checks_exactly_the_domains_that_ship_a_generated_suite(capsys: pytest.CaptureFixture[str]) -> None:
    from mantra_env.domains import domain_names, load_domain

    shipped = shipped_generated(domain_names())
    for domain in domain_names():
        folder = load_domain(domain).folder
        assert folder is not None
        ships = (folder / "suites" / "generated" / "suite.jsonl").is_file() and (folder / RECORDING).is_file()
        assert (domain in shipped) == ships
    assert regenerate_main(["--all", "--samples", "2"]) == 0  # a full replay of a domain takes minutes
    out = capsys.readouterr().out
    if shipped:
        assert out.count("byte-identical") == len(shipped)
    else:
        assert "no domain ships a generated suite yet" in out


def test_a_shipped_review_is_put_back_before_the_export_and_regenerates_byte_identically(tmp_path: Path) -> None:
    from mantra_env.generators.artifacts import SampleValidation
    from mantra_env.generators.regenerate import REVIEWS
    from mantra_env.generators.review.state import decide, start_review

    folder = _domain_folder(tmp_path)
    shipped = _ship(folder, tmp_path)
    validation = SampleValidation.model_validate_json((tmp_path / "first/run/validation/s000.json").read_text())
    kept = next(o.scenario_id for o in validation.outcomes if o.status == "validated")
    review = decide(start_review(validation), kept, "rejected", "reviewer@example.org", "the manual allows it")
    (folder / REVIEWS).mkdir()
    (folder / REVIEWS / "s000.json").write_text(review.model_dump_json(indent=2) + "\n")

    changed = regenerate_folder(folder, tmp_path / "reviewed")
    assert changed.differences  # the rejected case is gone from the suite the review regenerates
    rebuilt = [json.loads(line) for line in (changed.rebuilt / "suite.jsonl").read_text().splitlines()]
    assert not any(case["id"].endswith(f"-{kept}") for case in rebuilt)
    assert len(rebuilt) == len((shipped / "suite.jsonl").read_text().splitlines()) - 1
    for name in ("suite.jsonl", "manifest.json"):
        (shipped / name).write_bytes((changed.rebuilt / name).read_bytes())
    assert regenerate_folder(folder, tmp_path / "again").differences == []
    own = decide(start_review(validation), kept, "accepted", "second@example.org", "on second reading it is right")
    (tmp_path / "again/run/review/s000.json").write_text(own.model_dump_json(indent=2) + "\n")
    regenerate_folder(folder, tmp_path / "again")  # kept again (regenerate --keep): the reviewer's file stays theirs
    assert "second@example.org" in (tmp_path / "again/run/review/s000.json").read_text()

    (folder / REVIEWS / "s001.json").write_text((folder / REVIEWS / "s000.json").read_text())
    with pytest.raises(RegenerateError, match=r"holds the review of s000: name it s000\.json"):
        regenerate_folder(folder, tmp_path / "misnamed")
    (folder / REVIEWS / "s001.json").write_text("{}")
    with pytest.raises(RegenerateError, match=r"s001\.json: not a review file"):
        regenerate_folder(folder, tmp_path / "broken")


def test_ship_copies_a_run_of_that_domain_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert regenerate_main(["retail", "--write", "--samples", "2"]) == 2
    assert "drop --samples" in capsys.readouterr().err
    assert regenerate_main(["retail", "--ship", str(tmp_path)]) == 2
    assert "recorded.jsonl does not exist" in capsys.readouterr().err
    assert regenerate_main(["retail", "--ship", str(tmp_path), "--samples", "2"]) == 2
    assert "recorded.jsonl does not exist" in capsys.readouterr().err


def _finished_run(folder: Path, tmp_path: Path) -> Path:
    """A run directory as an exchange run leaves it: its recording, config path and export."""
    run_dir = regenerate_folder(folder, tmp_path / "ran").rebuilt.parent.parent
    (run_dir / "recorded.jsonl").write_bytes((folder / RECORDING).read_bytes())
    (run_dir / "run.json").write_text(json.dumps({"config_path": str(folder / "generation.yaml")}))
    (run_dir / "config.yaml").write_bytes((folder / "generation.yaml").read_bytes())
    return run_dir


def test_shipping_a_runs_export_checks_its_first_samples_and_changes_nothing_when_they_differ(tmp_path: Path) -> None:
    folder = _domain_folder(tmp_path)
    run_dir = _finished_run(folder, tmp_path)
    (folder / RECORDING).write_text("")  # the domain's older recording, replaced by the run's
    exported = run_dir / "export" / "suite" / "suite.jsonl"
    shipped = ship_run_export(folder, run_dir, samples=1)
    assert (shipped / "suite.jsonl").read_bytes() == exported.read_bytes()
    assert (folder / RECORDING).read_bytes() == (run_dir / "recorded.jsonl").read_bytes()
    assert regenerate_folder(folder, tmp_path / "again").differences == []

    lines = exported.read_text().splitlines()
    edited = json.loads(lines[0])
    edited["relevant_tools"] = []
    exported.write_text("\n".join([json.dumps(edited, separators=(",", ":")), *lines[1:]]) + "\n")
    before = (shipped / "suite.jsonl").read_bytes()
    with pytest.raises(RegenerateError, match=r"differs from the run's export.*at character.*nothing was shipped"):
        ship_run_export(folder, run_dir, samples=1)
    assert (shipped / "suite.jsonl").read_bytes() == before
    exported.write_text("\n".join(lines) + "\n")

    manifest = run_dir / "export" / "suite" / "manifest.json"
    kept = manifest.read_bytes()
    manifest.write_text("{")
    with pytest.raises(RegenerateError, match=r"manifest\.json is not JSON"):
        ship_run_export(folder, run_dir, samples=1)
    manifest.write_bytes(kept)

    config = folder / "generation.yaml"
    config.write_text(config.read_text().replace("export:\n", "export:\n  version: 7\n"))
    with pytest.raises(RegenerateError, match="ran with other export settings"):
        ship_run_export(folder, run_dir, samples=1)
