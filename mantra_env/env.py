"""The gymnasium environment: one validated case is one episode of tool calls against a simulated database."""

from __future__ import annotations

import copy
import json
import operator
from typing import Any

import gymnasium as gym
import pydantic_core

from mantra_env.case import Case, Suite
from mantra_env.domains import Domain
from mantra_env.errors import MantraError
from mantra_env.grading import grade
from mantra_env.limits import MAX_RESULT_BYTES, MAX_TEXT, bounded, json_problem
from mantra_env.observations import RESULT_PREFIX, result_json, tool_observation
from mantra_env.observations import safe_text as _safe_text
from mantra_env.rewards import REWARD_MODES, RewardMode, expected_misses, obligations, reward
from mantra_env.spaces import JsonText, ToolCallSpace
from mantra_env.toolkit import Toolkit
from mantra_env.trace import ToolCall, ToolError, Trace
from mantra_env.unrequested import RequestedWrites, UnrequestedWrite
from mantra_env.verdict import VERDICT_ADAPTER, Verdict

UNPARSEABLE = "<unparseable>"


class EnvArgumentError(MantraError, ValueError):
    """An argument of :class:`MantraEnv` is out of range (e.g. ``max_steps=0``)."""


class EnvArgumentTypeError(MantraError, TypeError):
    """An argument of :class:`MantraEnv` has the wrong type (e.g. ``max_steps=1.5``, ``dense="yes"``)."""


