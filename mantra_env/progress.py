"""Progress of a long command on stderr: a bar redrawn in place on a terminal; on anything else (a CI log, a
file, a pipe) plain lines, one per finished unit or per :data:`STEP_PERCENT` % of them, whichever is rarer, so
that a log shows the command is alive and how far it got without drowning in lines."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

STEP_PERCENT = 5
BAR_WIDTH = 30


class Progress:
    """Reports ``done`` out of ``total`` units of ``label`` (e.g. ``episodes``) as they finish."""

    def __init__(
        self,
        label: str,
        total: int,
        stream: TextIO | None = None,
        *,
        interactive: bool | None = None,
        clock: Callable[[], float] = time.perf_counter,
        started: float | None = None,
    ) -> None:
        self.label = label
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.interactive = self.stream.isatty() if interactive is None else interactive
        self.clock = clock
        self.started = clock() if started is None else started
        """When the work began, on ``clock`` (default: now)."""
        self._step_reported = -1  # the last STEP_PERCENT step a line was written for
        self._done_reported = -1
        self._drawn = False

    def update(self, done: int, detail: str = "") -> None:
        """``done`` units are finished; ``detail`` (``passed 3 errors 0``) follows the count."""
        elapsed = self.clock() - self.started
        tail = f"{' ' + detail if detail else ''} {elapsed:5.0f}s"
        if self.interactive:
            filled = BAR_WIDTH * done // self.total if self.total else BAR_WIDTH
            bar = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}]"
            print(f"\r{bar} {done}/{self.total} {self.label}{tail}", end="", file=self.stream, flush=True)
            self._drawn = True
            return
        step = done * 100 // (STEP_PERCENT * self.total) if self.total else 0
        if done == self._done_reported or (step == self._step_reported and done != self.total):
            return
        self._step_reported, self._done_reported = step, done
        percent = done * 100 // self.total if self.total else 100
        print(f"{self.label}: {done}/{self.total} ({percent}%){tail}", file=self.stream, flush=True)

    def close(self) -> None:
        """End the bar's line (a terminal only)."""
        if self._drawn:
            print(file=self.stream, flush=True)
            self._drawn = False
