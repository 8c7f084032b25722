"""What every command-line entry point does with errors: a :class:`~mantra_env.errors.MantraError` is one line
``error: ...`` on stderr and exit code 2, never a traceback; Ctrl-C is exit code 130 with a line saying what was
kept and how to continue."""

from __future__ import annotations

import sys
from collections.abc import Callable

from mantra_env.errors import MantraError


def run_command(body: Callable[[], int], interrupted: str = "interrupted") -> int:
    """Run ``body`` and turn deliberate errors and interruptions into exit codes (see the module docstring)."""
    try:
        return body()
    except MantraError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\n{interrupted}", file=sys.stderr)
        return 130