class MantraEnv(gym.Env[str, str]):
    """A MANTRA compliance case as an episodic environment.

    ## Description
    The agent receives a procedural manual, a scenario prompt and the domain's tools. It acts by calling tools
    against a simulated database (a fresh copy per episode, with the case's database patch applied) and ends
    the episode with a final answer. The trace of tool calls is graded by the case's checks and for unrequested
    writes (:func:`mantra_env.grading.grade_case`: an accepted write the case never asks for fails the episode).

    ## Action Space
    :class:`~mantra_env.spaces.ToolCallSpace`: one JSON object as text, either a tool call ``{"tool":
    "check_inventory", "arguments": {...}}`` or a final answer ``{"final_answer": "..."}``. A dict with the same
    shape is accepted too. Anything else (a final answer with other keys too) is a structured tool error (code
    ``unparseable_action``) recorded in the trace. ``action_space.sample()`` is a tool call of one of the domain's
    tools with schema-valid arguments.

    ## Observation Space
    :class:`~mantra_env.spaces.JsonText`: one JSON object as text of at most ``observation_space.max_bytes``
    bytes of UTF-8 (the larger of the suite's longest opening observation and ``MAX_RESULT_BYTES``), so it fits
    the shared memory of an async vector env. After ``reset``: ``{"system": manual, "prompt": scenario prompt,
    "tools": [tool specs]}``. After a tool call: ``{"result": ...}`` or ``{"error": {"code": ..., "message":
    ...}}`` (a result too large to fit is the error ``result_too_large``, one JSON cannot carry (NaN, infinity,
    a lone surrogate) ``invalid_result``; the call stays in the trace). After the final answer: ``{"done": true}``.

    ## Rewards
    By ``reward_mode`` (:mod:`mantra_env.rewards`): ``binary`` 1.0 iff every check passes and no write was
    unrequested; ``fraction`` the share of the case's obligations met (checks only an action can satisfy) minus
    the share of prohibitions broken (``NO-CALL``, ``AFTER``/``BEFORE``: kept by doing nothing, so keeping one
    never pays; each unrequested write counts as one more), floored at 0; ``shaped`` ``fraction`` minus 0.02 per
    tool error. The no-op agent earns 0 in every mode on a case with an obligation; only a compliant trace earns
    1. By default the reward comes at the end (0 on every other step). With ``dense=True`` every step pays the
    change of the mode's reward of the trace so far (potential-based: the episode's rewards sum to exactly its
    final reward). A truncated episode is graded on the calls it made.

    ## Starting State
    The case chosen by ``options={"case": id or index}`` at reset (or the constructor's ``case``); without
    either, a case drawn with ``self.np_random``.

    ## Episode End
    Terminated on a final answer; truncated after ``max_steps`` tool calls.

    ## Arguments
    ``suite``, ``domain``, ``case`` (id or index), ``reward_mode``, ``dense`` (default False), ``max_steps``
    (default 30).

    ## Info
    ``case_id``, ``trace`` (the :class:`~mantra_env.trace.Trace` so far), ``step``; at the end ``verdict`` (the
    combined :class:`~mantra_env.verdict.Verdict`: ``checks_passed``, ``unrequested_writes``, None for a case
    without a stored oracle plan, and ``passed``) and ``verdict_json``.

    ## Version History
    * v0: initial version.
    * v1: ``fraction``/``shaped`` pay only for obligations met and charge broken prohibitions (in v0 they paid
      for vacuously kept checks: the no-op agent earned 0.18); ``dense``; JSON text spaces that fit shared
      memory, with schema-valid samples; a tool result over ``MAX_RESULT_BYTES`` is the error
      ``result_too_large``.
    * v2: an accepted write the case never asks for (:mod:`mantra_env.unrequested`) fails the episode:
      ``binary`` pays 0, ``fraction``/``shaped`` count it as a broken prohibition, ``dense`` charges it on its
      step; the verdict carries ``checks_passed`` and ``unrequested_writes``.
    """

    metadata = {"render_modes": []}  # noqa: RUF012 - gymnasium declares it as a class attribute

    def __init__(
        self,
        suite: Suite,
        domain: Domain,
        case: str | int | None = None,
        reward_mode: RewardMode = "binary",
        max_steps: int = 30,
        dense: bool = False,
    ) -> None:
        if reward_mode not in REWARD_MODES:
            raise MantraError(f"reward_mode must be 'binary', 'fraction' or 'shaped', not {reward_mode!r}")
        if isinstance(max_steps, bool) or not hasattr(max_steps, "__index__"):  # int, numpy ints; not 1.5, "3"
            raise EnvArgumentTypeError(f"max_steps must be a positive int (tool calls per episode), not {max_steps!r}")
        if max_steps < 1:
            raise EnvArgumentError(f"max_steps must be at least 1, got {max_steps}")
        if not isinstance(dense, bool):
            raise EnvArgumentTypeError(f"dense must be True or False, not {dense!r}")
        if not suite.cases:
            raise MantraError(f"suite {suite.manifest.name!r} has no cases")
        domain.check_suite(suite)  # a check naming what the domain lacks is no honest verdict
        self.suite, self.domain = suite, domain
        self.default_case = case
        if case is not None:
            suite.case(case)  # fail now, not at reset
        self.reward_mode: RewardMode = reward_mode
        self.dense = dense
        self._obligations: dict[str, tuple[bool, ...]] = {}  # per case id, computed at its first reset
        self._requested: dict[str, RequestedWrites | None] = {}  # likewise; None: no stored oracle plan
        self._unrequested: list[UnrequestedWrite] = []  # this episode's, judged call by call as they happen
        self._potential = 0.0  # the dense reward paid so far in this episode
        self._errors = 0
        self.max_steps = operator.index(max_steps)
        self._constants = domain.episode_constants
        self._kinds = self._constants.kinds
        openings = max(len(self._opening(case).encode("utf-8")) for case in suite.cases)
        self._observation_bytes = max(openings, MAX_RESULT_BYTES)
        self.observation_space = JsonText(self._observation_bytes)
        self._result_room = self._observation_bytes - len(RESULT_PREFIX + "}")  # bytes a tool result may take
        self.action_space = ToolCallSpace(self._constants.specs, MAX_TEXT)
        self.case: Case | None = None
        self.last_trace: Trace = Trace()
        self.last_verdict: Verdict | None = None
        self.last_reward: float | None = None
        self._toolkit: Toolkit | None = None
        self._calls: list[ToolCall] = []
        self._done = True

    @property
    def calls_so_far(self) -> tuple[ToolCall, ...]:
        """The calls of the episode in progress, with their results (what an agent has seen so far)."""
        return tuple(self._calls)

    # -- gymnasium API ---------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        choice = (options or {}).get("case", self.default_case)
        if choice is None:
            choice = int(self.np_random.integers(len(self.suite.cases)))
        self.case = self.suite.case(choice)
        self._toolkit = self.domain.toolkit(self.domain.fresh_database(self.case.database_patch))
        self._calls = []
        self._done = False
        self._potential, self._errors = 0.0, 0
        self._unrequested = []
        if self.case.id not in self._obligations:
            self._obligations[self.case.id] = obligations(self.case.checks)
            self._requested[self.case.id] = self._requested_writes(self.case)
        return self._opening(self.case), self._info()

    def step(self, action: str | dict[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._done or self.case is None or self._toolkit is None:
            raise MantraError("step() called on a finished episode: call reset() first")
        parsed, problem = _parse_action(action)
        if parsed is not None and "final_answer" in parsed:
            answer = _answer_text(parsed["final_answer"])
            return self._finish(json.dumps({"done": True}), truncated=False, answer=answer)
        result_text = "null"  # the result's JSON text; only a call without an error shows it
        if problem is not None:
            name = parsed["tool"] if parsed is not None else UNPARSEABLE
            raw = parsed["raw"] if parsed is not None else _raw_text(action)
            call = ToolCall.model_construct(
                step=len(self._calls), tool=name, args={}, result=None, error=problem, kind=self._kinds.get(name),
                raw_arguments=raw,
            )  # fmt: skip
        else:
            assert parsed is not None
            name, arguments = parsed["tool"], parsed["arguments"]
            result, error = self._toolkit.execute(name, arguments)
            result, result_text, error = _jsonable(result, name) if error is None else (None, "null", error)
            # A character is at most 4 bytes of UTF-8: only a long text is encoded to measure it.
            if len(result_text) * 4 > self._result_room and len(result_text.encode("utf-8")) > self._result_room:
                result, error = None, _too_large(name, len(result_text.encode("utf-8")), self._result_room)
            call = ToolCall.model_construct(
                step=len(self._calls), tool=name, args=arguments, result=result, error=error,
                kind=self._kinds.get(name), raw_arguments=None,
            )  # fmt: skip
        self._calls.append(call)
        self._errors += call.error is not None
        if call.kind == "write" and call.error is None:  # judged alone: later calls cannot change it
            requested = self._requested[self.case.id]
            if requested is not None and requested.is_unrequested(call):
                self._unrequested.append(UnrequestedWrite(step=call.step, tool=call.tool, args=call.args))
        observation = tool_observation(call, self._observation_bytes, result_text)  # the export's serializer too
        if len(self._calls) >= self.max_steps:
            return self._finish(observation, truncated=True, answer=None)
        paid = 0.0
        if self.dense:
            potential = self._reward(self._verdict(self.trace))
            paid, self._potential = potential - self._potential, potential
        return observation, paid, False, False, self._info()

    # -- pickling: trainers ship envs between processes ----------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_constants"], state["_kinds"]  # derived from the domain (a mappingproxy does not pickle)
        state["_requested"] = list(self._requested)  # compiled from the case and the domain's argument rules
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        compiled: list[str] = state.pop("_requested")
        self.__dict__.update(state)
        self._constants = self.domain.episode_constants
        self._kinds = self._constants.kinds
        self._requested = {case_id: self._requested_writes(self.suite.case(case_id)) for case_id in compiled}

    def _requested_writes(self, case: Case) -> RequestedWrites | None:
        """The writes ``case`` asks for, compiled for the unrequested-write rule (None: no stored oracle plan)."""
        plan = case.oracle_plan
        return None if plan is None else RequestedWrites(case.checks, plan, self._constants.specs)

    # -- helpers ---------------------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        """Whether the current episode has ended (then ``last_trace``/``last_verdict``/``last_reward`` hold it)."""
        return self._done

    @property
    def trace(self) -> Trace:
        return Trace.model_construct(calls=tuple(self._calls), final_answer=None)

    def _opening(self, case: Case) -> str:
        # The manual and tool specs are the bulk of the observation and never change: serialised once per domain.
        manual, tools = self._constants.manual_json, self._constants.tools_json
        prompt = json.dumps(case.scenario.prompt, ensure_ascii=False)
        return f'{{"system": {manual}, "prompt": {prompt}, "tools": {tools}}}'

    def _info(self, **extra: Any) -> dict[str, Any]:
        assert self.case is not None
        return {"case_id": self.case.id, "step": len(self._calls), "trace": self.trace, **extra}

    def _finish(
        self, observation: str, *, truncated: bool, answer: str | None
    ) -> tuple[str, float, bool, bool, dict[str, Any]]:
        assert self.case is not None
        self._done = True
        trace = Trace.model_construct(calls=tuple(self._calls), final_answer=answer)
        verdict = self._verdict(trace)
        info = self._info(verdict=verdict, verdict_json=VERDICT_ADAPTER.dump_python(verdict, mode="json"))
        info["trace"] = trace
        final = self._reward(verdict)
        self.last_trace, self.last_verdict, self.last_reward = trace, verdict, final
        paid = final - self._potential if self.dense else final
        return observation, paid, not truncated, truncated, info

    def _verdict(self, trace: Trace) -> Verdict:
        """The combined verdict of ``trace`` (this episode's so far): :func:`mantra_env.grading.grade_case`'s, with
        the unrequested writes judged as each call happened."""
        assert self.case is not None
        checks = grade(trace, self.case.checks, tools=self._constants.specs)
        if self._requested[self.case.id] is None:
            return checks  # not graded for writes
        return checks.with_writes(tuple(self._unrequested))

    def last_reward_in(self, mode: RewardMode) -> float:
        """The finished episode's final reward under ``mode``, whatever this env's own mode (equal to ``last_reward``
        under it): one episode scored in every mode, as an env made with each would score it."""
        if mode not in REWARD_MODES:
            raise MantraError(f"mode must be 'binary', 'fraction' or 'shaped', not {mode!r}")
        if not self._done or self.last_verdict is None:
            raise MantraError("last_reward_in() needs a finished episode: play one to its end first")
        return self._reward(self.last_verdict, mode)

    def _reward(self, verdict: Verdict, mode: RewardMode | None = None) -> float:
        """The reward of ``verdict`` (of this episode's trace or a prefix of it) under ``mode`` (this env's)."""
        assert self.case is not None
        errors = self._errors - len(expected_misses(self.case.checks, self._calls)) if self._errors else 0
        return reward(mode or self.reward_mode, verdict, self._obligations[self.case.id], errors)


def _too_large(tool: str, size: int, room: int) -> ToolError:
    return ToolError(
        code="result_too_large",
        message=f"{tool}: the result is {size} bytes of JSON, more than an observation holds ({room}); ask for less",
    )


def _parse_action(action: Any) -> tuple[dict[str, Any] | None, ToolError | None]:
    """The action as a dict with a valid shape, or a structured error saying what is wrong with it.

    A tool call's ``arguments`` come back as a private copy of JSON values within :mod:`mantra_env.limits`,
    so the caller reusing its dict cannot rewrite the recorded trace, and the trace always serialises. Limits
    are checked without recursion, before anything recursive (copying, validation, printing) sees the value.
    """
    from_text = isinstance(action, str)
    if isinstance(action, str):
        if len(action) > MAX_TEXT:
            return None, ToolError(
                code="unparseable_action", message=f"the action is longer than {MAX_TEXT} characters"
            )
        try:
            action = json.loads(action)
        except (ValueError, RecursionError) as exc:  # ValueError: also integers of more than 4300 digits
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "it nests too deep or holds a huge number"
            return None, ToolError(
                code="unparseable_action",
                message=f"the action is not JSON ({reason}); send "
                '{"tool": name, "arguments": {...}} or {"final_answer": text}',
            )
    if not isinstance(action, dict):
        return None, ToolError(code="unparseable_action", message="the action must be a JSON object")
    if "final_answer" in action:
        extra = sorted(bounded(str(key)) for key in set(action) - {"final_answer"})
        if extra:  # a call beside the answer would be dropped unseen: refused, like any other extra key
            return None, ToolError(
                code="unparseable_action",
                message=f"unexpected keys beside the final answer: {', '.join(extra)}; make the call first, "
                'then answer with {"final_answer": text} alone',
            )
        return action, None
    tool, arguments = action.get("tool"), action.get("arguments", {})
    if not isinstance(tool, str) or not tool:
        return None, ToolError(code="unparseable_action", message="the action needs a 'tool' name (a string)")
    tool = _safe_text(bounded(tool))  # a 10 MB name is stored and echoed as a marked prefix
    if not isinstance(arguments, dict):
        # The agent did call this tool: it is recorded under its name, with the raw arguments kept.
        return {"tool": tool, "arguments": {}, "raw": _raw_text(arguments)}, ToolError(
            code="invalid_arguments", message=f"{tool}: 'arguments' must be a JSON object"
        )
    extra = sorted(bounded(str(key)) for key in set(action) - {"tool", "arguments"})
    if extra:
        return None, ToolError(code="unparseable_action", message=f"unexpected keys in the action: {', '.join(extra)}")
    problem = json_problem(arguments)
    if problem is not None:
        return {"tool": tool, "arguments": {}, "raw": _raw_text(arguments)}, ToolError(
            code="invalid_arguments", message=f"{tool}: the arguments {problem}"
        )
    return {"tool": tool, "arguments": arguments if from_text else copy.deepcopy(arguments)}, None


def _raw_text(value: Any) -> str | None:
    """What the agent sent, as text for the trace (bounded), or ``None`` if it cannot be printed at all."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, default=lambda item: f"<{type(item).__name__}>")
        except (ValueError, RecursionError):  # circular, too deep, an integer too long to print
            return None
    return _safe_text(text[:MAX_TEXT])


def _answer_text(answer: Any) -> str:
    """The final answer as stored text: a string as is, any other JSON value as JSON (bounded)."""
    if not isinstance(answer, str):
        problem = json_problem(answer)
        answer = json.dumps(answer, ensure_ascii=False) if problem is None else f"<a final answer that {problem}>"
    return _safe_text(answer[:MAX_TEXT])


def _jsonable(value: Any, tool: str) -> tuple[Any, str, ToolError | None]:
    """A tool's result as a private copy of JSON values and its JSON text, or the error ``invalid_result``.

    Results are almost always JSON already (dicts, lists and scalars, often the database's own records):
    pydantic-core's Rust serialiser writes them and its parser reads them back as a copy (~3x faster than a
    Python walk), so that the trace never shares a record a later call changes. It also writes what JSON has no
    word for as pydantic does (models dumped, tuples and sets as lists, dates as ISO text, keys as text). A
    number that is not finite (NaN, infinity) or a string with a lone surrogate (no UTF-8 form) has no JSON text
    that an agent could read or the store keep: the call gets the tool error ``invalid_result`` (the domain's
    fault, shown as such). A result that is not JSON even so (an object, a circular value) is a bug in the
    tool's code, raised as such.
    """
    try:
        raw = pydantic_core.to_json(value)
    except pydantic_core.PydanticSerializationError:
        try:
            text = json.dumps(_to_json(value), ensure_ascii=False)
        except (TypeError, ValueError, RecursionError) as exc:  # a set, an object, a circular value
            raise MantraError(
                f"tool {tool!r} returned a value that is not JSON ({exc}); return dicts, lists, scalars or "
                "pydantic models"
            ) from None
    else:
        if b"NaN" not in raw and b"Infinity" not in raw:
            return pydantic_core.from_json(raw), raw.decode("utf-8"), None
        text = raw.decode("utf-8")
    problem = _json_text_problem(text)
    if problem is not None:
        message = f"{tool}: the tool returned {problem}, which JSON cannot carry (a fault of the tool, not the call)"
        return None, "null", ToolError(code="invalid_result", message=message)
    value = json.loads(text)
    return value, result_json(value), None  # the observations' one serializer: the export writes the same text


def _json_text_problem(text: str) -> str | None:
    """What keeps ``text`` (written by a serialiser that allows NaN and lone surrogates) from being JSON."""
    if "NaN" in text or "Infinity" in text:
        try:
            json.loads(text, parse_constant=_refuse_constant)
        except ValueError:
            return "a number that is not finite (NaN or infinity)"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "a string with a lone surrogate (no UTF-8 form)"
    return None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _to_json(value: Any) -> Any:
    """``value`` with pydantic models dumped, tuples as lists and dict keys as text (:func:`_json_key`)."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [_to_json(v) for v in value]
    if isinstance(value, dict):
        return {_json_key(k): _to_json(v) for k, v in value.items()}
    return value


def _json_key(key: Any) -> str:
    """A dict key as pydantic writes it: ``True`` -> ``"true"``, any other as ``str`` (``1`` -> ``"1"``)."""
    return ("true" if key else "false") if isinstance(key, bool) else str(key)
