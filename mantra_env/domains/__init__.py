"""Domains: a manual, a toolkit over a simulated database, the base data, and the suites built on them.

Each domain is a package exposing ``DOMAIN: Domain`` (shipped under ``mantra_env/domains/``, or the user's: see
:mod:`mantra_env.domains.discovery`); it is imported only when first asked for (:func:`load_domain`), so
importing mantra-env does not import every domain.
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import json
import sys
import traceback
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from pydantic import BaseModel, ValidationError

from mantra_env.case import Suite, load_suite
from mantra_env.checks import Answer
from mantra_env.checks.facts import canonical_fact, resolve_path
from mantra_env.domains.discovery import DomainSource, domain_info, domain_source, domain_sources, suite_folders
from mantra_env.domains.overlay import OverlayDatabase
from mantra_env.errors import DomainError, MantraError, did_you_mean, error_path
from mantra_env.toolkit import Toolkit
from mantra_env.tools import ToolSpec, fits_schema
from mantra_env.trace import ToolKind


class EpisodeConstants(NamedTuple):
    """The parts of a domain's episodes that never change: the manual and the tool specs as JSON text (the bulk
    of every opening observation), each tool's kind (read / write) by name, and the specs themselves."""

    manual_json: str
    tools_json: str
    kinds: Mapping[str, ToolKind]
    specs: tuple[ToolSpec, ...]


