"""Versioned JSON schemas of the core records, exported to files beside this module.

``python -m mantra_env.schemas`` rewrites the files; ``--check`` fails (exit 1) if any is out of date, which CI
runs so that a model change cannot land without its schema.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter

from mantra_env.case import SCHEMA_VERSION, Case, SuiteManifest
from mantra_env.checks import Check
from mantra_env.trace import Trace
from mantra_env.verdict import VERDICT_ADAPTER, VERDICT_SCHEMA_VERSION
from mantra_env.worldmodel import MODEL_ADAPTER
from mantra_env.worldmodel.edits import EDIT_ADAPTER

SCHEMA_DIR = Path(__file__).parent

EXPORTED: dict[str, type[BaseModel] | TypeAdapter[Any]] = {
    "case": Case,
    "suite-manifest": SuiteManifest,
    "check": TypeAdapter(Check),
    "trace": Trace,
    "verdict": VERDICT_ADAPTER,
    "world-model": MODEL_ADAPTER,
    "edit": EDIT_ADAPTER,
}
# A record's schema version when it differs from the case's SCHEMA_VERSION (older versions' files stay, for
# reading records stored under them).
VERSIONS: dict[str, int] = {"verdict": VERDICT_SCHEMA_VERSION}


def version_of(name: str) -> int:
    return VERSIONS.get(name, SCHEMA_VERSION)


def schema_of(name: str) -> dict[str, Any]:
    """The JSON schema of an exported record, with its ``$id`` naming the version."""
    target = EXPORTED[name]
    schema = target.json_schema() if isinstance(target, TypeAdapter) else target.model_json_schema()
    return {"$id": f"mantra-env/{name}.v{version_of(name)}.json", **schema}


def schema_path(name: str) -> Path:
    return SCHEMA_DIR / f"{name}.v{version_of(name)}.json"


def render(name: str) -> str:
    return json.dumps(schema_of(name), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def stale_schemas() -> list[str]:
    """Names whose file is missing or differs from the current models."""
    stale = []
    for name in EXPORTED:
        path = schema_path(name)
        if not path.exists() or path.read_text(encoding="utf-8") != render(name):
            stale.append(name)
    return stale


def export_schemas() -> list[Path]:
    """Write every schema file; returns the paths written."""
    paths = []
    for name in EXPORTED:
        path = schema_path(name)
        path.write_text(render(name), encoding="utf-8")
        paths.append(path)
    return paths
