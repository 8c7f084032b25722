"""What makes a stored run the same run when it is resumed: the content hash of its suite and domain, the name
its suite is stored under, and which run ``--resume`` without a name continues.

The store refuses to resume a run whose suite hash, model, agent or settings changed
(:meth:`~mantra_env.store.records.RunRecord.differences`); this module computes the hash and picks the run.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from mantra_env.case import Suite
from mantra_env.domains import Domain, find_suite
from mantra_env.errors import MantraError
from mantra_env.store import RolloutStore


class ResumeError(MantraError, LookupError):
    """``--resume`` cannot tell which run to continue."""


def suite_hash(suite: Suite, domain: Domain) -> str:
    """A content hash of what an episode of ``suite`` sees and is graded on: its cases, and its domain's manual,
    tool specs and base database (not the manifest's description or counts)."""
    content = {
        "cases": [case.model_dump(mode="json") for case in suite.cases],
        "manual": domain.manual,
        "tools": domain.episode_constants.tools_json,
        "database": domain.base_data,
    }
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def suite_label(requested: str, suite: Suite, domain: Domain) -> str:
    """The name a run of ``suite`` is stored under (``runs.suite``), which ``mantra export`` and the viewer load
    the suite by: ``DOMAIN/SUITE`` when it was named so, or given as a folder holding the same cases as the suite
    of that name; the folder's absolute path when it holds other cases (an edited copy), so that the run is never
    taken for one of the named suite."""
    named = f"{suite.manifest.domain}/{suite.manifest.name}"
    path = Path(requested)
    if not path.exists():
        return named
    try:
        _, same_name = find_suite(named)
    except MantraError:
        return str(path.resolve())
    return named if suite_hash(same_name, domain) == suite_hash(suite, domain) else str(path.resolve())


def latest_run(store: RolloutStore, suite: str, model: str) -> tuple[str, list[str]]:
    """The latest run of ``suite`` with ``model`` in ``store`` and the older ones; :class:`ResumeError` listing the
    runs the database holds when there is none."""
    candidates = store.runs_of(suite, model)
    if candidates:
        return candidates[0], candidates[1:]
    rows = store.query("SELECT run_id, suite, model FROM runs ORDER BY created_at DESC LIMIT 10")
    held = "; ".join(f"{run_id} ({run_suite}, {run_model})" for run_id, run_suite, run_model in rows)
    raise ResumeError(
        f"--resume: {store.path} holds no run of {suite} with model {model}"
        + (f"; its latest runs: {held}; name one with --run-name" if held else "")
        + ", or drop --resume to start a new run"
    )
