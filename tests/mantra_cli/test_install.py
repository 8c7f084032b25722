"""An install without a compiler (issue 34 point 9): the bundled model's llama.cpp server is the extra
``mantra-env[local]``; nothing on the ``mantra run --model <api>`` path imports ``llama_cpp``, and without the extra
the default model fails in one line naming it.

Each run is a fresh interpreter with ``sys.modules["llama_cpp"] = None`` (so ``import llama_cpp`` fails and
``find_spec`` finds nothing), as on a machine where the extra was never installed."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WITHOUT_LLAMA = (
    "import sys; sys.modules['llama_cpp'] = None; from mantra_env.mantra_cli.main import main; "
    "raise SystemExit(main(sys.argv[1:]))"
)


def run_without_llama(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MANTRA_") and k != "OPENAI_API_KEY"}
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_LLAMA, "run", *args, "--db", str(tmp_path / "r.duckdb")],
        cwd=ROOT,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_llama_cpp_is_the_local_extra_not_a_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not [dep for dep in project["dependencies"] if dep.startswith("llama-cpp-python")]
    assert [dep for dep in project["optional-dependencies"]["local"] if dep.startswith("llama-cpp-python[server]")]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "-e '.[dev,local]'" in makefile  # make run and make test install the extra


@pytest.mark.slow
def test_an_api_model_runs_with_llama_cpp_unimportable(tmp_path: Path) -> None:
    from tests.agents.stub_server import serve, text

    models = tmp_path / "models.yaml"
    with serve([text("ready"), text("I cannot help with that.")]) as stub:
        models.write_text(
            f"models:\n  stub:\n    model: openai/stub-model\n    api_base: {stub.api_base}\n    api_key: not-a-key\n"
        )
        args = ("--model", "stub", "--attempts", "1", "--cases", "fig1-case1", "--retries", "0")
        done = run_without_llama(tmp_path, *args, env={"MANTRA_MODELS_FILE": str(models)})
    assert done.returncode == 0, done.stderr
    assert "run starter-stub-" in done.stdout and "1 cases x 1 attempts" in done.stdout
    assert len(stub.requests) == 2  # the preflight and the episode's one model call


@pytest.mark.slow
def test_the_default_model_without_the_extra_is_one_line_naming_it(tmp_path: Path) -> None:
    done = run_without_llama(tmp_path, "--attempts", "1")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "mantra-env[local]" in lines[0], done.stderr
    assert not (tmp_path / "r.duckdb").exists()
