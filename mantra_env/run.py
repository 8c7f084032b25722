"""``python -m mantra_env.run``: kept working for scripts and docs that use it; the command itself lives in the
top layer, :mod:`mantra_env.mantra_cli.run` (``mantra run``), because it composes the core with agents and graders.

This module is the one import from the core to an outer package (``tests/test_layers.py`` keeps it so).
"""

from mantra_env.mantra_cli.run import main

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(main())
