"""The ``telecom`` domain: technical support and billing of a mobile operator (no-service, mobile-data and MMS
diagnosis, line suspension and resumption, bills, roaming, plans and data refuels).

The database (``db.json``, written by ``make_db.py``) is copy-on-write: see :mod:`mantra_env.domains.overlay`.
No suite ships yet: the telecom suite comes from the generation pipeline.
"""

from __future__ import annotations

from pathlib import Path

from mantra_env.domains import Domain
from mantra_env.domains.telecom.database import TelecomDatabase
from mantra_env.domains.telecom.tools import TelecomToolkit

DOMAIN = Domain.from_folder(Path(__file__).parent, "telecom", TelecomToolkit, TelecomDatabase)

__all__ = ["DOMAIN", "TelecomDatabase", "TelecomToolkit"]
