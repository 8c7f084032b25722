"""``python -m mantra_env.store --db PATH``: bring a rollout database to this mantra-env's schema version.

Writing (``python -m mantra_env.run``) migrates a database itself; readers (the report, the notebooks) never
write, so an older database they refuse is upgraded with this command once. Runs and episodes stay as they are.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mantra_env.cli import run_command
from mantra_env.store.store import RolloutStore


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mantra_env.store", description=__doc__)
    parser.add_argument("--db", type=Path, required=True, help="rollout database file")
    args = parser.parse_args(argv)
    if not args.db.is_file():
        print(f"error: no rollout database at {args.db}", file=sys.stderr)
        return 2

    def body() -> int:
        with RolloutStore(args.db) as store:
            print(f"{args.db}: schema version {store.schema_version}")
        return 0

    return run_command(body)


if __name__ == "__main__":
    sys.exit(main())
