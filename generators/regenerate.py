"""``python -m mantra_env.generators.regenerate DOMAIN | --all [--write] [--samples N] [--keep RUN_DIR]``

Rebuilds a domain's generated suite from its recording: the domain's ``generation.yaml`` runs in a fresh run
directory with every stage answered by ``replay/recorded`` from ``generation.recorded.jsonl`` (the answers the
exchange run recorded, rejected ones included), and the exported suite is compared byte for byte with the one the
domain ships in ``suites/<export.suite_name>/``. Exit 0 when they are identical, 1 with the first difference
otherwise. ``--write`` puts the regenerated suite in place instead (how a finished run's suite is shipped: the
shipped bytes are then by construction what the recording regenerates).

A reviewer's decisions are part of the record: the review files of the run (``RUN_DIR/review/<sample>.json``,
written by ``mantra review``) ship in the domain's ``generation.reviews/`` and are put back where the reviewer
made them, after the replayed validation and before the export. ``--ship RUN_DIR`` copies a finished run's
recording and reviews into the domain folder and writes the suite they regenerate. ``--ship RUN_DIR --samples N``
ships the run's own export instead, once a replay of its first N samples writes the same cases (a full replay of
a large domain takes an hour; the run's export is what that replay writes, and ``make test`` checks the same
first samples); nothing in the domain folder changes unless the check passes.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mantra_env.cli import command_parser, run_command
from mantra_env.domains import domain_names, load_domain
from mantra_env.errors import MantraError
from mantra_env.files import write_atomic
from mantra_env.generators.config import GenerationConfig, load_config
from mantra_env.generators.pipeline import run_pipeline
from mantra_env.generators.replay import PROVIDER
from mantra_env.generators.review.state import REVIEW_DIR, SampleReview, review_path
from mantra_env.generators.rundir import recorded_config, write_text
from mantra_env.userfiles import load_yaml, read_text

SUITE_FILES = ("suite.jsonl", "manifest.json")
SAMPLE_IN_ID = re.compile(r"-(s\d{3})-\d+$")
"""A case id ends with its sample and scenario number: ``generated-s004-2``."""
RECORDING = "generation.recorded.jsonl"
REVIEWS = "generation.reviews"
"""The domain folder's copy of the run's review files (one per reviewed sample)."""
REPLAY_MODEL = "replay/recorded"


class RegenerateError(MantraError, ValueError):
    """A domain cannot be regenerated (no config, no recording, or the replay stopped short)."""


@dataclass(frozen=True)
class Regenerated:
    shipped: Path
    """The domain's suite folder."""
    rebuilt: Path
    """The folder the replay exported."""
    differences: list[str]
    """One line per file that differs (empty: byte-identical)."""


def replay_config(domain_folder: Path, runs: Path, samples: int | None = None) -> GenerationConfig:
    """The domain's generation config with every stage answered from its recording, runs under ``runs``
    (``samples``: only the first so many samples)."""
    config_path, recording = domain_folder / "generation.yaml", domain_folder / RECORDING
    for needed in (config_path, recording):
        if not needed.is_file():
            raise RegenerateError(f"{needed} does not exist: a generated suite ships with its config and recording")
    env = {"MANTRA_GENERATOR_MODEL": REPLAY_MODEL, "MANTRA_JUDGE_MODEL": REPLAY_MODEL, "MANTRA_RUNS": str(runs)}
    config = load_config(config_path, env)
    llm = config.llm.model_copy(
        update={"replay": config.llm.replay.model_copy(update={"path": recording.resolve(), "record_to": None})}
    )
    config = config.model_copy(update={"llm": llm, "run_dir_base": runs})
    if samples is None:
        return config
    if samples < 1:
        raise RegenerateError(f"--samples must be 1 or more, got {samples}")
    sampling = config.sampling.model_copy(update={"max_samples": min(samples, config.sampling.max_samples)})
    return config.model_copy(update={"sampling": sampling})


