"""The ``mantra`` command: verbs delegate to the ``python -m`` entry points, with help and examples for each."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from mantra_env.mantra_cli import VERBS, main
from mantra_env.mantra_cli.suites import list_suites

ROOT = Path(__file__).parents[2]


def test_help_lists_every_verb_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: mantra")
    for name, verb in VERBS.items():
        assert f"  {name}  " in out and verb.summary in out
    assert set(VERBS) == {
        "run",
        "report",
        "generate",
        "export",
        "rejection-sample",
        "view",
        "review",
        "author",
        "audit",
        "validate",
        "exchange",
        "suites",
        "schemas",
        "domains",
    }


def test_no_verb_shows_the_usage_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "verbs:" in capsys.readouterr().err


def test_an_unknown_verb_is_one_line_with_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rnu", "--model", "x"]) == 2
    assert capsys.readouterr().err == "mantra: unknown verb 'rnu'; did you mean 'run'? (see `mantra --help`)\n"
    assert main(["zzz"]) == 2
    assert "the verbs: run, report" in capsys.readouterr().err


@pytest.mark.parametrize("name", list(VERBS))
def test_each_verb_has_help_with_examples(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([name, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: mantra {name} ")
    assert "examples:" in out.lower()


@pytest.mark.parametrize("name", list(VERBS))
def test_the_python_m_forms_keep_their_own_name(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    module = VERBS[name].module
    with pytest.raises(SystemExit) as exit:
        importlib.import_module(module).main(["--help"])
    assert exit.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: python -m {module.removesuffix('.__main__')} ")


def test_a_usage_error_is_the_modules_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--k", "not-a-number"]) == 2
    assert "usage: mantra report" in capsys.readouterr().err


def test_a_verb_returns_what_its_module_returns(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schemas", "--check"]) == 0
    assert capsys.readouterr().out == "JSON schemas are up to date\n"


def test_run_delegates_to_the_runner(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "r.duckdb"
    argv = ["--model", "scripted:oracle", "--attempts", "1", "--cases", "fig1-case1", "--db", str(db)]
    assert main(["run", *argv]) == 0
    assert "Pass@1" in capsys.readouterr().out and db.is_file()


def test_suites_lists_the_shipped_suites(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["suites"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["domain", "suite", "version", "cases", "gymnasium", "ids"]
    assert lines[1].split() == [
        "airline", "airline/generated", "*", "1", "64", "mantra/airline-v3,", "airline/generated-v3"
    ]  # fmt: skip
    assert lines[2].split() == [
        "operations", "operations/starter", "*", "0", "14", "mantra/operations-v2,", "operations/starter-v2"
    ]  # fmt: skip
    assert lines[3].split() == ["operations", "operations/generated", "1", "86", "operations/generated-v3"]
    assert lines[4].split() == [
        "retail", "retail/generated", "*", "6", "260", "mantra/retail-v8,", "retail/generated-v8"
    ]  # fmt: skip
    assert lines[5].split() == [
        "telecom", "telecom/generated", "*", "1", "63", "mantra/telecom-v3,", "telecom/generated-v3"
    ]  # fmt: skip
    suites, without = list_suites()
    assert len(lines) == 1 + len(suites) + len(without) + 2 and lines[-1].startswith("* the domain's default suite")


def test_suites_as_json_names_what_run_and_gymnasium_take(capsys: pytest.CaptureFixture[str]) -> None:
    import gymnasium

    import mantra_env  # noqa: F401  (registers the shipped suites)

    assert main(["suites", "--json"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    starter = next(record for record in records if record["suite"] == "operations/starter")
    assert starter["cases"] == 14 and starter["default"] and starter["version"] == 0
    assert starter["env_ids"] == ["mantra/operations-v2", "operations/starter-v2"]
    assert all(identifier in gymnasium.registry for identifier in starter["env_ids"])
    for record in records:
        assert record["suite"] is None or (Path(record["folder"]) / "manifest.json").is_file()
    without = [record for record in records if record["suite"] is None]  # a domain whose suites are to come
    assert all(record == {"domain": record["domain"], "suite": None, "cases": 0, "env_ids": []} for record in without)
    assert {r["domain"] for r in without}.isdisjoint({r["domain"] for r in records if r["suite"] is not None})


def test_the_console_script_is_declared() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    module, _, function = scripts["mantra"].partition(":")
    assert getattr(importlib.import_module(module), function) is main


def test_mantra_runs_as_a_program() -> None:
    """As the console script does (``python -m mantra_env.mantra_cli`` runs the same ``main``; once installed from this
    tree, ``mantra`` is on the virtualenv's PATH)."""
    finished = subprocess.run(
        [sys.executable, "-m", "mantra_env.mantra_cli", "suites"], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert finished.returncode == 0, finished.stderr
    assert "mantra/operations-v2" in finished.stdout
    finished = subprocess.run(
        [sys.executable, "-m", "mantra_env.mantra_cli"], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert finished.returncode == 2 and "verbs:" in finished.stderr
