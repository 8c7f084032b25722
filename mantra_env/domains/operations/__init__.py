"""The ``operations`` domain: an enterprise operations desk (software licences, travel, hardware procurement)."""

from __future__ import annotations

from pathlib import Path

from mantra_env.domains import Domain
from mantra_env.domains.operations.database import OperationsDatabase
from mantra_env.domains.operations.tools import OperationsToolkit

DOMAIN = Domain.from_folder(Path(__file__).parent, "operations", OperationsToolkit, OperationsDatabase)

__all__ = ["DOMAIN", "OperationsDatabase", "OperationsToolkit"]
