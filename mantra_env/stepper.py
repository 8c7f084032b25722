"""Tool calls off the event loop: under the runner, an episode's ``env.step`` runs in a worker thread.

A domain's tools are a user's code, and a bug in one is that episode's failure, never the run's. Run on the event
loop, a tool that blocks (a sleep, a hung socket) would stall every episode in flight, and the runner's time-out
could not fire until it returned; one that raises would be caught by the agent framework (strands answers the model
with the error and carries on) and the episode graded as the model's failure; one that raises ``SystemExit`` would
end the run. So the runner gives each episode an :class:`EpisodeStepper`: one daemon thread that runs the episode's
steps in the order they are taken, while the loop awaits each without blocking. Agents step through :func:`step`,
which uses the stepper of the episode it runs in and is a plain ``env.step`` anywhere else (a notebook, RL).

A step that raises (anything, ``SystemExit`` and ``KeyboardInterrupt`` included: a tool's, not the user's Ctrl-C,
which only the main thread receives) is a :class:`ToolCrash`: the episode ends at once, with the call in the trace
and the traceback kept. A step still running when the episode is given up (time-out, crash, Ctrl-C) leaves its
thread behind: a daemon, so it never holds the process open; the runner counts such threads. ``MantraEnv.step``
itself is unchanged: the stepper only decides on which thread it runs.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import queue
import threading
import traceback
from collections.abc import Coroutine
from typing import Any, TypeVar

from mantra_env.env import UNPARSEABLE, MantraEnv
from mantra_env.errors import MantraError
from mantra_env.limits import bounded
from mantra_env.trace import ToolCall, ToolError, Trace

T = TypeVar("T")
StepResult = tuple[str, float, bool, bool, dict[str, Any]]

_CURRENT: contextvars.ContextVar[EpisodeStepper | None] = contextvars.ContextVar("episode_stepper", default=None)
_STOP = object()


class ToolCrash(MantraError, RuntimeError):
    """A step raised instead of returning (a bug in a domain's tool, or in grading a final answer): ``call`` is
    the tool call as the trace records it (error code ``tool_crashed``; ``None`` for a final answer), ``details``
    the traceback."""

    def __init__(self, message: str, call: ToolCall | None, details: str) -> None:
        self.call = call
        self.details = details
        super().__init__(message)

    def trace(self, before: Trace) -> Trace:
        """``before`` (the episode's trace when the step was taken) with the crashed call appended."""
        calls = before.calls if self.call is None else (*before.calls, self.call)
        return Trace.model_construct(calls=calls, final_answer=None)


class EpisodeStepper:
    """Runs one episode's steps in one worker thread, in order (see the module docstring)."""

    def __init__(self, env: MantraEnv) -> None:
        self.env = env
        self.crash: ToolCrash | None = None
        self._requests: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._running = False  # a step is running in the worker thread now
        self._closed = False  # the episode is over: steps still queued are not taken
        self._task: asyncio.Task[Any] | None = None

    async def step(self, action: str | dict[str, Any]) -> StepResult:
        """``env.step(action)`` in the worker thread; raises :class:`ToolCrash` if it (or an earlier step) raised."""
        if self.crash is not None:
            raise self.crash
        loop = asyncio.get_running_loop()
        done: asyncio.Future[StepResult] = loop.create_future()
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="mantra-episode-steps", daemon=True)
            self._thread.start()
        self._requests.put((action, loop, done))
        return await done

    async def drive(self, agent_run: Coroutine[Any, Any, T], timeout_s: float) -> T:
        """Await ``agent_run`` (an agent's episode) with this stepper current, for at most ``timeout_s`` seconds.

        Raises:
            ToolCrash: a step raised (the agent was cancelled).
            TimeoutError: the episode took longer (the agent was cancelled).
        """
        context = contextvars.copy_context()
        context.run(_CURRENT.set, self)
        self._task = task = asyncio.get_running_loop().create_task(agent_run, context=context)
        try:
            async with asyncio.timeout(timeout_s):
                result = await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self.crash is None or (current is not None and current.cancelling()):
                raise  # the run itself is being cancelled (Ctrl-C)
        finally:
            if not task.done():  # the agent caught the crash's cancellation and went on
                task.cancel()
        if self.crash is not None:
            raise self.crash
        return result

    def close(self) -> bool:
        """End the worker thread once it is idle; returns whether a step is still running in it (a thread left
        behind: a tool that blocks)."""
        self._closed = True
        if self._thread is not None:
            self._requests.put(_STOP)
        return self._running

    def _serve(self) -> None:
        while (request := self._requests.get()) is not _STOP and not self._closed:
            action, loop, done = request
            before = self.env.trace
            self._running = True
            try:
                outcome: tuple[Any, BaseException | None] = (self.env.step(action), None)
            except BaseException as error:  # SystemExit too: a tool's exit is its episode's error
                outcome = (None, self._crashed(action, before, error))
            finally:
                self._running = False
            try:
                loop.call_soon_threadsafe(self._deliver, done, outcome)
            except RuntimeError:  # the loop is closed: nobody waits for this step any more
                return

    def _deliver(self, done: asyncio.Future[StepResult], outcome: tuple[Any, BaseException | None]) -> None:
        result, error = outcome
        if done.cancelled():
            return
        if isinstance(error, ToolCrash):
            self.crash = self.crash or error
            done.set_exception(error)
            if self._task is not None:
                self._task.cancel()  # the agent may swallow the error: the episode ends here regardless
        else:
            done.set_result(result)

    def _crashed(self, action: Any, before: Trace, error: BaseException) -> ToolCrash:
        details = "".join(traceback.format_exception(error))
        raised = f"{type(error).__name__}: {error}"
        parsed = _readable(action)
        if "final_answer" in parsed:  # grading raised: no call to record
            return ToolCrash(f"grading the final answer raised {raised}"[:2000], None, details)
        tool, arguments = bounded(str(parsed.get("tool", UNPARSEABLE))), parsed.get("arguments")
        message = f"the tool {tool!r} raised {raised}"[:2000]
        call = ToolCall.model_construct(
            step=len(before.calls), tool=tool, args=_json_copy(arguments), result=None,
            error=ToolError(code="tool_crashed", message=message),
            kind=self.env.domain.episode_constants.kinds.get(tool), raw_arguments=None,
        )  # fmt: skip
        return ToolCrash(message, call, details)


def _readable(action: Any) -> dict[str, Any]:
    """The step's action as a dict, as far as it can be read (``{}`` if it cannot)."""
    if isinstance(action, str):
        try:
            action = json.loads(action)
        except (ValueError, RecursionError):
            return {}
    return action if isinstance(action, dict) else {}


def _json_copy(arguments: Any) -> dict[str, Any]:
    """The call's arguments as a JSON copy for the trace (``{}`` if they are no JSON object)."""
    try:
        copied = json.loads(json.dumps(arguments))
    except (TypeError, ValueError, RecursionError):
        return {}
    return copied if isinstance(copied, dict) else {}


async def step(env: MantraEnv, action: str | dict[str, Any]) -> StepResult:
    """Take one step of ``env``: in the worker thread of the runner's episode that owns ``env``, else directly.

    Agents call this rather than ``env.step`` so that, under the runner, a tool that blocks or raises ends only
    its own episode (see the module docstring).
    """
    stepper = _CURRENT.get()
    if stepper is not None and stepper.env is env:
        return await stepper.step(action)
    return env.step(action)


__all__ = ["EpisodeStepper", "StepResult", "ToolCrash", "step"]
