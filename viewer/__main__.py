"""``mantra view --db results/mantra.duckdb``: serve the viewer on localhost."""

from __future__ import annotations

import argparse
import sys

from mantra_env.errors import MantraError
from mantra_env.store import RolloutStore

from .app import create_app


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="mantra view",
        description="Browse stored runs and episodes in a web browser (read-only; a live run's snapshot too).",
        epilog="example: mantra view --db results/mantra.duckdb --port 8000",
    )
    parser.add_argument("--db", default="results/mantra.duckdb")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    try:
        RolloutStore(args.db, read_only=True).close()  # fail now, clearly, on a missing or foreign file
    except MantraError as error:
        print(f"mantra view: {error}", file=sys.stderr)
        return 2
    import uvicorn

    uvicorn.run(create_app(args.db), host=args.host, port=args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
