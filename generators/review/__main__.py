"""``mantra review RUN_DIR | DOMAIN``: serve the review app on localhost, behind a token printed once."""

from __future__ import annotations

import getpass
import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from mantra_env.cli import command_parser
from mantra_env.errors import MantraError
from mantra_env.webapp import exposure_warning, port_number

if TYPE_CHECKING:
    from mantra_env.generators.review.run import ReviewRun


def open_run(target: str, config: Path | None, keep: Path | None, samples: int | None) -> ReviewRun:
    """The run ``target`` names: a run directory, or a domain's recording run in ``keep/run`` (replayed up to
    its validation first when it is not there yet)."""
    from mantra_env.domains import domain_names
    from mantra_env.generators.review.run import ReviewRun, ReviewRunError

    domains = domain_names()
    if Path(target).is_dir() and (keep is None or target not in domains):
        if keep is not None or samples is not None:
            raise ReviewRunError("--keep and --samples are for a domain's recording run, not a run directory")
        return ReviewRun(Path(target), config)
    if target not in domains:
        raise ReviewRunError(
            f"{target} is neither a run directory nor a domain (domains: {', '.join(domains)}): give the folder "
            "mantra_env.generators.run printed, or a domain name"
        )
    if config is not None:
        raise ReviewRunError("--config is for a run directory: a domain's recording run uses its generation.yaml")
    from mantra_env.generators.regenerate import replay_for_review

    work = keep or Path("runs") / f"{target}-recording"
    if not (work / "run" / "validation").is_dir():
        print(f"replaying the recording of {target} up to its validation in {work / 'run'} ...", flush=True)
    return ReviewRun(work / "run", given_config=replay_for_review(target, work, samples))


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(
        "mantra_env.generators.review",
        "Review a generation run's cases in a web browser: read, edit with typed edits, re-run the solver, "
        "accept or reject. Give a run directory, or a domain to review the run its shipped recording replays "
        "(kept in --keep DIR/run, replayed up to its validation the first time). Then "
        "`python -m mantra_env.generators.run --resume RUN_DIR --from-stage export` exports the accepted cases.",
        "runs/retail-20261124T162344",
        "runs/retail-20261124T162344 --port 8081 --reviewer alice",
        "retail --keep runs/retail-replay --samples 2",
    )
    parser.add_argument(
        "target",
        metavar="RUN_DIR|DOMAIN",
        help="a run directory (the one mantra_env.generators.run printed) or a domain name",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to serve on (default: %(default)s; any other warns: the token travels in plain HTTP)",
    )
    parser.add_argument("--port", type=port_number, default=8080, help="port to serve on (default: %(default)s)")
    parser.add_argument("--reviewer", default=None, help="the name every change is signed with (default: your login)")
    parser.add_argument("--config", type=Path, default=None, help="a run's config (default: the one it started with)")
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        default=None,
        help="a domain's recording run is DIR/run, as `mantra_env.generators.regenerate DOMAIN --keep DIR` leaves it "
        "(default: runs/DOMAIN-recording)",
    )
    parser.add_argument("--samples", type=int, default=None, help="replay only the first N samples of a domain")
    args = parser.parse_args(argv)
    try:
        run = open_run(args.target, args.config, args.keep, args.samples)
        run.tools  # noqa: B018 - load the config and tools now, so a broken run fails here, clearly
    except MantraError as error:
        print(f"mantra review: {error}", file=sys.stderr)
        return 2
    token = secrets.token_urlsafe(24)
    reviewer = args.reviewer or getpass.getuser()
    warning = exposure_warning(args.host, "mantra review")
    if warning:
        print(warning, file=sys.stderr, flush=True)
    print(f"review of {run.root} as {reviewer}: http://{args.host}:{args.port}/?token={token}", flush=True)
    import uvicorn

    from mantra_env.generators.review.app import create_app

    uvicorn.run(create_app(run, token, reviewer), host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