def replay_for_review(domain: str, work: Path, samples: int | None = None) -> GenerationConfig:
    """The config of ``domain``'s recording run in ``work/run`` (what ``--keep work`` leaves there), replayed up
    to its validation first when that is not done yet, with the shipped reviews put back (never over a review
    file the run has already)."""
    folder = shipping_folder(domain)
    config = replay_config(folder, work, samples)
    run_dir = work / "run"
    if not (run_dir / "validation").is_dir():
        run_pipeline(config, run_dir, stop_after="validation")
        if PROVIDER.missed:
            raise _missing(folder)
        reviews = [r for r in shipped_reviews(folder) if not review_path(run_dir, r.sample_id).exists()]
        _write_reviews(reviews, run_dir / REVIEW_DIR)
    return config


def regenerate(domain: str, work: Path, samples: int | None = None) -> Regenerated:
    """Replay ``domain``'s recording in ``work`` and compare the export with the shipped suite."""
    folder = load_domain(domain).folder
    if folder is None:
        raise RegenerateError(f"domain {domain!r} has no folder to regenerate from")
    return regenerate_folder(folder, work, samples)


def regenerate_folder(folder: Path, work: Path, samples: int | None = None) -> Regenerated:
    """Replay the recording of the domain folder ``folder`` in ``work`` and compare with its shipped suite.

    ``samples``: replay only the first ``samples`` samples (samples are drawn one after another, so they are the
    full run's first ones) and compare their cases with the shipped suite's cases of those samples.
    """
    config = replay_config(folder, work, samples)
    reviews = shipped_reviews(folder)
    try:
        if reviews:  # the reviewer worked on the validated run: replay it, put the reviews back, then export
            run_pipeline(config, work / "run", stop_after="validation")
            # never over a review the kept run holds already: a reviewer may have worked there (mantra review DOMAIN)
            kept = [r for r in reviews if not review_path(work / "run", r.sample_id).exists()]
            _write_reviews(kept, work / "run" / REVIEW_DIR)
        result = run_pipeline(config, work / "run")
    except MantraError:
        if PROVIDER.missed:  # the missing answers are the cause (e.g. no case left to export)
            raise _missing(folder) from None
        raise
    if PROVIDER.missed:
        raise _missing(folder)
    if result.suite_dir is None:
        raise RegenerateError(
            f"the replay of {folder / RECORDING} stopped before the export ({len(result.pending)} requests without "
            "a recorded answer): record the run again from its exchange folder"
        )
    shipped = folder / "suites" / config.export.suite_name
    if samples is None:
        return Regenerated(shipped, result.suite_dir, _differences(shipped, result.suite_dir))
    return Regenerated(shipped, result.suite_dir, _sample_differences(shipped, result.suite_dir, samples))


def shipped_reviews(folder: Path) -> list[SampleReview]:
    """The review files the domain ships in ``generation.reviews/`` (none: the run had no human review)."""
    return _reviews_in(folder / REVIEWS)


def _reviews_in(folder: Path) -> list[SampleReview]:
    """The review files in ``folder`` (``<sample>.json`` each, as ``mantra review`` writes them)."""
    found = []
    for path in sorted(folder.glob("*.json")):
        try:
            review = SampleReview.model_validate_json(path.read_text(encoding="utf-8"))
        except ValueError as error:
            raise RegenerateError(f"{path}: not a review file written by `mantra review` ({error})") from None
        if path.stem != review.sample_id:
            raise RegenerateError(f"{path} holds the review of {review.sample_id}: name it {review.sample_id}.json")
        found.append(review)
    return found


def _write_reviews(reviews: Sequence[SampleReview], folder: Path) -> None:
    for review in reviews:  # the bytes save_review writes
        write_text(folder / f"{review.sample_id}.json", review.model_dump_json(indent=2) + "\n")


