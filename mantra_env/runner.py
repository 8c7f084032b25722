"""Run an agent on a suite: every (case, attempt) an episode, stored in DuckDB as it finishes.

Episodes run concurrently (asyncio; ``concurrency`` in flight, each in its own environment). Each finished
episode is committed atomically, keyed by (run, case, attempt), by a writer process while the next episodes
run (:mod:`mantra_env.store.writer`), so a killed run loses no finished episode, and ``resume`` skips exactly
the keys already stored.

Whatever goes wrong in an episode stays in that episode (the contract is :mod:`mantra_env.agent`): an
:class:`~mantra_env.agent.InfrastructureError` of a retryable kind (provider time-out, 429, 5xx, refused
connection, unusable output) or a per-episode time-out is retried with exponential backoff and jitter and, if it
persists, stored as an ``error`` episode, which no score counts; a wrong key or model is stored at once; any other
exception is stored as an ``error`` of kind ``internal`` with its type and message. Only cancellation stops a
run, and ``max_auth_errors`` consecutive authentication errors (a key revoked mid-run) stop it scheduling more.

Steps run in a worker thread per episode (:mod:`mantra_env.stepper`): a domain tool that raises (even
``SystemExit``) ends its episode as an ``internal`` error with the call in the trace and the traceback stored, and
one that blocks is stopped by the time-out; its thread is left behind, counted in ``RunProgress.threads_left``.

With an ``offload`` (:mod:`mantra_env.offload`; ``mantra run --ray``), each episode is played elsewhere (a Ray
worker: :func:`play_episode`) and only its record comes back; the store is written here, in the plan's order
(case, then attempt), whatever order the episodes finish in, so the stored rows are those of a local run with
``concurrency`` 1.
"""

from __future__ import annotations

import asyncio
import fnmatch
import gc
import math
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mantra_env.agent import AgentReport, EpisodeAgent, InfrastructureError
from mantra_env.case import Suite
from mantra_env.domains import Domain, load_domain
from mantra_env.env import MantraEnv
from mantra_env.errors import MantraError
from mantra_env.offload import Offload
from mantra_env.stepper import EpisodeStepper, ToolCrash
from mantra_env.store import RolloutStore
from mantra_env.store.records import EpisodeRecord, RunRecord, utc_now
from mantra_env.store.writer import EpisodeSink, episode_sink
from mantra_env.trace import Trace

MAX_EPISODES = 200_000
"""Most episodes one run may schedule: the runner creates a task per episode up front (a waiting task is ~1.5 kB,
measured with tracemalloc: ~300 MB at this bound), so a much larger run would take the machine's memory before its
first episode (a billion attempts did: D6). Split larger runs with ``--cases``."""


class RunnerError(MantraError, ValueError):
    """The run's settings do not fit the suite (e.g. a case filter that matches nothing)."""


RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+@-]{0,127}")
"""What a run name may be: it is a path segment of the viewer's links and an argument of the commands the runner
prints, so letters, digits and ``. _ : + @ -`` only (no ``/ # ? %``, space or control character), starting with a
letter or digit (never ``..`` or an option), at most 128 characters."""


def check_run_name(name: str) -> str:
    """``name`` if it is a valid run name (:data:`RUN_NAME`), else :class:`RunnerError` saying what is allowed."""
    if RUN_NAME.fullmatch(name) is None:
        raise RunnerError(
            f"--run-name {name!r} is not a run name: use letters, digits and . _ : + @ - (starting with a letter or "
            "digit, at most 128 characters), e.g. nightly-2026.11.29"
        )
    return name


