"""``python -m mantra_env.generators.run --config CONFIG.yaml [--resume RUN_DIR] [--from-stage S] [--stop-after S]
[--wait]``

Runs the MANTRA generation pipeline: manual + tools → validated suite. A new run gets a directory under the
config's ``run_dir_base``; ``--resume RUN_DIR`` continues one (finished stages and samples are skipped, repeated
LLM requests are cache hits), ``--from-stage`` recomputes a stage and everything after it (answers stay: the LLM
cache and every exchange folder, also one named like a stage, such as ``exchange/checks``), ``--stop-after`` ends
after a stage. At the end it prints the funnel and the path of the exported suite, which
``python -m mantra_env.run --suite PATH`` runs agents on.

With ``exchange/<dir>`` models (:mod:`mantra_env.generators.exchange`), a run whose requests wait for answers stops with
exit code 3 and says where they are (``--resume`` continues it), or with ``--wait`` polls for the answers.

A run holds its directory for as long as it runs: a second ``mantra_env.generators.run`` on it is refused in one line.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from mantra_env.cli import command_parser, run_command
from mantra_env.errors import MantraError
from mantra_env.files import write_atomic
from mantra_env.generators.config import GenerationConfig, load_config
from mantra_env.generators.llm import usage_totals
from mantra_env.generators.rundir import STAGE_ORDER, RunDir, recorded_config, run_lock
from mantra_env.offload import Offload, in_thread
from mantra_env.progress import Progress

PENDING_EXIT = 3
"""Exit code of a run that stopped with exchange requests waiting for answers."""


def _logging(config: GenerationConfig, run_dir: Path) -> None:
    root = logging.getLogger("mantra")
    root.setLevel(config.logging.level)
    root.handlers.clear()
    handler = logging.FileHandler(run_dir / config.logging.filename, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    if config.logging.console:
        root.addHandler(logging.StreamHandler(sys.stderr))
    for noisy in ("LiteLLM", "litellm", "httpx"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


class _StageProgress:
    """The progress of the stage in flight on stderr (:class:`~mantra_env.progress.Progress`), and a line when a
    stage is done."""

    def __init__(self) -> None:
        self.shown: dict[str, Progress] = {}

    def update(self, stage: str, done: int, total: int) -> None:
        if stage not in self.shown:
            self.close()
            self.shown[stage] = Progress(f"stage {stage}", total)
        # A waiting run's later passes bring more samples into a stage (those whose answers arrived since): the
        # total is the samples in the stage so far, not those of its first pass.
        self.shown[stage].total = total
        self.shown[stage].update(done)

    def stage_done(self, stage: str) -> None:
        self.close()
        print(f"  stage {stage} done", file=sys.stderr)

    def close(self) -> None:
        for shown in self.shown.values():
            shown.close()


INTERRUPTED = "interrupted: finished artifacts are kept; continue with --resume"


def parser(module: str = "mantra_env.generators.run") -> argparse.ArgumentParser:
    """The command's options, for ``python -m module`` (``mantra generate`` adds ``--ray``:
    :mod:`mantra_env.mantra_cli.generate`)."""
    parser = command_parser(
        module,
        __doc__.split("\n\n")[1],
        "--config mantra_env/domains/operations/generation.yaml   # a new run under runs/",
        "--resume runs/operations-20261123T101500                  # continue it",
        "--resume RUN_DIR --from-stage validation                  # recompute from a stage on",
    )
    parser.add_argument("--config", type=Path, help="the YAML config (default with --resume: the one it started with)")
    parser.add_argument(
        "--resume",
        type=Path,
        metavar="RUN_DIR",
        help="continue this run directory (refused while another run holds it)",
    )
    parser.add_argument("--from-stage", choices=STAGE_ORDER, help="recompute this stage and every later one")
    parser.add_argument("--stop-after", choices=STAGE_ORDER, help="stop once this stage is done")
    parser.add_argument(
        "--wait", action="store_true", help="with exchange models: wait for pending answers instead of stopping"
    )
    parser.add_argument("--poll", type=float, default=1.0, metavar="SECONDS", help="--wait checks this often (1)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return run_command(lambda: run(args), INTERRUPTED)


def _record_config(run_dir: Path, config_path: Path) -> Path | None:
    """Keep a copy of the config in ``run_dir/config.yaml`` and its path in ``run.json`` (resuming without
    --config reads that path: relative paths in it are the original's). A resumed run whose config differs from
    the copy (another --config, or the file edited since) records the new one and keeps the former copy as
    ``config.N.yaml``, returned: what the run's later stages ran with must be on record (shipping a run compares
    its config with the domain's)."""
    copy, text = run_dir / "config.yaml", config_path.read_bytes()
    former: Path | None = None
    if copy.exists():
        recorded = copy.read_bytes()
        if recorded == text:
            return None
        former = next(path for n in itertools.count(1) if not (path := run_dir / f"config.{n}.yaml").exists())
        write_atomic(former, recorded)
    write_atomic(copy, text)
    RunDir(run_dir).write_json("run.json", {"config_path": str(config_path.resolve())})
    return former


def run(args: argparse.Namespace, offload: Offload = in_thread) -> int:
    """The command with parsed ``args``; the validation stage's solver queries run through ``offload``."""
    from mantra_env.generators.pipeline import run_pipeline

    if args.resume is not None and not args.resume.is_dir():
        raise MantraError(f"--resume {args.resume}: no such run directory")
    config_path = args.config or (recorded_config(args.resume) if args.resume else None)
    if config_path is None:
        raise MantraError("give --config CONFIG.yaml (or --resume RUN_DIR to continue a run with its own config)")
    config = load_config(config_path)
    if args.resume is not None:
        run_dir = args.resume
    else:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        run_dir = config.run_dir_base / f"{config.domain}-{stamp}"
    run_dir.mkdir(parents=True, exist_ok=True)
    with run_lock(run_dir):  # a second run on this directory (a --resume started twice) is refused
        former = _record_config(run_dir, config_path)
        _logging(config, run_dir)
        if former is not None:
            message = (
                f"{config_path} differs from the config this run last ran with (kept as {former}): "
                f"{run_dir / 'config.yaml'} and run.json now record it; the stages run from here on follow it"
            )
            logging.getLogger("mantra.generators").warning(message)  # into the session log
            if not config.logging.console:  # (which prints it here too)
                print(message, file=sys.stderr)
        print(f"run directory: {run_dir} (log: {run_dir / config.logging.filename})", file=sys.stderr)
        progress = _StageProgress()
        result = run_pipeline(
            config,
            run_dir,
            from_stage=args.from_stage,
            stop_after=args.stop_after,
            on_stage=progress.stage_done,
            wait=args.wait,
            poll_s=args.poll,
            on_progress=progress.update,
            offload=offload,
        )
        progress.close()
    total = usage_totals(result.usage)
    print(
        f"LLM: {total.requests} requests, {total.cache_hits} cache hits, {total.input_tokens} input and "
        f"{total.output_tokens} output tokens, ${total.cost_usd:.4f}, {total.repairs} repair round(s)"
    )
    if result.pending:
        print(
            f"{len(result.pending)} requests pending in {', '.join(map(str, result.waiting_in))}; answer them and run "
            f"`python -m mantra_env.generators.run --resume {run_dir}` (or add --wait)"
        )
        return PENDING_EXIT
    if result.suite is None:
        print(
            f"stopped after {result.stages_run[-1] if result.stages_run else 'nothing'}; resume with --resume {run_dir}"
        )
        return 0
    counts = result.suite.manifest.stage_counts
    print("funnel: " + ", ".join(f"{key} {value}" for key, value in counts.items()))
    if result.suite.manifest.screening:
        screened = result.suite.manifest.screening
        print("screened out: " + ", ".join(f"{reason} {count}" for reason, count in screened.items()))
    print(f"suite: {result.suite_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
