"""The review app's solver jobs: each solve runs in a child process (spawned, so Cancel can kill it and the app's
event loop never waits on Z3), one job per case at a time. The child sends its phase (the query it runs) and then
its report through a pipe; the app reads the pipe without waiting whenever it shows the case."""

from __future__ import annotations

import dataclasses
import multiprocessing
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Literal

from mantra_env.case import SolverModes
from mantra_env.generators.artifacts import Scenario
from mantra_env.generators.review.state import SampleReview, SolverReport, solve
from mantra_env.tools import ToolSpec

_CONTEXT = multiprocessing.get_context("spawn")  # a fresh interpreter: no lock of the app's threads is copied
JobKey = tuple[str, str]
"""(sample id, scenario id)."""


@dataclasses.dataclass(frozen=True)
class SolveTask:
    """What one solve needs (sent to the child)."""

    review: SampleReview
    scenario: Scenario
    tools: list[ToolSpec]
    bound: int
    modes: SolverModes = dataclasses.field(default_factory=SolverModes)


def solve_in_child(task: SolveTask, pipe: Connection) -> None:
    """The child's work: the phases as ``("phase", name)``, then ``("report", SolverReport)``."""

    def phase(name: str) -> None:
        pipe.send(("phase", name))

    try:
        report = solve(task.review, task.scenario, task.tools, task.bound, task.modes, phase=phase)
    except Exception as error:  # any: the reviewer reads it on the case page instead of a dead job
        report = SolverReport(None, [], None, error=f"the solver failed: {type(error).__name__}: {error}")
    pipe.send(("report", report))
    pipe.close()


SolveTarget = Callable[[SolveTask, Connection], None]


@dataclasses.dataclass
class SolveJob:
    """One solve of one case at one revision of its sample's review."""

    revision: int
    started: float
    process: BaseProcess
    pipe: Connection
    phase: str = "starting"
    state: Literal["running", "done", "cancelled", "failed"] = "running"
    report: SolverReport | None = None
    ended: float | None = None
    shown: bool = False
    """The report was shown for the revision it was computed for (a later edit does not discard it)."""

    def elapsed(self) -> int:
        return int((self.ended or time.time()) - self.started)


class SolveJobs:
    """The solver jobs of one review app (in memory: a result is a view of the files, never saved)."""

    def __init__(self, target: SolveTarget = solve_in_child) -> None:
        self._target = target
        self._jobs: dict[JobKey, SolveJob] = {}
        self._lock = threading.Lock()

    def start(self, key: JobKey, revision: int, task: SolveTask) -> SolveJob:
        """Start a solve of ``key`` at ``revision``, unless one is running already (then that one is returned)."""
        with self._lock:
            running = self._poll(key)
            if running is not None and running.state == "running":
                return running
            receiver, sender = _CONTEXT.Pipe(duplex=False)
            process = _CONTEXT.Process(target=self._target, args=(task, sender), daemon=True)
            process.start()
            sender.close()  # the child holds the only sending end: its exit ends the pipe
            job = SolveJob(revision, time.time(), process, receiver)
            self._jobs[key] = job
            return job

    def get(self, key: JobKey) -> SolveJob | None:
        """The latest job of ``key`` with what its child has sent so far."""
        with self._lock:
            return self._poll(key)

    def cancel(self, key: JobKey) -> bool:
        """Kill ``key``'s running solve; ``False`` when none runs."""
        with self._lock:
            job = self._poll(key)
            if job is None or job.state != "running":
                return False
            _stop(job)
            job.state, job.ended = "cancelled", time.time()
            return True

    def close(self) -> None:
        """Kill every running solve (the app is shutting down)."""
        with self._lock:
            for job in self._jobs.values():
                if job.state == "running":
                    _stop(job)
                    job.state, job.ended = "cancelled", time.time()

    def _poll(self, key: JobKey) -> SolveJob | None:
        job = self._jobs.get(key)
        if job is None or job.state != "running":
            return job
        try:
            while job.pipe.poll():
                kind, value = job.pipe.recv()
                if kind == "phase":
                    job.phase = str(value)
                elif kind == "report":
                    job.report, job.state, job.ended = value, "done", time.time()
                    job.pipe.close()
                    job.process.join(10)
                    break
        except (EOFError, OSError):  # the child ended without a report: killed from outside, or out of memory
            job.process.join(10)
            job.state, job.ended = "failed", time.time()
            job.report = SolverReport(
                None, [], None, error=f"the solver process ended without a result (exit code {job.process.exitcode})"
            )
        return job


def _stop(job: SolveJob) -> None:
    job.process.kill()
    job.process.join(10)
    job.pipe.close()