@dataclass(frozen=True)
class Domain:
    """Everything an episode of a domain needs."""

    name: str
    manual: str
    toolkit: Callable[[Any], Toolkit]
    """Builds the toolkit over a fresh database."""
    database_model: type[BaseModel]
    base_data: dict[str, Any]
    folder: Path | None = None
    """The domain folder (``suites/``, ``domain.yaml``), if it has one."""

    @property
    def suite_dirs(self) -> dict[str, Path]:
        """Suite name -> folder with suite.jsonl and manifest.json, read from the folder each time (so a suite
        built after the domain was imported is seen)."""
        return suite_folders(self.folder) if self.folder is not None else {}

    @property
    def default_suite(self) -> str | None:
        """The suite ``--suite <domain>`` and ``mantra/<domain>-vN`` name (``domain.yaml``'s ``default_suite``)."""
        return domain_info(self.folder).default_suite if self.folder is not None else None

    @cached_property
    def _base_json(self) -> str:
        return json.dumps(self.base_data)

    @cached_property
    def episode_constants(self) -> EpisodeConstants:
        """What every episode of the domain shows and looks up, computed once per domain (building it takes a
        database and a toolkit: ~0.5 ms, once per episode otherwise)."""
        tools = tuple(self.tool_specs())
        specs = [spec.model_dump(mode="json") for spec in tools]
        return EpisodeConstants(
            manual_json=json.dumps(self.manual, ensure_ascii=False),
            tools_json=json.dumps(specs, ensure_ascii=False),
            kinds=MappingProxyType({spec["name"]: spec["kind"] for spec in specs}),
            specs=tools,
        )

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled by name when it is the shipped domain of that name (a worker process loads it, sharing its
        parsed database, instead of receiving megabytes of data), by its fields otherwise (cached values are
        recomputed)."""
        if self.name in domain_names() and load_domain(self.name) is self:
            return (load_domain, (self.name,))
        return (Domain, (self.name, self.manual, self.toolkit, self.database_model, self.base_data, self.suite_dirs))

    def check_suite(self, suite: Suite) -> None:
        """Refuse a suite that does not fit this domain: a case of another domain, a check naming a tool the
        domain lacks or pinning an argument its tool does not take (or a value of another JSON type than the
        tool's schema says), a database patch that does not apply.

        Such a check is never an honest verdict: ``NO-CALL ghost()`` passes every agent, ``CALL ghost()``
        fails every one. Every path that hands a suite to an episode goes through here (:func:`find_suite`,
        :class:`~mantra_env.env.MantraEnv`); a suite object is checked once per domain.

        Raises:
            DomainError: listing each problem with its case id, check id and a did-you-mean.
        """
        key = (self.name, id(suite))
        if _CHECKED_SUITES.get(key) is suite:
            return
        specs = {spec.name: spec.parameters for spec in self.tool_specs()}
        problems: list[str] = []
        for case in suite.cases:
            where = f"case {case.id!r}"
            if case.domain != self.name:
                problems.append(f"{where}: its domain is {case.domain!r}, not {self.name!r}")
                continue
            for entry in case.checks:
                check = entry.check
                found = [
                    problem
                    for atom in ([check.read] if isinstance(check, Answer) else check.atoms)
                    if (problem := _atom_problem(atom.tool, atom.args, specs))
                ]
                if not found and isinstance(check, Answer):  # its read fits the tool: are its facts the database's?
                    found = [problem] if (problem := self._answer_problem(check, case.database_patch)) else []
                problems.extend(f"{where}, check {entry.id!r}: {problem}" for problem in found)
            if case.database_patch:
                try:
                    self.fresh_database(case.database_patch)
                except DomainError as error:
                    problems.append(f"{where}: {error}")
        if problems:
            shown = "\n  ".join(problems[:10])
            more = f"\n  ... and {len(problems) - 10} more" if len(problems) > 10 else ""
            raise DomainError(f"suite {suite.manifest.name!r} does not fit domain {self.name!r}:\n  {shown}{more}")
        _CHECKED_SUITES[key] = suite

    def _answer_problem(self, check: Answer, patch: Sequence[dict[str, Any]] | None) -> str:
        """What is wrong with an ANSWER check on its case's database (``""`` if nothing): it must hold its facts,
        and when its read runs with the pinned arguments alone, they must be the facts at its path."""
        if check.expected is None:
            return "an ANSWER check without its facts (expected) can never pass; regenerate it at export"
        try:
            toolkit = self.toolkit(self.fresh_database(patch))
        except DomainError:
            return ""  # the patch's own problem is reported with the case
        result, error = toolkit.execute(check.read.tool, dict(check.read.args))
        if error is not None:
            return ""  # a read that needs more than its pins is verified at export, where the oracle's call is known
        try:
            found = [canonical_fact(check.kind, value) for value in resolve_path(result, check.path)]
        except MantraError as exc:
            return f"{check.read.text}.{check.path}: {exc}"
        if found != list(check.expected):
            return f"expects {list(check.expected)} at {check.path}, but the case's database holds {found}"
        return ""

    @classmethod
    def from_folder(
        cls, folder: Path, name: str, toolkit: Callable[[Any], Toolkit], database_model: type[BaseModel]
    ) -> Domain:
        """The domain laid out in ``folder``: ``manual.md``, ``db.json``, ``suites/<suite>/`` (each suite a
        folder with a ``manifest.json``) and ``domain.yaml`` (``default_suite: NAME``; needed once a suite ships).
        """
        return cls(
            name=name,
            manual=(folder / "manual.md").read_text(encoding="utf-8"),
            toolkit=toolkit,
            database_model=database_model,
            base_data=load_json(folder / "db.json"),
            folder=folder,
        )

    def tool_specs(self) -> list[ToolSpec]:
        """The domain's tools as agents see them (derived from the toolkit's code)."""
        return self.toolkit(self.fresh_database()).tool_specs()

    @cached_property
    def _overlay_base(self) -> OverlayDatabase | None:
        """The validated base of a copy-on-write database (see ``overlay``), shared by every episode."""
        if not issubclass(self.database_model, OverlayDatabase):
            return None
        try:
            return self.database_model.model_validate(self.base_data)
        except ValidationError as exc:
            problems = "; ".join(f"{error_path(e['loc'])}: {e['msg']}" for e in exc.errors()[:5])
            raise DomainError(f"{self.name}: the base database is invalid: {problems}") from None

    def fresh_database(self, patch: Sequence[dict[str, Any]] | None = None) -> BaseModel:
        """A new database: a copy-on-write view of the base (``OverlayDatabase`` models), or a copy of the base
        data; ``patch`` applied and validated."""
        try:
            if self._overlay_base is not None:  # O(patch): nothing is copied or validated but the patched records
                return self._overlay_base.episode(patch)
            if not patch:  # the common case, once per episode: pydantic parses the JSON text faster than a deepcopy
                return self.database_model.model_validate_json(self._base_json)
            data = copy.deepcopy(self.base_data)
            for position, operation in enumerate(patch):
                apply_patch_operation(data, operation, where=f"database_patch[{position}]")
            return self.database_model.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(f"{error_path(e['loc'])}: {e['msg']}" for e in exc.errors()[:5])
            raise DomainError(f"{self.name}: the patched database is invalid: {problems}") from None


_CHECKED_SUITES: weakref.WeakValueDictionary[tuple[str, int], Suite] = weakref.WeakValueDictionary()


def _atom_problem(tool: str, args: Mapping[str, Any], specs: Mapping[str, dict[str, Any]]) -> str:
    """What is wrong with an atom ``tool(args)`` for tools with these parameter schemas (``""`` if nothing)."""
    schema = specs.get(tool)
    if schema is None:
        hint = did_you_mean(tool, specs)
        return f"{tool!r} is not a tool of this domain; {hint or 'its tools: ' + ', '.join(specs)}"
    properties: dict[str, Any] = schema.get("properties", {})
    for name, value in args.items():
        if name not in properties:
            hint = did_you_mean(name, properties)
            takes = ", ".join(properties) or "no arguments"
            return f"{tool} takes no argument {name!r}; {hint or 'it takes ' + takes}"
        if not fits_schema(value, properties[name], schema.get("$defs", {})):
            return f"{tool}({name}={json.dumps(value, ensure_ascii=False)}): {_expected(properties[name])}"
    return ""


def _expected(schema: Mapping[str, Any]) -> str:
    return f"the tool's schema allows {json.dumps({k: v for k, v in schema.items() if k != 'description'})}"


def apply_patch_operation(data: dict[str, Any], operation: dict[str, Any], where: str = "patch") -> None:
    """Apply one ``{"op": "set" | "remove", "path": "a.b.c", "value": ...}`` operation in place.

    ``set`` creates or replaces the last key (its parent must exist); ``remove`` deletes an existing key. Paths
    are dot-separated object keys; list elements are addressed by their index.
    """
    op, path = operation.get("op"), operation.get("path")
    if op not in ("set", "remove") or not isinstance(path, str) or not path:
        raise DomainError(
            f'{where}: expected {{"op": "set" or "remove", "path": "a.b.c", "value": ...}}, got {operation}'
        )
    if op == "set" and "value" not in operation:
        raise DomainError(f"{where}: a 'set' needs a 'value'")
    parts = path.split(".")
    node: Any = data
    for depth, key in enumerate(parts[:-1]):
        node = _child(node, key, f"{where}: path {'.'.join(parts[: depth + 1])!r} does not exist")
    last = parts[-1]
    if isinstance(node, list):
        index = _index(node, last, f"{where}: path {path!r} does not exist")
        if op == "set":
            node[index] = operation["value"]
        else:
            del node[index]
    elif isinstance(node, dict):
        if op == "set":
            node[last] = operation["value"]
        elif last in node:
            del node[last]
        else:
            raise DomainError(f"{where}: cannot remove {path!r}: it does not exist")
    else:
        raise DomainError(f"{where}: {'.'.join(parts[:-1])!r} is a value, not an object or list")


def _index(node: list[Any], key: str, message: str) -> int:
    digits = key.removeprefix("-")
    # ASCII digits only: str.isdigit() accepts '٣' (int() reads it as 3) and '²' (int() refuses it).
    if not (digits.isascii() and digits.isdigit()) or not -len(node) <= int(key) < len(node):
        raise DomainError(message)
    return int(key)


def _child(node: Any, key: str, message: str) -> Any:
    if isinstance(node, dict) and key in node:
        return node[key]
    if isinstance(node, list):
        return node[_index(node, key, message)]
    raise DomainError(message)


def domain_names() -> list[str]:
    """Names of the domains mantra-env can load: shipped, installed (entry points) and on ``MANTRA_DOMAINS_PATH``."""
    return list(domain_sources())


def load_domain(name: str) -> Domain:
    """Import and return a domain by name, with a "did you mean" for typos."""
    source = domain_source(name)
    if source is None:
        names = domain_names()
        hint = did_you_mean(name, names)
        hint = f"{hint} " if hint else ""
        raise DomainError(
            f"unknown domain {name!r}: {hint}known domains: {', '.join(names) or 'none'} (a domain of your own: "
            "see docs/domains.md)"
        )
    try:
        module = _import(source)
    except Exception as error:  # a bug in the domain's own code: one line naming where, not its traceback
        raise DomainError(
            f"domain {name!r} ({source.folder}, {source.origin}) failed to import: {type(error).__name__}: "
            f"{error} (at {_raised_at(error)}); fix its code"
        ) from error
    domain = getattr(module, "DOMAIN", None)
    if not isinstance(domain, Domain):
        raise DomainError(f"domain package {source.module} ({source.folder}) does not define DOMAIN = Domain(...)")
    if domain.name != name:
        raise DomainError(f"{source.folder}: its DOMAIN is named {domain.name!r}; name it {name!r}, as its folder")
    return domain


def _raised_at(error: Exception) -> str:
    """``file:line`` where ``error`` was raised (for a syntax error: the line that does not parse)."""
    if isinstance(error, SyntaxError):
        return f"{error.filename}:{error.lineno}"
    frames = traceback.extract_tb(error.__traceback__)
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "?"


def _import(source: DomainSource) -> Any:
    """The domain's module, imported once (from its folder for ``MANTRA_DOMAINS_PATH``, else by name)."""
    if not source.on_path or source.module in sys.modules:
        return importlib.import_module(source.module)
    spec = importlib.util.spec_from_file_location(
        source.module, source.folder / "__init__.py", submodule_search_locations=[str(source.folder)]
    )
    assert spec is not None and spec.loader is not None  # a file location always has a spec and loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[source.module] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[source.module]
        raise
    return module


