"""The store's error type (its own module so that the store and the schema checks can both raise it)."""

from __future__ import annotations

from mantra_env.errors import MantraError


class StoreError(MantraError, RuntimeError):
    """The rollout database cannot be opened or written as asked."""
