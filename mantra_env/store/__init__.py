"""The DuckDB rollout store: runs, episodes, steps and check verdicts, with read-side SQL views."""

from mantra_env.store.errors import StoreError
from mantra_env.store.records import EpisodeRecord, EpisodeStatus, RunRecord, Usage
from mantra_env.store.store import DEFAULT_DB, RolloutStore

__all__ = ["DEFAULT_DB", "EpisodeRecord", "EpisodeStatus", "RolloutStore", "RunRecord", "StoreError", "Usage"]
