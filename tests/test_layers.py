"""The core stands on its own: no module of ``mantra_env`` imports an outer package (``mantra_env.agents``,
``.graders``, ``.generators``, ``.trainers``, ``.viewer``, ``.mantra_cli``, each a link to the folder of that name,
or the folders' old top-level names), at module level, inside a function, or by name through ``importlib``.

The layers, inner to outer: ``mantra_env`` (the core) < ``graders``, ``agents``, ``generators``, ``trainers`` <
``viewer``, ``mantra_cli`` (composition). Only the listed exceptions may cross, and each must still be needed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from mantra_env.namespace import OUTER_PACKAGES

ROOT = Path(__file__).resolve().parents[1]
CORE = "mantra_env"
OUTER = frozenset(OUTER_PACKAGES)

# (importing file, imported module) pairs allowed to cross, each with the reason.
EXCEPTIONS: dict[tuple[str, str], str] = {
    # The delegating shim that keeps `python -m mantra_env.run` working (issue 15, item 1).
    ("mantra_env/run.py", "mantra_env.mantra_cli.run"): "the python -m mantra_env.run shim",
}


def imported_modules(tree: ast.AST, package: str) -> Iterator[tuple[int, str]]:
    """Every module ``tree`` imports, with its line: import statements anywhere (relative ones resolved against
    ``package``), and literal names given to ``importlib.import_module`` or ``__import__``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                yield node.lineno, ".".join([*parts, *([node.module] if node.module else [])])
            elif node.module == CORE:  # from mantra_env import graders: the names may be packages
                for alias in node.names:
                    yield node.lineno, f"{CORE}.{alias.name}"
            elif node.module:
                yield node.lineno, node.module
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                yield node.lineno, node.args[0].value


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
