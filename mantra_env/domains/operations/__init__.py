"""The ``operations`` domain: an enterprise operations desk (software licences, travel, hardware procurement)."""

from __future__ import annotations

from pathlib import Path

from mantra_env.domains import Domain, load_json
from mantra_env.domains.operations.database import OperationsDatabase
from mantra_env.domains.operations.tools import OperationsToolkit

HERE = Path(__file__).parent

DOMAIN = Domain(
    name="operations",
    manual=(HERE / "manual.md").read_text(encoding="utf-8"),
    toolkit=OperationsToolkit,
    database_model=OperationsDatabase,
    base_data=load_json(HERE / "db.json"),
    suite_dirs={path.name: path for path in sorted((HERE / "suites").glob("*")) if (path / "manifest.json").exists()},
)

__all__ = ["DOMAIN", "OperationsDatabase", "OperationsToolkit"]
