"""``python -m mantra_env.run``: run an agent on a suite and store every episode in DuckDB.

Examples::

    python -m mantra_env.run                                  # the bundled local model on the operations suite
    python -m mantra_env.run --model qwen --suite operations   # an alias from agents/models.yaml
    python -m mantra_env.run --model openai/gpt-4o-mini --attempts 5 --concurrency 8
    python -m mantra_env.run --model scripted:oracle           # also noop random write-first decline read-all
    python -m mantra_env.run --run-name nightly --resume       # continue a killed run; finished episodes are kept
    python -m mantra_env.run --model qwen --resume --retry-errors  # the latest qwen run; rerun its error episodes

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
import re
import shlex
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graders import grade
from mantra_env.checks import parse_check
from mantra_env.cli import command_parser, run_command
from mantra_env.errors import MantraError
from mantra_env.progress import Progress
from mantra_env.trace import Trace

if TYPE_CHECKING:
    from graders.analysis import RunSummary
    from mantra_env.case import Suite
    from mantra_env.domains import Domain
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
        help="DOMAIN (its default suite), DOMAIN/SUITE or a suite folder; `mantra suites` lists them",
    )
    cli.add_argument(
        "--model",
        default=os.environ.get("MANTRA_MODEL") or None,
        help="model alias (agents/models.yaml), litellm model string, or "
        "scripted:<oracle|noop|random|write-first|decline|read-all> (default: the models file's default, the bundled "
        "local model)",
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
        help="run id: letters, digits and . _ : + @ - (default: suite-model-timestamp); reuse it with --resume",
    )
    cli.add_argument(
        "--resume",
        action="store_true",
        help="continue the run named by --run-name (without it: the latest run of the suite and model); refused "
        "if the suite's content, the model, --attempts, --seed, --max-steps, --max-cycles, --timeout or the grader "
        "version changed",
    )
    cli.add_argument(
        "--retry-errors",
        action="store_true",
        help="with --resume: run again the attempts stored as infrastructure errors (each replaces its error)",
    )
    cli.add_argument(
        "--baselines",
        action="store_true",
        help="also run the reference agents (scripted:oracle, noop, decline, read-all) on the same cases and attempts "
        "and print the model's scores beside theirs (their runs: RUN-oracle, RUN-noop, RUN-decline, RUN-read-all)",
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
    from agents.base import InfrastructureError
    from mantra_env.env import MantraEnv

    agent = make_agent()
    agent.max_cycles = 1
    started = time.perf_counter()
    with contextlib.suppress(InfrastructureError):
        asyncio.run(agent.run(MantraEnv(suite, domain), suite.cases[0].id, 0))
    print(f"warmed up the local model's prompt cache in {time.perf_counter() - started:.0f} s", file=sys.stderr)


def _agent_factory(model: str | None, args: argparse.Namespace, stack: list[Any]) -> tuple[str, Callable[[], Any]]:
    from agents.base import ScriptedAgent
    from agents.scripted import SCRIPTED

    if model and model.startswith("scripted:"):
        name = model.removeprefix("scripted:")
        if name not in SCRIPTED:
            raise MantraError(f"unknown scripted agent {name!r}; use one of {', '.join(sorted(SCRIPTED))}")
        return model, lambda: ScriptedAgent(SCRIPTED[name]())
    from agents.models import resolve_model
    from agents.strands_agent import StrandsAgent

    config = resolve_model(model)
    if config.local_server:  # before any other line: without the extra, the error is the only one
        from agents.local_server import require_local_extra

        require_local_extra()
    if config.max_concurrency is not None and args.concurrency > config.max_concurrency:
        print(f"{config.alias}: at most {config.max_concurrency} episodes in flight (models file)", file=sys.stderr)
        args.concurrency = config.max_concurrency
    api_base = config.api_base
    if config.local_server:
        from agents.local_server import start_server

        print("starting the bundled local model server (SmolLM2-135M, one thread)...", file=sys.stderr)
        server = start_server(log_dir=None if args.db == ":memory:" else Path(args.db).parent)  # log beside --db
        stack.append(server)
        api_base = server.api_base
    return config.alias, lambda: StrandsAgent(config, max_cycles=args.max_cycles, api_base=api_base)


def _estimate(estimate: Any) -> str:
    if math.isnan(estimate.value):
        return "n/a (no scored episodes)"
    if math.isnan(estimate.low):
        return f"{estimate.value:6.1%}"
    return f"{estimate.value:6.1%}  (95% CI {estimate.low:.1%} to {estimate.high:.1%})"


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
        retry_errors=args.retry_errors,
    )


def _store_run(
    store: RolloutStore,
    args: argparse.Namespace,
    suite: Suite,
    domain: Domain,
    model_name: str,
    make_agent: Callable[[], Any],
    settings: RunSettings,
    run_id: str,
) -> RunProgress:
    """Run (or, with ``--resume``, continue) ``run_id`` into ``store``, with progress on stderr."""
    from mantra_env.resume import suite_hash, suite_label
    from mantra_env.runner import RunProgress, run_suite
    from mantra_env.store.records import RunRecord

    stored = store.run_record(run_id)
    if stored is not None and not args.resume:
        raise MantraError(f"run {run_id!r} exists in {args.db}; add --resume to continue it or pick another --run-name")
    if stored is not None and stored.suite_hash is None:
        print(
            f"note: run {run_id} was stored before runs recorded their suite's hash and settings; resuming "
            "it cannot check that they are unchanged",
            file=sys.stderr,
        )
    label = suite_label(args.suite, suite, domain)  # an edited copy of a named suite is stored under its path
    record = RunRecord(
        run_id=run_id,
        name=args.run_name or "",
        suite=label,
        suite_version=suite.manifest.version,
        model=model_name,
        agent=make_agent().name,
        config={k: v for k, v in vars(args).items() if isinstance(v, str | int | float | bool | list)},
        suite_hash=suite_hash(suite, domain),
        settings={
            "attempts": args.attempts,
            "seed": args.seed,
            "max_steps": args.max_steps,
            "max_cycles": args.max_cycles,
            "timeout": args.timeout,
        },
    )
    progress = RunProgress()
    started = time.perf_counter()
    shown: list[Progress] = []

    def tick(_: Any) -> None:
        if not shown:  # the count of episodes to run is known once the run has started
            shown.append(Progress(f"{model_name} episodes", progress.total - progress.skipped, started=started))
        shown[0].update(progress.done, f"passed {progress.passed} errors {progress.errors}")

    asyncio.run(run_suite(store, record, suite, domain, make_agent, settings, progress, on_episode=tick))
    for bar in shown:
        bar.close()
    return progress


BASELINES = ("oracle", "noop", "decline", "read-all")
"""The reference agents ``--baselines`` runs beside the model: the SMT-proven plans (the ceiling: 100 %), doing
nothing, the oracle's reads then a refusal (its Pass@1 is the refusal share, the best a policy that never writes
scores) and reading what the request names (a naive floor), so that a model's score reads against each."""