def ship_run(domain: str, run_dir: Path) -> Path:
    """Copy the recording and review files of the finished run ``run_dir`` into ``domain``'s folder; the
    domain folder then holds what a regeneration of the run needs."""
    folder = shipping_folder(domain)
    recording = run_dir / "recorded.jsonl"
    if not recording.is_file():
        raise RegenerateError(f"{recording} does not exist: give the folder of a run answered through exchange/")
    ran = load_config(recorded_config(run_dir)).domain
    if ran != domain:
        raise RegenerateError(f"{run_dir} is a run of the {ran} domain, not {domain}")
    _place_record(run_dir, _reviews_in(run_dir / REVIEW_DIR), folder)  # reviews all read before anything is replaced
    return folder


def shipping_folder(domain: str) -> Path:
    """The folder a run of ``domain`` ships into."""
    folder = load_domain(domain).folder
    if folder is None:
        raise RegenerateError(f"domain {domain!r} has no folder to ship into")
    return folder


def ship_run_export(folder: Path, run_dir: Path, samples: int) -> Path:
    """Ship the finished run's own export with its recording and reviews into the domain folder ``folder``, after
    checking in a scratch copy of it that a replay of the first ``samples`` samples writes the same cases.
    Returns the suite folder."""
    exported = run_dir / "export" / "suite"
    missing = [p for p in (run_dir / "recorded.jsonl", *(exported / n for n in SUITE_FILES)) if not p.is_file()]
    if missing:
        raise RegenerateError(
            f"{missing[0]} does not exist: give the folder of a run answered through exchange/ that reached its export"
        )
    ran, current = load_config(recorded_config(run_dir)), replay_config(folder, run_dir.parent)
    if ran.domain != current.domain:
        raise RegenerateError(f"{run_dir} is a run of the {ran.domain} domain, not {current.domain}")
    # the copy of the config the run last ran with (run.json names the domain's file, which may have changed since)
    started = _sections(run_dir / "config.yaml")
    now = _sections(folder / "generation.yaml")
    changed = [key for key in SHIPPED_SETTINGS if started and started.get(key) != now.get(key)]
    try:
        manifest = json.loads(read_text(exported / "manifest.json", "a suite manifest", RegenerateError))
    except ValueError as error:
        raise RegenerateError(f"{exported / 'manifest.json'} is not JSON ({error}): export the run again") from None
    wanted = current.export
    if (manifest.get("name"), manifest.get("version")) != (wanted.suite_name, wanted.version):
        changed.append("export")
    if changed:
        raise RegenerateError(
            f"{run_dir} ran with other {', '.join(sorted(set(changed)))} settings than {folder / 'generation.yaml'} "
            "has now, so its export is not what that config regenerates: make them agree, or ship without --samples "
            "to replay the recording under the current config"
        )
    reviews = _reviews_in(run_dir / REVIEW_DIR)
    with tempfile.TemporaryDirectory(prefix="mantra-ship-") as scratch:
        trial = Path(scratch) / folder.name
        shutil.copytree(folder, trial, ignore=shutil.ignore_patterns("suites", REVIEWS, RECORDING, "__pycache__"))
        _place(run_dir, reviews, trial, current.export.suite_name)
        found = regenerate_folder(trial, Path(scratch) / "work", samples)
        if found.differences:
            raise RegenerateError(
                f"the replay of the first {samples} samples of {run_dir / 'recorded.jsonl'} differs from the run's "
                f"export: {'; '.join(found.differences)}; nothing was shipped"
            )
    _place(run_dir, reviews, folder, current.export.suite_name)
    return folder / "suites" / current.export.suite_name


SHIPPED_SETTINGS = (
    "domain", "document_path", "tools", "env_bindings", "chunking", "sampling", "validation", "checks", "references",
    "scenarios", "export",
)  # fmt: skip
"""The config sections a run's cases depend on (the models and run folders do not change them; the gated
``checks``, ``references`` and ``scenarios`` keys do)."""