def load_json(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise DomainError(f"{path}: expected a JSON object")
    return data


def find_suite(name_or_path: str) -> tuple[Domain | None, Suite]:
    """A suite by name (``DOMAIN``, its default suite, or ``DOMAIN/SUITE``) or by folder path, with its domain if
    known.

    A suite whose domain is known is checked against it (:meth:`Domain.check_suite`).
    """
    path = Path(name_or_path)
    if path.exists():
        suite = load_suite(path)
        domain = load_domain(suite.manifest.domain) if suite.manifest.domain in domain_names() else None
        if domain is not None:
            domain.check_suite(suite)
        return domain, suite
    domain_name, _, suite_name = name_or_path.partition("/")
    if domain_name not in domain_names() and (path.suffix or len(path.parts) > 2 or name_or_path[:1] in "./~"):
        raise DomainError(f"{name_or_path}: no such suite folder or file (and not a suite name: DOMAIN/SUITE)")
    domain = load_domain(domain_name)
    suite_dirs = domain.suite_dirs
    if not suite_dirs:
        raise DomainError(f"the {domain_name} domain has no suite yet (its suite comes from the generation pipeline)")
    key = suite_name or domain.default_suite
    if key is None:
        names = ", ".join(f"{domain_name}/{name}" for name in suite_dirs)
        raise DomainError(
            f"domain {domain_name!r} declares no default suite: name one ({names}), or declare it with a line "
            "`default_suite: NAME` in the domain folder's domain.yaml"
        )
    if key not in suite_dirs:
        hint = did_you_mean(key, suite_dirs)
        declared = "" if suite_name else " (the default_suite its domain.yaml declares)"
        raise DomainError(
            f"domain {domain_name!r} has no suite {key!r}{declared}; {hint + ' ' if hint else ''}"
            f"its suites: {', '.join(suite_dirs)}"
        )
    suite = load_suite(suite_dirs[key])
    domain.check_suite(suite)
    return domain, suite


__all__ = [
    "Domain",
    "DomainError",
    "apply_patch_operation",
    "domain_names",
    "find_suite",
    "load_domain",
    "load_json",
]
