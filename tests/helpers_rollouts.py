"""A rollout database made the way ``python -m mantra_env.run`` makes one: the scripted agents (oracle, no-op,
random, write-first) on a shipped suite, through the real runner. Shared by the report and notebook tests through
the ``scripted_db`` fixture in ``tests/conftest.py``."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Sequence
from pathlib import Path

from mantra_env.agents.base import ScriptedAgent
from mantra_env.agents.scripted import SCRIPTED
from mantra_env.domains import find_suite, load_domain
from mantra_env.runner import RunSettings, run_suite
from mantra_env.store import RolloutStore
from mantra_env.store.records import RunRecord

POLICIES = ("oracle", "noop", "random", "write-first")
ATTEMPTS = 3
GENERATION_COUNTS = {"generated": 48, "forward_validated": 30, "backward_validated": 24, "final": 24}


def run_scripted(
    db: Path,
    suite_argument: str = "operations",
    policies: Sequence[str] = POLICIES,
    attempts: int = ATTEMPTS,
    cases: Sequence[str] = (),
) -> list[str]:
    """Run each scripted policy on the suite into ``db`` (one run each, stored config like the CLI's);
    returns the run ids in the order they were run."""
    domain, suite = find_suite(suite_argument)
    assert domain is not None, f"{suite_argument} names a domain mantra-env does not ship"
    run_ids = []
    with RolloutStore(db) as store:
        for name in policies:
            model = f"scripted:{name}"
            record = RunRecord(
                run_id=f"{suite.manifest.name}-scripted_{name}",
                suite=f"{suite.manifest.domain}/{suite.manifest.name}",
                suite_version=suite.manifest.version,
                model=model,
                agent=model,
                config={"suite": suite_argument, "model": model, "attempts": attempts, "seed": 0},
            )
            settings = RunSettings(attempts=attempts, concurrency=4, backoff_s=0.0, cases=tuple(cases))
            policy = SCRIPTED[name]
            asyncio.run(run_suite(store, record, suite, domain, lambda p=policy: ScriptedAgent(p()), settings))
            run_ids.append(record.run_id)
    return run_ids


def generated_suite(folder: Path, stage_counts: dict[str, int] | None = None) -> Path:
    """A copy of the operations starter suite whose manifest carries generation records (``stage_counts``)."""
    source = load_domain("operations").suite_dirs["starter"]
    _, suite = find_suite(str(source))
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source / "suite.jsonl", folder / "suite.jsonl")
    manifest = suite.manifest.model_dump(mode="json")
    manifest.update(name="generated", stage_counts=stage_counts or GENERATION_COUNTS)
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return folder
