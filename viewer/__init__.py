"""Read-only web viewer of stored runs: ``mantra view --db results/mantra.duckdb``."""
