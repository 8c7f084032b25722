"""Where domains come from, and which suites they ship, found without importing any domain.

Three sources, searched in this order (a name found twice is an error when that domain is asked for):

1. the packages under ``mantra_env/domains/`` (shipped with mantra-env);
2. the entry-point group ``mantra_env.domains`` of installed distributions: ``name = "package.module"``, a module
   whose ``DOMAIN`` is the domain;
3. ``MANTRA_DOMAINS_PATH``: folders separated by ``os.pathsep``, each a domain folder (it has ``__init__.py``) or a
   folder of domain folders. An environment variable, so that every process started from this one (vector-env
   workers, the run's children) sees the same domains. An entry that is no folder, or a folder whose name is no
   domain name, is skipped with a warning (the other domains stay usable).

A domain folder holds ``__init__.py`` (defining ``DOMAIN``), ``manual.md``, ``db.json``, optionally
``domain.yaml`` (``default_suite: NAME``) and ``suites/<suite>/`` (``suite.jsonl`` + ``manifest.json``).
A domain is code: importing it runs it, so only name folders and packages you trust.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import os
import re
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mantra_env.case import SuiteManifest, load_manifest
from mantra_env.errors import CaseFileError, DomainError, error_path
from mantra_env.userfiles import load_yaml, read_text

SHIPPED_DIR = Path(__file__).parent
ENTRY_POINT_GROUP = "mantra_env.domains"
PATH_VARIABLE = "MANTRA_DOMAINS_PATH"
USER_MODULE_PREFIX = "mantra_user_domains"
"""Domains found on the path are imported as ``mantra_user_domains.<name>`` (so that relative imports work)."""
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
ALL_DOMAINS = "all"
"""Not a domain name: ``--suite all`` names every domain's default suite."""
_RESERVED = f"the name {ALL_DOMAINS!r} is reserved (`--suite {ALL_DOMAINS}` runs every domain's default suite)"


@dataclass(frozen=True)
class DomainSource:
    """Where one domain is: its folder, the module that defines ``DOMAIN``, and how it was found."""

    name: str
    folder: Path
    module: str
    origin: str
    """``mantra-env``, ``entry point <distribution>`` or ``MANTRA_DOMAINS_PATH``: shown in errors."""
    problem: str = ""
    """Why the domain cannot be used (a broken entry point): an error when it is asked for, not before."""

    @property
    def on_path(self) -> bool:
        """Whether the module is imported from its folder (``MANTRA_DOMAINS_PATH``) rather than by name."""
        return self.module.startswith(f"{USER_MODULE_PREFIX}.")


