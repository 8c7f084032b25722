"""An install without a compiler (issue 34 point 9): the bundled model's llama.cpp server is the extra
``mantra-env[local]``; nothing on the ``mantra run --model <api>`` path imports ``llama_cpp``, and without the extra
the default model fails in one line naming it.

Each run is a fresh interpreter with ``sys.modules["llama_cpp"] = None`` (so ``import llama_cpp`` fails and
``find_spec`` finds nothing), as on a machine where the extra was never installed.

And what an install brings: every package the project imports is declared in ``pyproject.toml``, and nothing in the
repository points outside it."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from mantra_env.namespace import OUTER_PACKAGES
from tests.make_install import extras_make_installs

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
    assert {"dev", "local"} <= extras_make_installs()  # make run and make test install the extra


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
    assert "run starter-stub-" in done.stdout and "1 case x 1 attempt" in done.stdout
    assert len(stub.requests) == 2  # the preflight and the episode's one model call


@pytest.mark.slow
def test_the_default_model_without_the_extra_is_one_line_naming_it(tmp_path: Path) -> None:
    done = run_without_llama(tmp_path, "--attempts", "1")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "mantra-env[local]" in lines[0], done.stderr
    assert not (tmp_path / "r.duckdb").exists()


# Import names whose distribution this virtualenv may not have installed (the `train` extra lives in a venv of its
# own): the distribution each comes from.
NOT_INSTALLED_HERE = {"torch": "torch", "transformers": "transformers", "trl": "trl", "tokenizers": "tokenizers"}


def _distribution(name: str) -> str:
    return re.split(r"[\[<>=!~; ]", name, maxsplit=1)[0].lower().replace("_", "-").replace(".", "-")


def test_every_imported_package_is_declared() -> None:
    # Every third-party package a project module imports (anywhere in it) is a dependency or in an extra, by the
    # distribution that provides it: nothing works only because another package happens to bring it.
    from importlib.metadata import packages_distributions

    from tests.import_arrows import imported_modules, source_files

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {_distribution(dep) for dep in project["dependencies"]}
    declared |= {_distribution(dep) for deps in project["optional-dependencies"].values() for dep in deps}
    provided = packages_distributions()
    missing: dict[str, set[str]] = {}
    for path, name in source_files():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for _, module in imported_modules(ast.parse(path.read_text(encoding="utf-8")), package):
            top = module.split(".")[0]
            if top in sys.stdlib_module_names or top == "__future__" or top == "mantra_env" or top in OUTER_PACKAGES:
                continue
            distributions = provided.get(top) or [NOT_INSTALLED_HERE.get(top, top)]
            if not any(_distribution(dist) in declared for dist in distributions):
                missing.setdefault(f"{top} ({', '.join(distributions)})", set()).add(name)
    assert not missing, f"imported but not declared in pyproject.toml: {sorted(missing.items())}"


def test_nothing_points_outside_the_repository() -> None:
    # A clone is all a user has: no source, document or build file names a note or a path beside the repository.
    outside = re.compile(r"\.\./+shared/|(?<![\w.])/work/")
    folders = ["mantra_env", *OUTER_PACKAGES, "tests", "docs", "notebooks", "benchmarks"]
    files = [path for folder in folders for path in (ROOT / folder).rglob("*") if path.is_file()]
    files += [ROOT / name for name in ("README.md", "ARCHITECTURE.md", "pyproject.toml", "Makefile")]
    found = []
    for path in files:
        if path.suffix not in {".py", ".md", ".toml", ".yaml", ".yml", ".ipynb", ".txt", ""} or path == Path(__file__):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{path.relative_to(ROOT)}: {match.group(0)}" for match in outside.finditer(text)]
    assert not found, f"paths outside the repository: {found}"
    assert len(files) > 200  # the scan sees the repository
