"""One import namespace (mantra_env/namespace.py): the outer folders import as ``mantra_env.<folder>``, nothing the
project puts on the path hides another distribution's package (openai-agents' ``agents``, which verifiers needs),
every documented ``python -m`` command answers ``--help``, and the old names work from the repository root with a
warning, as the modules themselves (never a second copy)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mantra_env.namespace import LEGACY_NAMES, OUTER_PACKAGES, legacy_message

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [
    ROOT / "README.md",
    ROOT / "ARCHITECTURE.md",
    ROOT / "notebooks" / "README.md",
    *(ROOT / "docs").glob("*.md"),
]
# Documented `python -m` modules that take no options: the database scripts write the shipped db.json when run, the
# corpus table prints itself.
NO_OPTIONS = {
    "mantra_env.domains.airline.make_db",
    "mantra_env.domains.retail.make_db",
    "mantra_env.domains.telecom.make_db",
    "tests.corpus.table",
}
OTHER_TOOLS = {"pip", "venv", "pytest"}

# Runs each module named on the command line as `python -m NAME --help` in this one process (seconds, not a
# process each) and prints, per module, its exit code, the start of its output and the FutureWarnings it gave.
HELP_RUNNER = """
import contextlib, io, json, runpy, sys, warnings
results = {}
for name in sys.argv[1:]:
    out, err = io.StringIO(), io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out), \\
            contextlib.redirect_stderr(err):
        warnings.simplefilter("always")
        sys.argv = [name, "--help"]
        try:
            runpy.run_module(name, run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as exit:
            code = exit.code
    results[name] = {"code": code, "out": out.getvalue()[:300], "err": err.getvalue()[-300:],
                     "warnings": [str(w.message) for w in caught if issubclass(w.category, FutureWarning)]}
print(json.dumps(results))
"""


def _python(code: str, *args: str, cwd: Path, pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def documented_modules() -> set[str]:
    found = set()
    for document in DOCUMENTS:
        found.update(re.findall(r"python -m ([a-z_]+(?:\.[a-z_]+)*)", document.read_text(encoding="utf-8")))
    return found - OTHER_TOOLS


def _help_of(modules: list[str]) -> dict[str, dict[str, object]]:
    result = _python(HELP_RUNNER, *modules, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def test_every_outer_folder_is_linked_into_the_namespace() -> None:
    for name in OUTER_PACKAGES:
        link = ROOT / "mantra_env" / name
        assert link.is_symlink() and link.resolve() == (ROOT / name).resolve(), f"mantra_env/{name} -> ../{name}"
    assert sorted(OUTER_PACKAGES) == sorted(
        path.name
        for path in ROOT.iterdir()
        if (path / "__init__.py").is_file() and path.name not in {"mantra_env", "tests"}
    ), "a package folder at the top that is not linked into mantra_env (mantra_env/namespace.py: OUTER_PACKAGES)"


def test_every_documented_command_answers_help() -> None:
    assert documented_modules() >= NO_OPTIONS, "a module in NO_OPTIONS is no longer documented"
    modules = sorted(documented_modules() - NO_OPTIONS)
    assert "mantra_env.run" in modules and "mantra_env.generators.run" in modules  # the pattern finds the card's
    assert not [name for name in modules if name.split(".")[0] in LEGACY_NAMES], "the documents use the new names"
    results = _help_of(modules)
    for name in modules:
        assert results[name]["code"] == 0 and "usage:" in str(results[name]["out"]), (name, results[name])
        assert results[name]["warnings"] == [], name


def test_the_old_names_still_work_from_the_root_with_a_warning() -> None:
    """`python -m generators.run --help` as the documents said until now: the same command, and a warning."""
    old = sorted(
        name.removeprefix("mantra_env.")
        for name in documented_modules()
        if name.split(".")[1:2] in [[n] for n in OUTER_PACKAGES]
    )
    assert "generators.run" in old and "viewer" in old
    results = _help_of(old)
    warned = set()
    for name in old:
        assert results[name]["code"] == 0 and "usage:" in str(results[name]["out"]), (name, results[name])
        warned.update(results[name]["warnings"])  # type: ignore[arg-type]
    assert warned == {legacy_message(name.split(".")[0]) for name in old}


def test_an_old_import_is_the_module_itself() -> None:
    result = _python(
        "import warnings; warnings.simplefilter('error', FutureWarning)\n"
        "try:\n"
        "    import graders\n"
        "except FutureWarning as warning:\n"
        "    print('warned:', warning)\n"
        "warnings.simplefilter('ignore', FutureWarning)\n"
        "from graders import grade\n"
        "import graders.analysis, mantra_env.graders.analysis, mantra_env.grading\n"
        "import generators.review.state as old, mantra_env.generators.review.state as new\n"
        "assert graders.analysis is mantra_env.graders.analysis and old is new\n"
        "assert new.__spec__.name == 'mantra_env.generators.review.state', new.__spec__\n"
        "assert grade is mantra_env.grading.grade\n"
        "print('same modules')\n",
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"warned: {legacy_message('graders')}\nsame modules\n"


@pytest.fixture
def other_distributions(tmp_path: Path) -> Path:
    """Packages named as two of our folders, as other distributions install them (openai-agents' `agents`)."""
    site = tmp_path / "site-packages"
    for name in ("agents", "graders"):
        (site / name).mkdir(parents=True)
        (site / name / "__init__.py").write_text(f"WHO = 'another distribution: {name}'\n", encoding="utf-8")
    (site / "agents" / "function_schema.py").write_text("def function_schema(): ...\n", encoding="utf-8")
    return site


@pytest.mark.parametrize("where", ["repository root", "another directory"])
def test_nothing_hides_another_distributions_package(other_distributions: Path, tmp_path: Path, where: str) -> None:
    """What verifiers does (`from agents import function_schema`), beside mantra_env's own packages, from the
    repository root (where the folders are on the path) and from elsewhere."""
    result = _python(
        "import warnings; warnings.simplefilter('error')\n"
        "import agents, graders\n"
        "from agents.function_schema import function_schema\n"
        "import mantra_env.agents.scripted, mantra_env.graders, mantra_env.mantra_cli.main\n"
        "print(agents.WHO, graders.WHO, mantra_env.graders.grade.__name__, sep='; ')\n",
        cwd=ROOT if where == "repository root" else tmp_path,
        pythonpath=other_distributions,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "another distribution: agents; another distribution: graders; grade\n"


def test_installed_the_project_provides_mantra_env_alone(tmp_path: Path) -> None:
    """Away from the repository root, none of the folders' old names finds one of our folders: the install maps one
    package (a name may still be another distribution's: openai-agents, which verifiers brings, installs `agents`, in a
    virtualenv that may itself sit inside the checkout, as make's `.venv` does)."""
    result = _python(
        "import importlib.util, pathlib, mantra_env\n"
        "ours = pathlib.Path(mantra_env.__file__).resolve().parents[1]\n"
        f"specs = [importlib.util.find_spec(name) for name in {sorted(LEGACY_NAMES)!r}]\n"
        "found = [spec for spec in specs if spec is not None and spec.origin is not None]\n"
        "print([spec.name for spec in found if ours / spec.name in pathlib.Path(spec.origin).resolve().parents])\n",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[]\n"