class DomainInfo(BaseModel):
    """A domain folder's ``domain.yaml``: what the domain declares about itself."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    default_suite: str | None = Field(
        default=None, description="The suite that `--suite DOMAIN` and `mantra/DOMAIN-vN` name."
    )


ENV_VERSION = 2
"""The environment's own version (its spaces and rewards: see the Version History of ``MantraEnv``). A gymnasium
id's version is this plus the suite's manifest version, so that it changes when either changes."""


@dataclass(frozen=True)
class SuiteEntry:
    """A suite a domain ships, from its manifest (the cases are not read)."""

    domain: str
    name: str
    version: int
    folder: Path
    default: bool

    @property
    def run_name(self) -> str:
        """What ``--suite`` takes (``DOMAIN/SUITE``; the default suite also answers to ``DOMAIN``)."""
        return f"{self.domain}/{self.name}"

    @property
    def env_ids(self) -> list[str]:
        """Its gymnasium ids: ``DOMAIN/SUITE-vN``, and ``mantra/DOMAIN-vN`` for the default suite (N: ENV_VERSION
        plus the manifest's version)."""
        ids = [f"{self.run_name}-v{ENV_VERSION + self.version}"]
        return [f"mantra/{self.domain}-v{ENV_VERSION + self.version}", *ids] if self.default else ids


def domain_sources() -> dict[str, list[DomainSource]]:
    """Every domain name, with each place that defines it (more than one is a conflict)."""
    found: dict[str, list[DomainSource]] = {}
    for source in [*_shipped(), *_entry_points(), *_on_path()]:
        found.setdefault(source.name, []).append(source)
    return dict(sorted(found.items()))


def domain_source(name: str) -> DomainSource | None:
    """The one place that defines domain ``name``; ``None`` if none does.

    Raises:
        DomainError: if two places define it.
    """
    sources = domain_sources().get(name, [])
    if len(sources) > 1:
        places = "; ".join(f"{source.folder} ({source.origin})" for source in sources)
        raise DomainError(f"domain {name!r} is defined {len(sources)} times: {places}; rename all but one")
    if sources and sources[0].problem:
        raise DomainError(sources[0].problem)
    return sources[0] if sources else None


def domain_info(folder: Path) -> DomainInfo:
    """The folder's ``domain.yaml`` (empty if there is none).

    A default suite the folder does not have (yet: it may be declared before it is built) is an error only when
    it is asked for.

    Raises:
        DomainError: for a malformed file.
    """
    path = folder / "domain.yaml"
    if not path.exists():
        return DomainInfo()
    data = load_yaml(read_text(path, "domain file", DomainError), str(path), DomainError)
    try:
        info = DomainInfo.model_validate(data or {})
    except ValidationError as exc:
        problems = "; ".join(f"{error_path(e['loc'])}: {e['msg']}" for e in exc.errors())
        raise DomainError(f"{path}: {problems} (expected `default_suite: NAME`)") from None
    return info


def suite_folders(folder: Path) -> dict[str, Path]:
    """Suite name -> folder, for each ``suites/<suite>/manifest.json`` of a domain folder."""
    return {path.parent.name: path.parent for path in sorted((folder / "suites").glob("*/manifest.json"))}


def suite_entries(source: DomainSource) -> list[SuiteEntry]:
    """The suites a domain ships, default first.

    Raises:
        DomainError: for a malformed ``domain.yaml``, or a manifest naming another suite or domain.
    """
    if source.problem:
        raise DomainError(source.problem)
    default = domain_info(source.folder).default_suite
    entries = []
    for name, folder in suite_folders(source.folder).items():
        try:
            manifest: SuiteManifest = load_manifest(folder)
        except CaseFileError as error:
            raise DomainError(str(error)) from None
        if (manifest.name, manifest.domain) != (name, source.name):
            raise DomainError(
                f"{folder / 'manifest.json'}: names suite {manifest.domain}/{manifest.name}, but its folder is "
                f"{source.name}/{name}; make them agree"
            )
        entries.append(SuiteEntry(source.name, name, manifest.version, folder, name == default))
    return sorted(entries, key=lambda entry: not entry.default)


def _shipped() -> list[DomainSource]:
    return [
        DomainSource(path.parent.name, path.parent, f"mantra_env.domains.{path.parent.name}", "mantra-env")
        for path in sorted(SHIPPED_DIR.glob("*/__init__.py"))
        if _NAME.match(path.parent.name)
    ]


def _entry_points() -> list[DomainSource]:
    return _entry_points_on(tuple(sys.path))


@functools.lru_cache(maxsize=8)
def _entry_points_on(path: tuple[str, ...]) -> list[DomainSource]:
    """Scanning every installed distribution takes ~10 ms: done once per ``sys.path``."""
    found = []
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        origin = f"entry point {entry.name} = {entry.value}" + (f" of {entry.dist.name}" if entry.dist else "")
        if entry.name == ALL_DOMAINS:
            warnings.warn(f"{ENTRY_POINT_GROUP}: {origin}: {_RESERVED}; rename it; skipped", UserWarning, stacklevel=2)
            continue
        try:  # finds the folder without running the module itself (a dotted name imports its parents)
            spec = importlib.util.find_spec(entry.module)
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.submodule_search_locations:
            problem = f"{origin}: {entry.module!r} is not importable as a package (a domain is a folder)"
            found.append(DomainSource(entry.name, Path(), entry.module, origin, problem))
            continue
        found.append(DomainSource(entry.name, Path(next(iter(spec.submodule_search_locations))), entry.module, origin))
    return found


def _on_path() -> list[DomainSource]:
    """The domains on the path. An entry that is no folder, or a folder whose name is no domain name, is skipped
    with a warning: one mistake in the variable must not hide the shipped domains and the other entries."""
    found = []
    for entry in filter(None, os.environ.get(PATH_VARIABLE, "").split(os.pathsep)):
        root = Path(entry).expanduser()
        if not root.is_dir():
            _skip(f"{root} is not a folder (a domain folder, or a folder of them)")
            continue
        folders = [root] if (root / "__init__.py").exists() else sorted(p.parent for p in root.glob("*/__init__.py"))
        for folder in folders:
            if not _NAME.match(folder.name):
                _skip(
                    f"{folder}: a domain folder's name is the domain's name: lowercase letters, digits and _, "
                    "starting with a letter"
                )
                continue
            if folder.name == ALL_DOMAINS:
                _skip(f"{folder}: {_RESERVED}; rename the folder")
                continue
            module = f"{USER_MODULE_PREFIX}.{folder.name}"
            found.append(DomainSource(folder.name, folder.resolve(), module, PATH_VARIABLE))
    return found


_SKIPPED: set[str] = set()


def _skip(problem: str) -> None:
    """Warn of a skipped path entry, once per process (the path is read each time domains are looked up)."""
    if problem not in _SKIPPED:
        _SKIPPED.add(problem)
        warnings.warn(f"{PATH_VARIABLE}: {problem}; skipped", UserWarning, stacklevel=4)


__all__ = [
    "ALL_DOMAINS",
    "ENTRY_POINT_GROUP",
    "PATH_VARIABLE",
    "DomainInfo",
    "DomainSource",
    "SuiteEntry",
    "domain_info",
    "domain_source",
    "domain_sources",
    "suite_entries",
    "suite_folders",
]
