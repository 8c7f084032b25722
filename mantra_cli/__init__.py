"""The ``mantra`` command: one verb per ``python -m`` entry point of mantra-env (the top layer; the core
``mantra_env`` never imports it)."""

from mantra_cli.main import VERBS, main

__all__ = ["VERBS", "main"]
