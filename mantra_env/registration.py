"""Gymnasium ids ``mantra/<suite>-v1`` for every suite shipped with a domain, registered on import of mantra_env.

Discovery only lists folders (no domain is imported until an environment is made). Use
``gymnasium.make("mantra/operations-v1", case="fig1-case1")`` after ``import mantra_env``, or
``gymnasium.make("mantra_env:mantra/operations-v1")``. Other suites (e.g. generated ones) can be registered with
:func:`register_suite`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym

DOMAINS_DIR = Path(__file__).parent / "domains"
VERSION = 1
"""Bumped when an env's behaviour changes (see the Version History in :class:`~mantra_env.env.MantraEnv`)."""


def make_env(suite: str, **kwargs: Any) -> Any:
    """Build a :class:`~mantra_env.env.MantraEnv` for a suite name (``operations/starter``) or folder."""
    from mantra_env.domains import DomainError, find_suite
    from mantra_env.env import MantraEnv

    domain, loaded = find_suite(suite)
    if domain is None:
        raise DomainError(f"suite {suite!r} names domain {loaded.manifest.domain!r}, which mantra-env does not ship")
    return MantraEnv(loaded, domain, **kwargs)


def env_id(suite_name: str) -> str:
    return f"mantra/{suite_name}-v{VERSION}"


def register_suite(suite_name: str, suite: str | Path, max_episode_steps: int | None = None) -> str:
    """Register ``mantra/<suite_name>-v1`` for a suite name or folder; returns the id."""
    identifier = env_id(suite_name)
    if identifier not in gym.registry:
        gym.register(
            id=identifier,
            entry_point="mantra_env.registration:make_env",
            kwargs={"suite": str(suite)},
            max_episode_steps=max_episode_steps,
            disable_env_checker=False,
        )
    return identifier


def shipped_suites() -> dict[str, Path]:
    """Suite name -> folder for every ``domains/<domain>/suites/<suite>/manifest.json``.

    A domain's suite named ``starter`` is registered under the domain's name (``mantra/operations-v1``), others as
    ``<domain>-<suite>``.
    """
    found = {}
    for manifest in sorted(DOMAINS_DIR.glob("*/suites/*/manifest.json")):
        folder = manifest.parent
        domain = folder.parent.parent.name
        found[domain if folder.name == "starter" else f"{domain}-{folder.name}"] = folder
    return found


def domains_without_suites() -> list[str]:
    """Domains that ship no suite yet: ``mantra/<domain>-v1`` is registered for them too, so that making it says
    so (a clear :class:`~mantra_env.domains.DomainError`) instead of gymnasium's "doesn't exist"."""
    with_suites = {manifest.parents[2].name for manifest in DOMAINS_DIR.glob("*/suites/*/manifest.json")}
    return sorted(p.parent.name for p in DOMAINS_DIR.glob("*/__init__.py") if p.parent.name not in with_suites)


def register_shipped_suites() -> list[str]:
    suites = [register_suite(name, folder) for name, folder in shipped_suites().items()]
    return suites + [register_suite(name, name) for name in domains_without_suites()]
