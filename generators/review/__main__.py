"""``mantra review RUN_DIR``: serve the review app on localhost, behind a token printed once."""

from __future__ import annotations

import getpass
import secrets
import sys
from pathlib import Path

from mantra_env.cli import command_parser
from mantra_env.errors import MantraError
from mantra_env.webapp import exposure_warning, port_number


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(
        "generators.review",
        "Review a generation run's cases in a web browser: read, edit with typed edits, re-run the solver, "
        "accept or reject. Then `python -m generators.run --resume RUN_DIR --from-stage export` exports the "
        "accepted cases.",
        "runs/retail-20261124T162344",
        "runs/retail-20261124T162344 --port 8081 --reviewer alice",
    )
    parser.add_argument("run_dir", type=Path, help="the run directory (the one generators.run printed)")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to serve on (default: %(default)s; any other warns: the token travels in plain HTTP)",
    )
    parser.add_argument("--port", type=port_number, default=8080, help="port to serve on (default: %(default)s)")
    parser.add_argument("--reviewer", default=None, help="the name every change is signed with (default: your login)")
    parser.add_argument("--config", type=Path, default=None, help="the run's config (default: the one it started with)")
    args = parser.parse_args(argv)
    from generators.review.app import create_app
    from generators.review.run import ReviewRun

    try:
        run = ReviewRun(args.run_dir, args.config)
        run.tools  # noqa: B018 - load the config and tools now, so a broken run fails here, clearly
    except MantraError as error:
        print(f"mantra review: {error}", file=sys.stderr)
        return 2
    token = secrets.token_urlsafe(24)
    reviewer = args.reviewer or getpass.getuser()
    warning = exposure_warning(args.host, "mantra review")
    if warning:
        print(warning, file=sys.stderr, flush=True)
    print(f"review of {args.run_dir} as {reviewer}: http://{args.host}:{args.port}/?token={token}", flush=True)
    import uvicorn

    uvicorn.run(create_app(run, token, reviewer), host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