def run(args: argparse.Namespace) -> int:
    from graders.analysis import summarize_run
    from mantra_env.domains import DomainError, find_suite
    from mantra_env.resume import latest_run, suite_label
    from mantra_env.runner import plan
    from mantra_env.store import RolloutStore

    settings = _settings(args)  # every check that needs no suite, then those that do: nothing is written before
    _quiet_libraries()
    domain, suite = find_suite(args.suite)
    if domain is None:
        raise DomainError(
            f"suite {args.suite!r} names domain {suite.manifest.domain!r}, which mantra-env does not ship"
        )
    plan(suite, domain, settings)
    stack: list[Any] = []
    try:
        model_name, make_agent = _agent_factory(args.model, args, stack)
        settings = dataclasses.replace(settings, concurrency=args.concurrency)  # the model's cap may lower it
        if stack:  # a bundled local server was started
            _warm_up(make_agent, suite, domain)
        else:  # fail fast, once: a wrong key, model or endpoint is one line before anything is written
            from agents.preflight import preflight

            preflight(make_agent(), suite, domain)
        stored_as = suite_label(args.suite, suite, domain)
        with RolloutStore(args.db) as store:
            run_id = args.run_name
            if args.resume and not run_id:
                run_id, older = latest_run(store, stored_as, model_name)
                more = f" ({len(older)} older: {', '.join(older[:3])}; name one with --run-name)" if older else ""
                print(f"resuming {run_id}, the latest run of {stored_as} with {model_name}{more}", file=sys.stderr)
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
            run_id = run_id or f"{suite.manifest.name}-{re.sub(r'[^A-Za-z0-9._+@-]', '_', model_name)}-{stamp}"
            progress = _store_run(store, args, suite, domain, model_name, make_agent, settings, run_id)
            summary = summarize_run(store, run_id, k=args.attempts)
            beside = []
            if args.baselines and not progress.stopped:
                for name in BASELINES:
                    if f"scripted:{name}" == model_name:
                        continue
                    baseline_id = f"{run_id}-{name}"
                    baseline, make_baseline = _agent_factory(f"scripted:{name}", args, stack)
                    _store_run(store, args, suite, domain, baseline, make_baseline, settings, baseline_id)
                    beside.append(summarize_run(store, baseline_id, k=args.attempts))
        print(f"\nrun {run_id}: {summary.model} on {summary.suite}, {summary.tasks} cases x {args.attempts} attempts")
        if progress.skipped:
            print(f"resumed: {progress.skipped} episodes were already stored and were skipped")
        rows = [("Pass@1", _estimate(summary.pass_at_1))]
        if summary.k > 1:
            rows += [
                (f"Pass@{summary.k}", _estimate(summary.pass_at_k)),
                (f"Pass^{summary.k}", _estimate(summary.pass_hat_k)),
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
        if args.db == ":memory:":
            print("\nrollouts: kept in memory only (--db :memory:) and gone now; pass --db FILE to keep them")
        else:
            report = shlex.join(["python", "-m", "graders.report", "--db", args.db, "--run", run_id])
            print(f"\nrollouts: {args.db} (report: {report})")
        if progress.stopped:
            print(f"error: {progress.stopped}", file=sys.stderr)
            return 1
        if summary.attempts and summary.errors == summary.attempts:
            print("error: every episode ended in an infrastructure error; nothing was scored", file=sys.stderr)
            return 1
        return 0
    finally:
        for item in stack:
            item.stop()


def _refusal_share(suite: Suite, domain: Domain, case_ids: Iterable[str]) -> str:
    """The refusal share of the cases run (what scripted:decline scores on them), see :mod:`graders.refusals`."""
    from graders.refusals import refusal_share

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
        f"  {'agent':<{width}}  {'Pass@1':>7}  {'premature writes':>16}  errors",
    ]
    for summary in summaries:
        value = summary.pass_at_1.value
        pass_at_1 = "n/a" if math.isnan(value) else f"{value:.1%}"
        rate = summary.premature_write_rate
        premature = "n/a" if math.isnan(rate) else f"{rate:.1%}"
        lines.append(
            f"  {summary.model:<{width}}  {pass_at_1:>7}  {premature:>16}  {summary.errors}/{summary.attempts}"
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
