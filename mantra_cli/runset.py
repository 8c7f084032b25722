"""What one ``mantra run`` runs: the suites and models its ``--suite`` and ``--model`` name (several, comma
separated, or ``--suite all``), and the run id of each (model, suite) pair.

Pure functions over the names; :mod:`mantra_env.mantra_cli.run` loads the suites, starts the models and runs the pairs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mantra_env.domains.discovery import ALL_DOMAINS
from mantra_env.errors import MantraError
from mantra_env.registration import catalog
from mantra_env.runner import check_run_name


class RunSetError(MantraError, ValueError):
    """``--suite`` or ``--model`` names nothing to run, or two runs of the set would share an id."""


def _split(text: str, option: str) -> list[str]:
    parts = [part.strip() for part in text.split(",")]
    if not all(parts):
        raise RunSetError(f"{option} {text!r} has an empty name between commas; e.g. {option} retail,airline")
    return list(dict.fromkeys(parts))  # a name given twice runs once


def default_suites() -> tuple[list[str], list[str]]:
    """What ``--suite all`` runs: every domain's default suite (``DOMAIN/SUITE``: shipped, installed and on
    ``MANTRA_DOMAINS_PATH``), and the domains left out because they have suites but declare no default."""
    entries, _ = catalog()
    chosen = [entry.run_name for entry in entries if entry.default]
    with_default = {entry.domain for entry in entries if entry.default}
    left_out = sorted({entry.domain for entry in entries} - with_default)
    return chosen, left_out


def expand_suites(text: str) -> tuple[list[str], list[str]]:
    """The suites ``--suite text`` names, in order, and the domains ``all`` left out (no default suite).

    ``text`` is a suite folder or file when such a path exists (a comma in a path is kept), else names separated
    by commas, each ``DOMAIN``, ``DOMAIN/SUITE``, a path, or ``all`` (every domain's default suite).
    """
    if Path(text).exists():
        return [text], []
    names: list[str] = []
    left_out: list[str] = []
    for part in _split(text, "--suite"):
        if part == ALL_DOMAINS:
            chosen, left_out = default_suites()
            if not chosen:
                raise RunSetError("--suite all: no domain has a default suite to run (see `mantra suites`)")
            names += chosen
        else:
            names.append(part)
    return list(dict.fromkeys(names)), left_out


def expand_models(text: str | None) -> list[str | None]:
    """The models ``--model text`` names (comma separated); ``[None]`` (the default model) when none is given."""
    return [None] if text is None else list(_split(text, "--model"))


def model_slug(model: str) -> str:
    """A model's name as a run id takes it (``scripted:oracle`` -> ``scripted_oracle``)."""
    return re.sub(r"[^A-Za-z0-9._+@-]", "_", model)


@dataclass(frozen=True)
class PairName:
    """What names one (model, suite) pair of a set in its run id."""

    model: str
    domain: str
    suite: str


def set_run_ids(base: str, pairs: Sequence[PairName]) -> list[str]:
    """``BASE-MODEL-DOMAIN`` per pair (``BASE-MODEL-DOMAIN.SUITE`` where the set runs two suites of one domain),
    each a valid run name (:func:`~mantra_env.runner.check_run_name`); :class:`RunSetError` if two pairs would
    share an id (e.g. a suite and an edited copy of it)."""
    suites_of: dict[str, set[str]] = {}
    for pair in pairs:
        suites_of.setdefault(pair.domain, set()).add(pair.suite)
    ids = []
    for pair in pairs:
        tag = pair.domain if len(suites_of[pair.domain]) == 1 else f"{pair.domain}.{pair.suite}"
        ids.append(check_run_name(f"{base}-{model_slug(pair.model)}-{tag}"))
    twice = sorted({run_id for run_id in ids if ids.count(run_id) > 1})
    if twice:
        raise RunSetError(
            f"two runs of the set would be stored as {twice[0]}: the set names one suite twice (e.g. a suite and a "
            "folder holding an edited copy of it); run them with separate commands"
        )
    return ids
