"""``mantra view --db results/mantra.duckdb``: serve the viewer on localhost."""

from __future__ import annotations

import secrets
import sys

from mantra_env.cli import command_parser
from mantra_env.errors import MantraError
from mantra_env.store import RolloutStore
from mantra_env.webapp import exposure_warning, port_number

from .app import create_app


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(
        "mantra_env.viewer",
        "Browse stored runs and episodes in a web browser (read-only; a live run's snapshot too).",
        "--db results/mantra.duckdb",
        "--db results/mantra.duckdb --port 8001   # then open the printed URL (it carries a session token)",
    )
    parser.add_argument("--db", default="results/mantra.duckdb", help="the rollout store (default: %(default)s)")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to serve on (default: %(default)s; any other warns: the token travels in plain HTTP)",
    )
    parser.add_argument("--port", type=port_number, default=8000, help="port to serve on (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        RolloutStore(args.db, read_only=True).close()  # fail now, clearly, on a missing or foreign file
    except MantraError as error:
        print(f"mantra view: {error}", file=sys.stderr)
        return 2
    import uvicorn

    token = secrets.token_urlsafe(24)
    warning = exposure_warning(args.host, "mantra view")
    if warning:
        print(warning, file=sys.stderr, flush=True)
    print(f"viewer of {args.db}: http://{args.host}:{args.port}/?token={token}", flush=True)
    uvicorn.run(create_app(args.db, token), host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