@dataclass(frozen=True)
class RunSettings:
    """How to run: attempts per case, concurrency, caps, retries; out-of-range values raise :class:`RunnerError`.

    ``retry_errors``: run again the attempts stored as infrastructure errors (each replaces its error episode).
    A retry waits ``backoff_s * 2**trial`` seconds times a jitter factor in [0.5, 1.5) drawn from a generator
    seeded by (``seed``, case, attempt), so concurrent episodes do not retry in lock-step and a run's waits are
    reproducible. ``max_auth_errors`` consecutive authentication errors stop the run from scheduling more.
    """

    attempts: int = 5
    concurrency: int = 4
    seed: int = 0
    max_steps: int = 30
    episode_timeout_s: float = 300.0
    retries: int = 2
    backoff_s: float = 1.0
    cases: tuple[str, ...] = ()
    max_auth_errors: int = 3
    retry_errors: bool = False

    def __post_init__(self) -> None:
        at_least = (
            ("--attempts", self.attempts, 1),
            ("--concurrency", self.concurrency, 1),
            ("--seed", self.seed, 0),
            ("--max-steps", self.max_steps, 1),
            ("--retries", self.retries, 0),
            ("max_auth_errors", self.max_auth_errors, 1),
        )
        for option, value, least in at_least:
            if value < least:
                raise RunnerError(f"{option} must be at least {least} (got {value})")
        if not (math.isfinite(self.episode_timeout_s) and self.episode_timeout_s > 0):
            raise RunnerError(f"--timeout must be a positive, finite number of seconds (got {self.episode_timeout_s})")
        if not (math.isfinite(self.backoff_s) and self.backoff_s >= 0):
            raise RunnerError(f"backoff_s must be a finite number of seconds, at least 0 (got {self.backoff_s})")


@dataclass
class RunProgress:
    """Counts the runner updates as episodes finish (the CLI draws its progress bar from it)."""

    total: int = 0
    done: int = 0
    skipped: int = 0
    passed: int = 0
    errors: int = 0
    threads_left: int = 0  # worker threads of given-up episodes still running a tool (see mantra_env.stepper)
    stopped: str = ""  # why the runner stopped scheduling episodes early ("" if it did not)


def select_cases(suite: Suite, patterns: Sequence[str]) -> list[str]:
    """Case ids matching any of ``patterns`` (exact ids or shell-style wildcards); all cases if none."""
    ids = [case.id for case in suite.cases]
    if not patterns:
        return ids
    chosen = [cid for cid in ids if any(fnmatch.fnmatchcase(cid, p) for p in patterns)]
    if not chosen:
        raise RunnerError(
            f"--cases {' '.join(patterns)} matches no case of {suite.manifest.domain}/{suite.manifest.name}; cases: "
            f"{', '.join(ids[:8])}..."
        )
    return chosen


def plan(suite: Suite, domain: Domain, settings: RunSettings) -> list[tuple[str, int]]:
    """The (case, attempt) keys of a run, after every check that can fail before it starts: an empty suite, a
    case filter that matches nothing, too many episodes, and whatever :meth:`Domain.check_suite` refuses (a case
    of another domain, a check naming what the domain lacks, a database patch that does not apply; each named)."""
    if not suite.cases:
        raise RunnerError(f"suite {suite.manifest.name!r} has no cases: nothing to run")
    chosen = select_cases(suite, settings.cases)
    if len(chosen) * settings.attempts > MAX_EPISODES:
        raise RunnerError(
            f"{len(chosen)} cases x {settings.attempts} attempts is {len(chosen) * settings.attempts} episodes, "
            f"more than one run can hold ({MAX_EPISODES}); lower --attempts or split the run with --cases"
        )
    domain.check_suite(suite)  # cases of another domain, unknown tools or arguments, patches that do not apply
    return [(case_id, attempt) for case_id in chosen for attempt in range(settings.attempts)]


def pending(
    store: RolloutStore, run_id: str, keys: Sequence[tuple[str, int]], retry_errors: bool
) -> list[tuple[str, int]]:
    """The ``keys`` (from :func:`plan`) that a run of ``run_id`` runs: those not stored yet and, with
    ``retry_errors``, those stored as infrastructure errors."""
    finished = store.finished_keys(run_id)
    retried = store.error_keys(run_id) if retry_errors else set()
    return [key for key in keys if key not in finished or key in retried]


