"""The core stands on its own: no module of ``mantra_env`` imports an outer package (``mantra_env.agents``,
``.graders``, ``.generators``, ``.trainers``, ``.viewer``, ``.mantra_cli``, each a link to the folder of that name,
or the folders' old top-level names), at module level, inside a function, or by name through ``importlib``.

The layers, inner to outer: ``mantra_env`` (the core) < ``graders``, ``agents``, ``generators``, ``trainers`` <
``viewer``, ``mantra_cli`` (composition). Only the listed exceptions may cross, and each must still be needed.

Inside the outer ring, the arrows the structural review of issue 35 removed stay removed (:data:`FORBIDDEN`): the
oracle is the core's, so generation and the viewer reach ``agents`` only where they play or call a model.
``python -m tests.import_arrows`` prints every arrow.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from mantra_env.namespace import OUTER_PACKAGES
from tests.import_arrows import imported_modules, module_imports

ROOT = Path(__file__).resolve().parents[1]
CORE = "mantra_env"
OUTER = frozenset(OUTER_PACKAGES)

# (importing file, imported module) pairs allowed to cross, each with the reason.
EXCEPTIONS: dict[tuple[str, str], str] = {
    # The delegating shim that keeps `python -m mantra_env.run` working (issue 15, item 1).
    ("mantra_env/run.py", "mantra_env.mantra_cli.run"): "the python -m mantra_env.run shim",
}


def is_outer(module: str) -> bool:
    """``mantra_env.graders...`` (an outer package in the namespace) or ``graders...`` (its old top-level name)."""
    parts = module.split(".")
    return parts[0] in OUTER or (parts[0] == CORE and len(parts) > 1 and parts[1] in OUTER)


def crossings(root: Path) -> set[tuple[str, int, str]]:
    """(file, line, module) of every import from the core to an outer package under ``root``."""
    found = set()
    for path in sorted((root / CORE).rglob("*.py")):
        relative = path.relative_to(root)
        package = ".".join(relative.with_suffix("").parts[:-1] if path.name != "__init__.py" else relative.parts[:-1])
        for line, module in imported_modules(ast.parse(path.read_text(encoding="utf-8")), package):
            if is_outer(module):
                found.add((relative.as_posix(), line, module))
    return found


def test_the_core_imports_no_outer_package_except_the_listed_exceptions() -> None:
    unexpected = sorted(
        f"{file}:{line}: imports {module}" for file, line, module in crossings(ROOT) if (file, module) not in EXCEPTIONS
    )
    assert not unexpected, (
        "the core (mantra_env) must not import an outer package; move the code that needs it to the outer "
        "layer (composition goes to mantra_cli) or move what it needs into the core:\n" + "\n".join(unexpected)
    )


@pytest.mark.parametrize("exception", sorted(EXCEPTIONS))
def test_every_exception_is_still_needed(exception: tuple[str, str]) -> None:
    used = {(file, module) for file, _, module in crossings(ROOT)}
    assert exception in used, f"{exception} no longer crosses the layers: delete it from EXCEPTIONS"


def test_the_scan_sees_every_form_of_import(tmp_path: Path) -> None:
    """The checker itself: statements at any depth, relative imports, and imports by name are all found."""
    core = tmp_path / CORE / "sub"
    core.mkdir(parents=True)
    (core / "mod.py").write_text(
        "import mantra_env.graders.metrics\n"
        "from os import path\n"
        "def f():\n"
        "    from mantra_env.agents.base import ScriptedAgent\n"
        "    import importlib\n"
        "    importlib.import_module('mantra_env.generators.run')\n"
        "    __import__('mantra_cli')\n"
        "from . import sibling\n"
        "from ..checks import parse_check\n"
        "from mantra_env import viewer, checks\n",
        encoding="utf-8",
    )
    assert crossings(tmp_path) == {
        ("mantra_env/sub/mod.py", 1, "mantra_env.graders.metrics"),
        ("mantra_env/sub/mod.py", 4, "mantra_env.agents.base"),
        ("mantra_env/sub/mod.py", 6, "mantra_env.generators.run"),
        ("mantra_env/sub/mod.py", 7, "mantra_cli"),
        ("mantra_env/sub/mod.py", 10, "mantra_env.viewer"),
    }
    relative = {module for _, module in imported_modules(ast.parse((core / "mod.py").read_text()), "mantra_env.sub")}
    assert {"mantra_env.sub", "mantra_env.checks"} <= relative


# (importing modules, imported modules, why not): a module whose name starts with one of the first prefixes may not
# import a module whose name starts with one of the second, except the pairs of ALLOWED.
FORBIDDEN: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] = {
    "oracle": (
        ("mantra_env.generators", "mantra_env.viewer"),
        ("mantra_env.agents",),
        "the oracle (plan, witness, argument gaps, action format) is the core's: import it from mantra_env.oracle",
    ),
    "exchange": (
        ("mantra_env.generators.exchange",),
        ("mantra_env.generators", "mantra_env.mantra_cli"),
        "the exchange provider, which every stage imports, imports no stage (the command is mantra_cli.exchange)",
    ),
    "review": (
        ("mantra_env.generators.review",),
        ("mantra_env.generators.pipeline", "mantra_env.generators.run", "mantra_env.generators.regenerate"),
        "the review app reads a run directory through artifacts, config and rundir; it does not import the pipeline",
    ),
}
# (rule, importing module, imported module) pairs a rule allows, each with the reason.
ALLOWED: dict[tuple[str, str, str], str] = {
    ("oracle", "mantra_env.generators.screening", "mantra_env.agents.base"): "the export screen plays the baselines",
    ("oracle", "mantra_env.generators.screening", "mantra_env.agents.scripted"): "the baselines it plays",
    ("oracle", "mantra_env.generators.llm", "mantra_env.agents.models"): "generation resolves model aliases as runs do",
    ("oracle", "mantra_env.generators.llm", "mantra_env.agents.provider_errors"): "which provider errors to retry",
    ("oracle", "mantra_env.generators.llm", "mantra_env.agents.local_server"): "the local server's HTML escapes",
    ("oracle", "mantra_env.generators.pipeline", "mantra_env.agents.local_server"): "starts the bundled model",
    ("exchange", "mantra_env.generators.exchange", "mantra_env.generators.rundir"): "writes request files atomically",
    ("exchange", "mantra_env.generators.exchange", "mantra_env.generators.stages"): "the writer's role per stage",
    ("exchange", "mantra_env.generators.exchange", "mantra_env.mantra_cli.exchange"): "the python -m shim",
    ("review", "mantra_env.generators.review.__main__", "mantra_env.generators.regenerate"): (
        "`mantra review DOMAIN` first replays the domain's recording into a run to review"
    ),
}


@functools.cache
def project_imports() -> frozenset[tuple[str, str]]:
    """(importer, imported) of every import of a project module in the tree, read once per session."""
    return frozenset((source, target) for source, _, target in module_imports(ROOT))


def breaches(rule: str) -> set[tuple[str, str]]:
    """(importer, imported) pairs of the tree that ``rule`` of :data:`FORBIDDEN` forbids, the allowed ones included."""
    importers, imported, _ = FORBIDDEN[rule]
    return {
        (source, target)
        for source, target in project_imports()
        if within(source, importers) and within(target, imported)
    }


def within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == package or module.startswith(package + ".") for package in packages)


@pytest.mark.parametrize("rule", sorted(FORBIDDEN))
def test_no_forbidden_arrow_between_outer_packages(rule: str) -> None:
    unexpected = sorted(f"{a} -> {b}" for a, b in breaches(rule) if (rule, a, b) not in ALLOWED)
    assert not unexpected, f"{FORBIDDEN[rule][2]}:\n" + "\n".join(unexpected)


@pytest.mark.parametrize("allowed", sorted(ALLOWED))
def test_every_allowed_arrow_is_still_needed(allowed: tuple[str, str, str]) -> None:
    rule, source, target = allowed
    assert (source, target) in breaches(rule), f"{source} no longer imports {target}: delete it from ALLOWED"


# Imports that may close a circle: a command's old `python -m` name reaching the command it delegates to.
SHIMS = {("mantra_env.generators.exchange", "mantra_env.mantra_cli.exchange")}


def circles(edges: set[tuple[str, str]]) -> list[list[str]]:
    """The import circles of ``edges`` (strongly connected sets of two or more modules), each sorted."""
    graph: dict[str, set[str]] = {}
    for source, target in edges:
        graph.setdefault(source, set()).add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in graph.get(module, ()):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            members = stack[stack.index(module) :]
            del stack[stack.index(module) :]
            if len(members) > 1:
                found.append(sorted(members))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_no_import_circle_in_the_outer_ring() -> None:
    outer = tuple(f"{CORE}.{name}" for name in sorted(OUTER))
    edges = {
        (source, target)
        for source, target in project_imports()
        if within(source, outer) and within(target, outer) and source != target and (source, target) not in SHIMS
    }
    assert not circles(edges), f"modules that import each other (directly or around a circle): {circles(edges)}"


def test_the_circle_finder() -> None:
    edges = {("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e"), ("e", "d"), ("f", "a")}
    assert sorted(circles(edges)) == [["a", "b", "c"], ["d", "e"]]
    assert circles({("a", "b"), ("b", "c")}) == []


@pytest.mark.parametrize("shim", sorted(SHIMS))
def test_every_shim_is_still_there(shim: tuple[str, str]) -> None:
    assert shim in project_imports(), f"{shim} is gone: delete it from SHIMS"
