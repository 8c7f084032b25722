"""Gymnasium ids for every suite of every domain (shipped, installed, or on ``MANTRA_DOMAINS_PATH``), registered on
import of mantra_env.

Each suite is ``<domain>/<suite>-v<N>`` (the name ``--suite`` takes; N is :data:`VERSION`, the env's own version,
plus the manifest's version, bumped whenever its cases change); a domain's default suite (``domain.yaml``) is also
``mantra/<domain>-v<N>``, as ``--suite <domain>`` is. A domain with no suite yet gets
``mantra/<domain>-v<VERSION>``, whose making says so.

Discovery reads folders and manifests only (no domain is imported until an environment is made). Use
``gymnasium.make("mantra/operations-v2", case="fig1-case1")`` after ``import mantra_env``, or
``gymnasium.make("mantra_env:mantra/operations-v2")``. Suites elsewhere can be registered with :func:`register_suite`.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym

from mantra_env.domains.discovery import ENV_VERSION, SuiteEntry, domain_source, domain_sources, suite_entries
from mantra_env.errors import MantraError


def make_env(suite: str, split: str | None = None, **kwargs: Any) -> Any:
    """Build a :class:`~mantra_env.env.MantraEnv` for a suite name (``operations/starter``) or folder; ``split``
    (``"train"`` or ``"test"``, :mod:`mantra_env.splits`) keeps only that side's cases."""
    from mantra_env.domains import DomainError, find_suite
    from mantra_env.env import MantraEnv
    from mantra_env.splits import split_suite

    domain, loaded = find_suite(suite)
    if domain is None:
        raise DomainError(f"suite {suite!r} names domain {loaded.manifest.domain!r}, which mantra-env cannot find")
    return MantraEnv(split_suite(loaded, split), domain, **kwargs)


VERSION = ENV_VERSION
"""Bumped when an env's behaviour changes (see the Version History in :class:`~mantra_env.env.MantraEnv`)."""


def env_id(suite_name: str, version: int = 0) -> str:
    """``mantra/<suite_name>-v<N>``: N is the env's version plus the suite's ``version``."""
    return f"mantra/{suite_name}-v{VERSION + version}"


def register_suite(suite_name: str, suite: str | Path, max_episode_steps: int | None = None, version: int = 0) -> str:
    """Register ``mantra/<suite_name>-v<N>`` (see :func:`env_id`) for a suite name or folder; returns the id."""
    return _register(env_id(suite_name, version), str(suite), max_episode_steps)


def _register(identifier: str, suite: str, max_episode_steps: int | None = None) -> str:
    if identifier not in gym.registry:
        gym.register(
            id=identifier,
            entry_point="mantra_env.registration:make_env",
            kwargs={"suite": suite},
            max_episode_steps=max_episode_steps,
            disable_env_checker=False,
        )
    return identifier


def catalog() -> tuple[list[SuiteEntry], list[str]]:
    """Every suite of every domain (default suites first within a domain), and the domains with no suite yet.

    Raises:
        DomainError: for a malformed ``domain.yaml`` or manifest, or a domain defined twice.
    """
    entries: list[SuiteEntry] = []
    without: list[str] = []
    for name in domain_sources():
        found = domain_suites(name)
        entries.extend(found)
        if not found:
            without.append(name)
    return entries, without


def domain_suites(name: str) -> list[SuiteEntry]:
    """The suites of domain ``name``, default first (none for an unknown domain).

    Raises:
        DomainError: for a malformed ``domain.yaml`` or manifest, or a domain defined twice.
    """
    source = domain_source(name)
    return suite_entries(source) if source is not None else []


def register_shipped_suites() -> list[str]:
    """Register every suite's ids (see the module docstring); returns them.

    A broken domain folder is a warning here (``import mantra_env`` must not fail on a user's folder; the other
    domains are registered) and an error where it is used.
    """
    ids: list[str] = []
    try:
        names = list(domain_sources())
    except MantraError as error:
        warnings.warn(f"mantra_env: no gymnasium ids registered: {error}", stacklevel=2)
        return ids
    for name in names:
        try:
            entries = domain_suites(name)
        except MantraError as error:
            warnings.warn(f"mantra_env: no gymnasium ids for domain {name!r}: {error}", stacklevel=2)
            continue
        ids += [_register(identifier, entry.run_name) for entry in entries for identifier in entry.env_ids]
        if not entries:
            ids.append(_register(env_id(name), name))
    return ids


def suite_env_ids() -> list[str]:
    """One gymnasium id per suite (``mantra/<domain>-vN`` for a default suite), sorted; for tests and listings."""
    return sorted(entry.env_ids[0] for entry in catalog()[0])