async def run_suite(
    store: RolloutStore,
    run: RunRecord,
    suite: Suite,
    domain: Domain,
    make_agent: Callable[[], EpisodeAgent],
    settings: RunSettings,
    progress: RunProgress | None = None,
    on_episode: Callable[[EpisodeRecord], None] | None = None,
    offload: Offload | None = None,
) -> RunProgress:
    """Run every (case, attempt) not yet stored for ``run`` (and, with ``settings.retry_errors``, those stored as
    infrastructure errors); returns the progress counts. Nothing is written when :func:`plan` refuses the run.
    With ``offload``, the episodes are played by :func:`play_episode` through it and stored in the plan's order."""
    progress = progress or RunProgress()
    keys = plan(suite, domain, settings)
    store.start_run(run)
    retried = store.error_keys(run.run_id) if settings.retry_errors else set()
    todo = pending(store, run.run_id, keys, settings.retry_errors)
    progress.total, progress.skipped = len(keys), len(keys) - len(todo)
    limit = asyncio.Semaphore(max(1, settings.concurrency))
    auth_errors = 0  # consecutive, in the order episodes finish
    # Offloaded: each episode is stored after the one before it in the plan (turns[i] is set once episode i is
    # handed to the writer, or will never be), so the rows' order does not depend on which worker is faster.
    turns = [asyncio.Event() for _ in todo] if offload is not None else []

    async def played(case_id: str, attempt: int) -> EpisodeRecord:
        if offload is None:
            return await _episode(run.run_id, suite, domain, make_agent, settings, case_id, attempt, progress)
        job = EpisodeJob(run.run_id, domain.name, make_agent, settings, case_id, attempt)
        record, threads_left = await offload(play_episode, suite, job)
        progress.threads_left += threads_left
        return record

    async def handed_over(record: EpisodeRecord, sink: EpisodeSink) -> asyncio.Future[None]:
        nonlocal auth_errors
        auth_errors = auth_errors + 1 if record.error_kind == "auth" else 0
        if auth_errors >= max(1, settings.max_auth_errors) and not progress.stopped:
            progress.stopped = (
                f"stopped after {auth_errors} consecutive authentication errors (last: {record.error}); "
                "the finished episodes are stored, the others were not started"
            )
        return await sink.submit(record, replaces_error=(record.case_id, record.attempt) in retried)

    async def one(index: int, case_id: str, attempt: int, sink: EpisodeSink) -> None:
        try:
            async with limit:
                if progress.stopped:  # not started: nothing of it is stored, --resume runs it
                    return
                record = await played(case_id, attempt)
                if not turns:  # the slot is held until the writer has taken the episode: that bounds the backlog
                    stored = await handed_over(record, sink)
            if turns:
                if index:
                    await turns[index - 1].wait()
                stored = await handed_over(record, sink)
        finally:
            if turns:
                turns[index].set()
        await stored  # committed: only now does it count as done
        progress.done += 1
        progress.passed += record.status == "passed"
        progress.errors += record.status == "error"
        if on_episode is not None:
            on_episode(record)

    # Everything alive when the run starts (imported modules, litellm's tables alone are ~270k objects, the suite)
    # outlives it; parked in the collector's permanent generation, it is not rescanned by the full collections
    # that episode garbage triggers (measured: +40% episodes/s with 64 in flight). Back to normal afterwards,
    # unless the caller had frozen objects itself.
    frozen_by_caller = gc.get_freeze_count() > 0
    gc.freeze()
    try:
        async with episode_sink(store) as sink:
            tasks = [asyncio.ensure_future(one(index, *key, sink)) for index, key in enumerate(todo)]
            try:
                await asyncio.gather(*tasks)
            finally:  # a failure (or Ctrl-C) stops the other episodes before the writer is closed
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        if not frozen_by_caller:
            gc.unfreeze()
    return progress