def _sections(path: Path) -> dict[str, object]:
    """The top-level sections of a config file as written (empty if there is none)."""
    if not path.is_file():
        return {}
    loaded = load_yaml(read_text(path, "a generation config", RegenerateError), str(path), RegenerateError)
    return loaded if isinstance(loaded, dict) else {}


def _place_record(run_dir: Path, reviews: Sequence[SampleReview], folder: Path) -> None:
    """Put the run's recording and its (already read) reviews into the domain folder ``folder``."""
    write_atomic(folder / RECORDING, (run_dir / "recorded.jsonl").read_bytes())
    shutil.rmtree(folder / REVIEWS, ignore_errors=True)
    _write_reviews(reviews, folder / REVIEWS)


def _place(run_dir: Path, reviews: Sequence[SampleReview], folder: Path, suite_name: str) -> None:
    """Put the run's recording, reviews and exported suite into the domain folder ``folder``."""
    _place_record(run_dir, reviews, folder)
    shipped = folder / "suites" / suite_name
    shipped.mkdir(parents=True, exist_ok=True)
    for name in SUITE_FILES:
        write_atomic(shipped / name, (run_dir / "export" / "suite" / name).read_bytes())


def _missing(folder: Path) -> RegenerateError:
    keys = sorted(set(PROVIDER.missed))
    return RegenerateError(
        f"{folder / RECORDING} has no answer for {len(keys)} request(s) the replay asked "
        f"({', '.join(keys[:3])}{', ...' if len(keys) > 3 else ''}): it is not the run's whole record; "
        "restore it into an exchange run (`mantra exchange restore`), answer what is missing "
        "and record the finished run again"
    )


def _differences(shipped: Path, rebuilt: Path) -> list[str]:
    found = []
    for name in SUITE_FILES:
        old, new = shipped / name, rebuilt / name
        if not old.is_file():
            found.append(f"{old}: not shipped")
        elif old.read_bytes() != new.read_bytes():
            found.append(f"{old}: {_first_difference(old.read_text().splitlines(), new.read_text().splitlines())}")
    return found


def _sample_differences(shipped: Path, rebuilt: Path, samples: int) -> list[str]:
    """The shipped cases of the first ``samples`` samples against the rebuilt suite's cases (all of theirs)."""
    old = shipped / "suite.jsonl"
    if not old.is_file():
        return [f"{old}: not shipped"]
    wanted = {f"s{index:03d}" for index in range(samples)}
    kept = [line for line in old.read_text(encoding="utf-8").splitlines() if _sample_of(line) in wanted]
    new = (rebuilt / "suite.jsonl").read_text(encoding="utf-8").splitlines()
    if kept == new:
        return []
    return [f"{old} (cases of the first {samples} samples): {_first_difference(kept, new)}"]


def _sample_of(line: str) -> str | None:
    found = SAMPLE_IN_ID.search(str(json.loads(line).get("id", "")))
    return found.group(1) if found else None


def _first_difference(old_lines: list[str], new_lines: list[str]) -> str:
    for number, (before, after) in enumerate(zip(old_lines, new_lines, strict=False), start=1):
        if before != after:
            at = next((i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b), len(before))
            start = max(at - 40, 0)  # what differs, with a little of what comes before it
            return (
                f"line {number} differs ({_case_id(before)}) at character {at + 1}: "
                f"shipped {before[start : at + 80]!r}, rebuilt {after[start : at + 80]!r}"
            )
    return f"shipped has {len(old_lines)} lines, rebuilt {len(new_lines)}"


def _case_id(line: str) -> str:
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        return "not JSON"
    return f"case {value.get('id')}" if isinstance(value, dict) and "id" in value else "not a case"


