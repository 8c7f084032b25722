"""The ``retail`` domain: customer service of an online shop (orders, returns, exchanges, payments, gift cards).

The database (``db.json``, written by ``make_db.py``) is copy-on-write: see :mod:`mantra_env.domains.overlay`.
No suite ships yet: the retail suite comes from the generation pipeline.
"""

from __future__ import annotations

from pathlib import Path

from mantra_env.domains import Domain
from mantra_env.domains.retail.database import RetailDatabase
from mantra_env.domains.retail.tools import RetailToolkit

DOMAIN = Domain.from_folder(Path(__file__).parent, "retail", RetailToolkit, RetailDatabase)

__all__ = ["DOMAIN", "RetailDatabase", "RetailToolkit"]
