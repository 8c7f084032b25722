"""mantra-env installs one import package, ``mantra_env``; the outer layers' top-level folders are mapped into it.

The folders ``agents/``, ``generators/``, ``graders/``, ``trainers/``, ``viewer/`` and ``mantra_cli/`` stay at the
repository's top, and ``mantra_env/<name>`` is a symbolic link to each, so they import as ``mantra_env.agents``
and so on, wheels copy them inside ``mantra_env`` and mypy follows them. Their old top-level names (``import graders``,
``python -m generators.run``) were generic enough to collide with other distributions' packages (openai-agents installs
``agents``); ARCHITECTURE.md records the decision.

The old names keep working for one release from the repository root (where the folders are on the path; an
installed mantra-env provides ``mantra_env`` alone), through :func:`adopt_legacy_name`, which each folder's
``__init__.py`` calls: under its old name the package stands aside for another distribution's package of that name, and
otherwise warns and becomes the ``mantra_env`` package, its submodules included, so an old import never loads a second
copy of a module.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import warnings
from pathlib import Path
from types import ModuleType

# The outer packages: each a folder at the repository's top and a link of the same name in mantra_env/.
OUTER_PACKAGES = ("agents", "generators", "graders", "trainers", "viewer", "mantra_cli")
# Old top-level import name -> the module it is now.
LEGACY_NAMES: dict[str, str] = {name: f"mantra_env.{name}" for name in OUTER_PACKAGES}
LEGACY_UNTIL = "0.2"


def legacy_message(old: str) -> str:
    """The warning an old name gives: what it is now and until when it works."""
    new = LEGACY_NAMES[old]
    return (
        f"the import name `{old}` is now `{new}` (`import {new}...`, `python -m {new}...`, or the `mantra` command); "
        f"the old name works from the repository root until mantra-env {LEGACY_UNTIL}"
    )


def adopt_legacy_name(name: str, init_file: str) -> None:
    """Called by an outer folder's ``__init__.py`` with its ``__name__`` and ``__file__``. Imported as
    ``mantra_env.<name>`` (the normal case) it does nothing. Imported under its old top-level name: when another
    distribution has a package of that name elsewhere on the path, that package is loaded in its place (the
    repository root never hides it); otherwise a ``FutureWarning`` names the new name and the ``mantra_env``
    package takes the old name."""
    if name not in LEGACY_NAMES:
        return
    repository = Path(init_file).resolve().parent.parent
    other = _other_distribution(name, repository)
    if other is not None:
        module = importlib.util.module_from_spec(other)
        sys.modules[name] = module
        try:
            assert other.loader is not None  # a spec with an origin has a loader
            other.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        return
    warnings.warn(legacy_message(name), FutureWarning, stacklevel=3)
    sys.modules[name] = importlib.import_module(LEGACY_NAMES[name])
    if not any(isinstance(finder, _LegacyFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _LegacyFinder())


def _other_distribution(name: str, repository: Path) -> importlib.machinery.ModuleSpec | None:
    """The spec of a regular package or module ``name`` found on the path outside ``repository``, if any."""
    elsewhere = [entry for entry in sys.path if _resolved(entry) != repository]
    spec = importlib.machinery.PathFinder.find_spec(name, elsewhere)
    if spec is None or spec.origin is None or spec.loader is None:  # absent, or only a namespace portion
        return None
    return spec


def _resolved(entry: str) -> Path | None:
    try:
        return Path(entry or os.getcwd()).resolve()
    except (OSError, RuntimeError):
        return None


class _LegacyFinder(importlib.abc.MetaPathFinder):
    """``graders.analysis`` while ``graders`` is the ``mantra_env.graders`` package: the module
    ``mantra_env.graders.analysis`` itself (not a second copy under the old name)."""

    def find_spec(
        self, fullname: str, path: object = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        top, _, rest = fullname.partition(".")
        if not rest or top not in LEGACY_NAMES:
            return None
        new_top = LEGACY_NAMES[top]
        if new_top not in sys.modules or sys.modules.get(top) is not sys.modules[new_top]:
            return None  # the old name is another distribution's package, or not adopted
        canonical = f"{new_top}.{rest}"
        spec = importlib.util.find_spec(canonical)
        if spec is None:
            return None
        return importlib.util.spec_from_loader(
            fullname, _AliasLoader(canonical, spec), is_package=spec.submodule_search_locations is not None
        )


class _AliasLoader(importlib.abc.Loader):
    """Loads an old name as the module of its new name; ``get_code`` serves ``python -m OLD.NAME`` (runpy)."""

    def __init__(self, canonical: str, spec: importlib.machinery.ModuleSpec) -> None:
        self.canonical = canonical
        self.spec = spec
        self.own_spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.canonical)
        self.own_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system has just set the alias's spec on the shared module: give it back its own.
        module.__spec__ = self.own_spec

    def get_code(self, fullname: str) -> object:
        loader = self.spec.loader
        if not isinstance(loader, importlib.abc.InspectLoader):
            raise ImportError(f"{self.canonical} has no code to run", name=fullname)
        return loader.get_code(self.canonical)
