"""The validation stage's solver results on disk (``RUN_DIR/solver_memo/``), so that a resumed run, or a waiting
run's next pass, never solves a query it has solved before.

A waiting run replays every unfinished sample's rounds from the first at each pass (the judges' answers come from
the recording), and on airline one scenario's witness alone takes minutes: without the memo each pass solved
every earlier round again. An entry is keyed by everything the solver reads (the world model with the scenario's
goal, the checks, the initial state, the tools, the bound and the work budget) and by the source of the core
package (:mod:`mantra_env`), whose semantics the results depend on; the solver is deterministic (a work budget,
not a clock), so a stored result is what solving again would give. A file that cannot be read is solved again.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

import mantra_env
from mantra_env.generators.rundir import write_text
from mantra_env.smt import QueryResult
from mantra_env.worldmodel import WorldModel, format_model

log = logging.getLogger("mantra.generators.solver_memo")


class MemoEntry(BaseModel):
    """What the validation loop solved for one scenario's artifacts: the forward query, and once the forward query
    was consistent, every backward query and the compliant witness."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    forward: QueryResult
    backward: list[QueryResult] | None = None
    witness: QueryResult | None = None


@cache
def core_digest() -> str:
    """A digest of the core package's source: results solved under other semantics are not reused."""
    root = Path(mantra_env.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):  # rglob does not enter the links to the outer packages
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _as_json(value: object) -> object:
    """The solver arguments that are not JSON: world models as their text, checks and tools as their JSON."""
    if isinstance(value, WorldModel):
        return format_model(value)
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    raise TypeError(f"a solver argument of type {type(value).__name__} has no key")


class SolverMemo:
    """Entries in ``folder``, one JSON file per key."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @staticmethod
    def key(arguments: Mapping[str, Any]) -> str:
        """The key of a solver built from ``arguments`` (:class:`~mantra_env.smt.CaseSolver`'s keyword arguments)."""
        text = json.dumps([core_digest(), arguments], sort_keys=True, ensure_ascii=False, default=_as_json)
        return hashlib.sha256(text.encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def load(self, key: str) -> MemoEntry | None:
        path = self._path(key)
        try:
            return MemoEntry.model_validate_json(path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValidationError, ValueError) as error:
            log.warning("%s: unreadable solver memo entry, solving again (%s)", path, str(error).splitlines()[0])
            return None

    def save(self, key: str, entry: MemoEntry) -> None:
        write_text(self._path(key), entry.model_dump_json() + "\n")