async def _episode(
    run_id: str,
    suite: Suite,
    domain: Domain,
    make_agent: Callable[[], EpisodeAgent],
    settings: RunSettings,
    case_id: str,
    attempt: int,
    progress: RunProgress | None = None,
) -> EpisodeRecord:
    seed = settings.seed * 1_000_003 + attempt  # same seed, same episode; attempts differ
    jitter = random.Random(f"{settings.seed}/{case_id}/{attempt}")
    started_at = utc_now()
    failure: tuple[str, str] = ("", "")
    trace = Trace()
    for trial in range(settings.retries + 1):
        started = time.perf_counter()
        # A fresh env per trial: one whose step is still running in a thread left behind is never touched again.
        try:
            env = MantraEnv(suite, domain, case=case_id, max_steps=settings.max_steps)
        except Exception as error:  # a bug in the domain's database or toolkit: this episode's failure, not the run's
            failure = ("internal", f"{type(error).__name__}: {error}")
            break
        stepper = EpisodeStepper(env)
        try:
            report = await stepper.drive(make_agent().run(env, case_id, seed), settings.episode_timeout_s)
            return _graded(run_id, case_id, attempt, env, report, time.perf_counter() - started, started_at)
        except InfrastructureError as error:
            failure = (error.kind, str(error))
            if not error.retryable:
                break
        except TimeoutError:
            failure = ("timeout", f"the episode took longer than {settings.episode_timeout_s:g} s")
        except ToolCrash as crash:  # a bug in the domain's tool: the harness's failure, with the call kept
            failure, trace = ("internal", f"{crash}\n\n{crash.details}"), crash.trace(env.trace)
            break
        except Exception as error:  # a bug in an agent or the harness: this episode's failure, never the run's
            failure = ("internal", f"{type(error).__name__}: {error}")
            break
        finally:
            if stepper.close() and progress is not None:
                progress.threads_left += 1
        if trial < settings.retries:
            await asyncio.sleep(backoff_delay(settings.backoff_s, trial, jitter))
    return EpisodeRecord(
        run_id=run_id,
        case_id=case_id,
        attempt=attempt,
        status="error",
        error_kind=failure[0],
        error=_clipped(failure[1]),
        trace=trace,
        started_at=started_at,
        finished_at=utc_now(),
    )


@dataclass(frozen=True)
class EpisodeJob:
    """What a worker needs, beside the suite, to play one episode (:func:`play_episode`)."""

    run_id: str
    domain: str
    """The domain's name: the worker loads it (shipped, installed or on its ``MANTRA_DOMAINS_PATH``)."""
    make_agent: Callable[[], EpisodeAgent]
    settings: RunSettings
    case_id: str
    attempt: int


def play_episode(suite: Suite, job: EpisodeJob) -> tuple[EpisodeRecord, int]:
    """Play one episode where this runs (an offload's worker), as the runner does here: its record, and the
    threads it left behind (tools still running after a time-out)."""
    progress = RunProgress()
    domain = load_domain(job.domain)
    record = asyncio.run(
        _episode(job.run_id, suite, domain, job.make_agent, job.settings, job.case_id, job.attempt, progress)
    )
    return record, progress.threads_left


def _clipped(text: str, limit: int = 8000) -> str:
    """``text`` cut to ``limit`` characters, keeping its start (the message) and its end (a traceback's
    innermost frames)."""
    if len(text) <= limit:
        return text
    return f"{text[: limit // 4]}\n[... {len(text) - limit} characters cut ...]\n{text[-(limit * 3 // 4) :]}"


def backoff_delay(base_s: float, trial: int, rng: random.Random) -> float:
    """Seconds to wait before retry ``trial + 1``: exponential in ``trial``, times a jitter factor in [0.5, 1.5)."""
    return float(base_s * 2**trial * (0.5 + rng.random()))


def _graded(
    run_id: str, case_id: str, attempt: int, env: MantraEnv, report: AgentReport, latency: float, started_at: Any
) -> EpisodeRecord:
    if not env.done:  # the agent stopped (cycle cap) without answering: grade what it did
        env.step({"final_answer": report.final_answer})
    verdict = env.last_verdict
    trace: Trace = env.last_trace
    # A model fault (its output broke the request) is a failed attempt; the reason is kept beside the verdict.
    fault = report.model_fault[:2000] or None
    return EpisodeRecord(
        run_id=run_id,
        case_id=case_id,
        attempt=attempt,
        status="passed" if verdict is not None and verdict.passed else "failed",
        reward=env.last_reward,
        verdict=verdict,
        trace=trace,
        usage=report.usage,
        latency_s=latency,
        step_latencies_s=report.step_latencies_s,
        messages=report.messages,
        error_kind="model" if fault else None,
        error=fault,
        started_at=started_at,
        finished_at=utc_now(),
    )
