"""The import arrows of the source tree, read with ``ast`` (nothing is imported): which module imports which, and
between which packages. ``tests/test_layers.py`` guards the arrows; run this file to print them:

    python -m tests.import_arrows            # the arrows between packages (each outside the core with its modules)
    python -m tests.import_arrows --modules  # one line per (importing file, imported module) inside the project

The packages are the core (``mantra_env``) and the outer folders mapped into it (``mantra_env.agents``, ...), with
the review app (``mantra_env.generators.review``) apart from the rest of generation. An import anywhere in a file
counts (module level, inside a function, under ``TYPE_CHECKING``, by name through ``importlib``).
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

from mantra_env.namespace import LEGACY_NAMES, OUTER_PACKAGES

ROOT = Path(__file__).resolve().parents[1]
CORE = "mantra_env"
OUTER = frozenset(OUTER_PACKAGES)
# The packages arrows are drawn between, most specific first (a module belongs to the first that prefixes it).
PACKAGES = (
    f"{CORE}.generators.review",
    *(f"{CORE}.{name}" for name in OUTER_PACKAGES),
    CORE,
)


def imported_modules(tree: ast.AST, package: str, names: bool = False) -> Iterator[tuple[int, str]]:
    """Every module ``tree`` imports, with its line: import statements anywhere (relative ones resolved against
    ``package``), and literal names given to ``importlib.import_module`` or ``__import__``. A name imported from
    the core's namespace may be a module (``from mantra_env import graders``): ``mantra_env.graders`` is yielded,
    and with ``names`` so is every ``from mantra_env.X import name`` (as ``mantra_env.X.name``; the caller decides
    which prefix is a module)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                yield node.lineno, ".".join([*parts, *([node.module] if node.module else [])])
            elif node.module == CORE or (names and node.module is not None and node.module.startswith(CORE + ".")):
                for alias in node.names:
                    yield node.lineno, f"{node.module}.{alias.name}"
            elif node.module:
                yield node.lineno, node.module
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                yield node.lineno, node.args[0].value


def canonical(module: str) -> str:
    """``graders.metrics`` (an outer folder's old top-level name) as ``mantra_env.graders.metrics``; others as given."""
    top, dot, rest = module.partition(".")
    return LEGACY_NAMES[top] + dot + rest if top in LEGACY_NAMES else module


def package_of(module: str) -> str | None:
    """The package of :data:`PACKAGES` ``module`` belongs to, or None for a module outside the project."""
    module = canonical(module)
    for package in PACKAGES:
        if module == package or module.startswith(package + "."):
            return package
    return None


def source_files(root: Path = ROOT) -> Iterator[tuple[Path, str]]:
    """(path, module name) of every project source file: the core's own files and each outer folder's."""
    for folder in (CORE, *OUTER_PACKAGES):
        for path in sorted((root / folder).rglob("*.py")):
            relative = path.relative_to(root).with_suffix("")
            parts = relative.parts[:-1] if path.name == "__init__.py" else relative.parts
            name = ".".join(parts) if folder == CORE else ".".join((CORE, *parts))
            yield path, name


def module_imports(root: Path = ROOT) -> Iterator[tuple[str, int, str]]:
    """(importing module, line, imported module) of every import of a project module: names canonical, and a name
    imported from a module (``from mantra_env.oracle import oracle_plan``) as that module."""
    files = list(source_files(root))
    known = {name for _, name in files}
    for path, name in files:
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for line, module in imported_modules(ast.parse(path.read_text(encoding="utf-8")), package, names=True):
            if package_of(module) is not None:
                yield name, line, _module(canonical(module), known)


def _module(name: str, known: set[str]) -> str:
    """The longest prefix of the dotted ``name`` that is one of the ``known`` modules (``name`` if none is)."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in known:
            return ".".join(parts[:end])
    return name


def package_arrows(root: Path = ROOT) -> dict[tuple[str, str], list[str]]:
    """(importing package, imported package) -> the sorted "importer -> imported" module pairs behind the arrow."""
    arrows: dict[tuple[str, str], set[str]] = {}
    for importer, _, imported in module_imports(root):
        source, target = package_of(importer), package_of(imported)
        if source is not None and target is not None and source != target:
            arrows.setdefault((source, target), set()).add(f"{importer} -> {imported}")
    return {arrow: sorted(pairs) for arrow, pairs in sorted(arrows.items())}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.import_arrows", description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", action="store_true", help="list every (importer, imported module) pair")
    args = parser.parse_args(argv)
    if args.modules:
        pairs = Counter((importer, imported) for importer, _, imported in module_imports())
        for (importer, imported), _ in sorted(pairs.items()):
            print(f"{importer} -> {imported}")
        return 0
    for (source, target), pairs in package_arrows().items():
        print(f"{source} -> {target}  ({len(pairs)} module pairs)")
        if target != CORE:  # the arrows into the core are many and expected; the others are listed in full
            print("".join(f"    {pair}\n" for pair in pairs), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
