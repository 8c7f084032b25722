"""The ``retail`` domain: customer service of an online shop (orders, returns, exchanges, payments, gift cards).

The database (``db.json``, written by ``make_db.py``) is copy-on-write: see :mod:`mantra_env.domains.overlay`.
No suite ships yet: the retail suite comes from the generation pipeline.
"""

from __future__ import annotations

from pathlib import Path

from mantra_env.domains import Domain, load_json
from mantra_env.domains.retail.database import RetailDatabase
from mantra_env.domains.retail.tools import RetailToolkit

HERE = Path(__file__).parent

DOMAIN = Domain(
    name="retail",
    manual=(HERE / "manual.md").read_text(encoding="utf-8"),
    toolkit=RetailToolkit,
    database_model=RetailDatabase,
    base_data=load_json(HERE / "db.json"),
    suite_dirs={path.name: path for path in sorted((HERE / "suites").glob("*")) if (path / "manifest.json").exists()},
)

__all__ = ["DOMAIN", "RetailDatabase", "RetailToolkit"]
