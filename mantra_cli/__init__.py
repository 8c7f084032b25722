"""The ``mantra`` command: one verb per ``python -m`` entry point of mantra-env (the top layer; the core never
imports it but for the ``python -m mantra_env.run`` shim)."""

from mantra_env.mantra_cli.main import VERBS, main
from mantra_env.namespace import adopt_legacy_name

__all__ = ["VERBS", "main"]

adopt_legacy_name(__name__, __file__)  # the old top-level name: see mantra_env/namespace.py