def shipped_generated(domains: Sequence[str]) -> list[str]:
    """The domains among ``domains`` that ship a generated suite with the config and recording it came from."""
    found = []
    for domain in domains:
        folder = load_domain(domain).folder
        if folder is None or not (folder / "generation.yaml").is_file() or not (folder / RECORDING).is_file():
            continue
        config = replay_config(folder, Path("runs"))
        if (folder / "suites" / config.export.suite_name / "suite.jsonl").is_file():
            found.append(domain)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = command_parser(
        "mantra_env.generators.regenerate",
        __doc__.split("\n\n")[1],
        "retail                   # rebuild the whole suite and compare (minutes)",
        "retail --write           # ship the suite the recording regenerates",
        "--all --samples 2        # every shipped generated suite, first 2 samples (what make test checks)",
        "retail --ship runs/retail-20261126T150225  # ship a finished run: its recording, reviews and suite",
        "airline --ship runs/airline-20261126T222604 --samples 2  # ship the run's export, checked on 2 samples",
    )
    parser.add_argument("domain", nargs="?", help="a domain with generation.yaml and generation.recorded.jsonl")
    parser.add_argument(
        "--all", action="store_true", help="check every domain that ships a generated suite (what make test runs)"
    )
    parser.add_argument("--write", action="store_true", help="replace the shipped suite with the rebuilt one")
    parser.add_argument("--keep", type=Path, metavar="RUN_DIR", help="replay in this folder and keep it")
    parser.add_argument(
        "--ship",
        type=Path,
        metavar="RUN_DIR",
        help="copy a finished run's recorded.jsonl and review files into the domain, then write its suite "
        "(with --samples N: ship the run's own export once a replay of its first N samples agrees)",
    )
    parser.add_argument(
        "--samples", type=int, metavar="N", help="replay only the first N samples and compare their cases (quicker)"
    )
    args = parser.parse_args(argv)
    return run_command(lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    if args.all == (args.domain is not None):
        raise RegenerateError("name one domain or pass --all (every domain that ships a generated suite)")
    if args.all:
        return _check_all(args.samples)
    if args.write and args.samples is not None:
        raise RegenerateError("--write ships a whole suite: drop --samples")
    if args.ship is not None and args.samples is not None:
        shipped = ship_run_export(shipping_folder(args.domain), args.ship, args.samples)
        print(
            f"shipped the export of {args.ship} to {shipped} with its recording and reviews: a replay of its first "
            f"{args.samples} samples writes the same cases"
        )
        return 0
    if args.ship is not None:
        folder = ship_run(args.domain, args.ship)
        print(f"copied {args.ship / 'recorded.jsonl'} and its reviews into {folder}")
        args.write = True
    if args.keep is not None:
        return _report(args, regenerate(args.domain, args.keep, args.samples))
    with tempfile.TemporaryDirectory(prefix="mantra-regenerate-") as work:
        return _report(args, regenerate(args.domain, Path(work), args.samples))


def _check_all(samples: int | None) -> int:
    domains = shipped_generated(domain_names())
    if not domains:
        print("no domain ships a generated suite yet: nothing to regenerate")
        return 0
    failed = 0
    for domain in domains:
        with tempfile.TemporaryDirectory(prefix="mantra-regenerate-") as work:
            found = regenerate(domain, Path(work), samples)
        print("\n".join(found.differences) or _identical(found, samples))
        failed += bool(found.differences)
    return 1 if failed else 0


def _report(args: argparse.Namespace, found: Regenerated) -> int:
    if args.write:
        found.shipped.mkdir(parents=True, exist_ok=True)
        for name in SUITE_FILES:
            write_atomic(found.shipped / name, (found.rebuilt / name).read_bytes())
        print(f"wrote {found.shipped} from the replay of {RECORDING}")
        return 0
    if found.differences:
        print("\n".join(found.differences))
        print(f"the shipped suite is not what {RECORDING} regenerates; `--write` ships the rebuilt one")
        return 1
    print(_identical(found, args.samples))
    return 0


def _identical(found: Regenerated, samples: int | None) -> str:
    part = "" if samples is None else f" (the cases of its first {samples} samples)"
    return f"{found.shipped}{part}: byte-identical to the replay of {RECORDING}"


if __name__ == "__main__":
    raise SystemExit(main())
