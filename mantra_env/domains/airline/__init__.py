"""The ``airline`` domain: an airline's reservation desk (bookings, flight and cabin changes, passengers, baggage,
cancellations, compensation certificates).

The database (``db.json``, written by ``make_db.py``) is copy-on-write: see :mod:`mantra_env.domains.overlay`.
No suite ships yet: the airline suite comes from the generation pipeline.
"""

from __future__ import annotations

from pathlib import Path

from mantra_env.domains import Domain
from mantra_env.domains.airline.database import AirlineDatabase
from mantra_env.domains.airline.tools import AirlineToolkit

DOMAIN = Domain.from_folder(Path(__file__).parent, "airline", AirlineToolkit, AirlineDatabase)

__all__ = ["DOMAIN", "AirlineDatabase", "AirlineToolkit"]
