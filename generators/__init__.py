"""The MANTRA generation pipeline: manual + tool schema -> validated suite."""
