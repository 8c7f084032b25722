"""The cross-validation queries over one encoding (paper Sec. "Cross-Validation Using SMT").

The world model and the checks are encoded once; every query is that base formula plus assumptions, on one
incremental solver. Two modes (``CaseSolver(mode=...)``), which differ in what a call the world model does not
allow means (:mod:`mantra_env.smt.encode` has both encodings):

``"refusal"`` (the default): the call is refused and the state is unchanged, as the env answers it with a
tool error. A trace is any sequence of calls; its *accepted* calls are those whose precondition held.

* **forward** ``C ∧ ¬(C_acc ∧ G)``: a trace that satisfies every check while the checks evaluated on its
  accepted calls alone fail, or the goal is missed: the checks let an agent pass on calls the world model
  refuses (paper Fig. 1: the only ``assign_warehouse_picker`` came before the inventory check), or pass
  without completing the task. A refused extra call the checks do not need (a second ``resume_line``, a call
  with junk arguments) is not a conflict: the agent still complied. NO-CALL atoms and conditional orderings
  are evaluated on accepted calls too; a forbidden call that was refused cannot make ``C_acc`` fail where
  ``C`` holds, so negative checks never yield a conflict by themselves.
* **backward** per check ``j``: ``ALLACC ∧ G ∧ ∧_{k≠j} c_k ∧ ¬c_j`` over traces whose calls are all accepted.
* **compliant witness** ``ALLACC ∧ G ∧ C``: the shortest such trace (only accepted calls, so the oracle never
  makes a call the world model refuses).
* **alternative witness** ``ALLACC ∧ G ∧ C ∧ ALT(plan)``: a second compliant trace that writes another tool or
  another named value in place of one of a stored plan's writes (as many writes; an extra write is not an
  alternative); ``infeasible`` means the plan's writes are unique but for free text. ``variations`` lists the
  plan's one-write variations (``tests/agents/test_alternative.py`` replays them on every shipped suite).

On all-accepted traces the two encodings coincide, so backward and witness statuses are those of the paper.

``"paper"``: the paper's formulas, every postcondition asserted whether or not the precondition held:

* **forward** ``C ∧ W_bg ∧ W_post ∧ ¬(W_pre ∧ G)``: a trace that satisfies every check and the rest of the
  world model but breaks a precondition of a tool the checks mention, or (if the model has a goal) ends
  without reaching it. It also reports refused extra calls (a second non-idempotent call, junk arguments),
  which is why the paper's validated cases carry guard checks such as ``NO-CALL X AFTER CALL X``.
* **backward** per check ``j``: ``W ∧ G ∧ ∧_{k≠j} c_k ∧ ¬c_j``: the world model admits a trace that only
  check ``j`` rejects, so ``j`` may be over-restrictive.
* **compliant witness** ``W ∧ G ∧ C``: the shortest such trace, which proves the case solvable and drives the
  oracle agent.

Every query returns a :class:`QueryResult`: ``consistent`` / ``conflict`` with a :class:`Witness` (for the
compliant-witness query: ``found`` / ``infeasible``), or ``unknown`` when the solver hits the time limit. Each
solver lives in its own Z3 context, so separate instances may be used from separate threads.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any, Concatenate, Literal, ParamSpec, TypeAlias, TypeVar

import z3
from pydantic import BaseModel, ConfigDict, Field, JsonValue

from mantra_env.case import CaseCheck
from mantra_env.checks import Check, atoms, format_check
from mantra_env.errors import MantraError
from mantra_env.smt.encode import SEMANTICS, UNSTATED_BASE, Encoding, EncodingError, Semantics
from mantra_env.smt.layout import Column, Slot, id_value, slot_sort, value_key, z3_sort
from mantra_env.smt.values import ModelValues
from mantra_env.tools import ToolSpec, call_problem, list_order_problem
from mantra_env.worldmodel import WorldModel, check_model, format_expr, parse_model
from mantra_env.worldmodel.ast import ArrayType, EnumType, ScalarType
from mantra_env.worldmodel.typecheck import CheckedModel

DEFAULT_TIMEOUT_MS = 20_000
# Making a witness readable (``CaseSolver._readable``) is cosmetic: a few short checks at most.
READABLE_TIMEOUT_MS = 2_000
# A query's budget is counted in Z3's resource units (``rlimit``), not in seconds, so that its answer never
# depends on the machine or on its load: a suite regenerated on a slow CI runner must be byte-identical to the
# shipped one. Z3 spends 1-2 million units per second on small benchmarks/smt.py cases and more on large ones,
# so WORK_PER_MS is set well above that: the budget must never stop a query a time limit of the same name let
# finish (a replay would then ask requests its recording does not hold). The wall clock, WALL_CLOCK_FACTOR
# times the budget, only stops a query on a machine far slower than this one.
WORK_PER_MS = 10_000
WALL_CLOCK_FACTOR = 50
# Z3's memory: a check past MANTRA_SOLVER_MEMORY_MB (Z3's ``max_memory``, which it tests while it searches)
# answers ``unknown`` ("max. memory exceeded") and Z3 stays usable, where an uncapped check grew to 21 GB in 40 s
# on a world model of huge constants and the kernel killed the whole generation run. Z3's global
# ``memory_max_size`` at BACKSTOP_FACTOR times the cap stops an allocation the search does not test (also an
# ``unknown`` inside a check; a parse past it would crash, as the kernel would have killed it). A query that
# stays under the cap answers exactly as without it, so recordings replay alike.
MEMORY_VARIABLE = "MANTRA_SOLVER_MEMORY_MB"
DEFAULT_MEMORY_MB = 8_192
BACKSTOP_FACTOR = 2
READABLE_ROUNDS = 4
Mode: TypeAlias = Semantics
# Chosen on the conflict corpus (tests/corpus/conflict_*): see ARCHITECTURE.md.
DEFAULT_MODE: Mode = "refusal"
MODES = SEMANTICS
# A witness value no literal names (any other string, an out-of-range enum) is shown as "<value #n>" (n counts such
# values in order of appearance) / "<enum #n>";
# a String fact the scenario does not state (refusal mode), in the witness's initial state, as "<unstated #n>".
PLACEHOLDER_PREFIXES = ("<value #", "<enum #", "<unstated #")


def is_placeholder(value: object) -> bool:
    """Whether a decoded witness value names no literal (``<value #n>``...): nothing in the case asks for it."""
    return isinstance(value, str) and value.startswith(PLACEHOLDER_PREFIXES)


Status = Literal["consistent", "conflict", "found", "infeasible", "unknown"]
INTERRUPTED_REASONS = frozenset({"interrupted", "interrupted from keyboard"})
"""Z3's reasons for an ``unknown`` that a stop caused (``Context.interrupt``, Ctrl-C), not the query: no answer to
record or memoise. Not "canceled": Z3 says that when the work budget (rlimit) runs out, a deterministic answer."""


def _z3_message(error: z3.Z3Exception) -> str:
    """The text of a Z3 error (z3py keeps the C API's message as bytes)."""
    value = error.value
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


_memory_capped: int | None = None
_memory_lock = threading.Lock()


def solver_memory_mb(environ: Mapping[str, str] = os.environ) -> int:
    """The cap on Z3's memory in MB: ``MANTRA_SOLVER_MEMORY_MB`` (0: no cap), default 8192.

    Raises:
        SmtInputError: if the variable is not a whole number of MB.
    """
    text = environ.get(MEMORY_VARIABLE, "").strip()
    if not text:
        return DEFAULT_MEMORY_MB
    if not text.isdigit():
        raise SmtInputError(
            f"{MEMORY_VARIABLE}={text!r} is not a whole number of megabytes: set it to e.g. {DEFAULT_MEMORY_MB} "
            "(0 for no cap) or unset it"
        )
    return int(text)


def cap_solver_memory() -> int:
    """Set Z3's global backstop from :func:`solver_memory_mb` (once per value: every solver's limits call this)
    and return the cap, the ``max_memory`` of each solver."""
    global _memory_capped
    megabytes = solver_memory_mb()
    with _memory_lock:
        if _memory_capped != megabytes:
            z3.set_param("memory_max_size", megabytes * BACKSTOP_FACTOR)
            _memory_capped = megabytes
    return megabytes


class SmtInputError(MantraError, ValueError):
    """The world model, checks or initial state cannot be encoded (the message says which and why)."""


class WitnessCall(BaseModel):
    """One step of a witness trace."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str
    args: dict[str, JsonValue] = Field(default_factory=dict)


class Witness(BaseModel):
    """A concrete bounded trace the solver found, the initial state it chose, and what the trace violates."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    calls: list[WitnessCall]
    initial_state: dict[str, JsonValue] = Field(default_factory=dict)
    violations: list[str] = Field(default_factory=list)

    def render(self) -> str:
        """The trace as one call per line, then the violations (what a judge or reviewer reads)."""
        lines = [
            f"{i}. {call.tool}({', '.join(f'{k}={json.dumps(v)}' for k, v in call.args.items())})"
            for i, call in enumerate(self.calls)
        ] or ["(no calls)"]
        return "\n".join(lines + [f"violates: {v}" for v in self.violations])


Change: TypeAlias = Literal["value", "text", "unread", "tool", "trace"]
# A string argument's other value in an alternative witness: the plan's text, recognisably varied.
OTHER_TEXT = "{} (second witness)"


class Alternative(BaseModel):
    """A compliant trace that writes something in place of one of the plan's writes
    (:meth:`CaseSolver.variations`): at ``step``, ``argument`` takes another value the case names
    (``value``), another text (``text``), or its schema's other value where the world model never reads it and
    no check pins it (``unread``), or another tool is called (``tool``); ``trace``: the trace
    :meth:`CaseSolver.alternative_witness` found, when no one-write variation of another value or tool fits."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    step: int | None = None
    change: Change
    argument: str | None = None
    calls: list[WitnessCall]


class QueryResult(BaseModel):
    """The outcome of one query."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    query: Literal["forward", "backward", "witness", "alternative"]
    status: Status
    check_id: str | None = Field(default=None, description="The audited check (backward queries).")
    bound: int
    witness: Witness | None = None
    reason: str = Field(default="", description="Why the solver gave up (unknown).")
    seconds: float = Field(default=0.0, description="Solver time of the query (witness shortening excluded).")


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _timed_pass(
    name: str,
) -> Callable[[Callable[Concatenate[CaseSolver, _P], _R]], Callable[Concatenate[CaseSolver, _P], _R]]:
    """Adds the wall time of a witness pass to ``CaseSolver.pass_seconds[name]`` when that is a dict (a
    benchmark's breakdown, benchmarks/revalidate.py); with the default ``None`` it is one attribute test."""

    def wrap(method: Callable[Concatenate[CaseSolver, _P], _R]) -> Callable[Concatenate[CaseSolver, _P], _R]:
        def timed(self: CaseSolver, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
            if self.pass_seconds is None:
                return method(self, *args, **kwargs)
            started = time.perf_counter()
            try:
                return method(self, *args, **kwargs)
            finally:
                self.pass_seconds[name] = self.pass_seconds.get(name, 0.0) + time.perf_counter() - started

        timed.__doc__, timed.__name__ = method.__doc__, method.__name__
        return timed

    return wrap


class CaseSolver:
    """The queries of one case: a world model, its check set, a bound and an initial state.

    Args:
        model: the world model (text, AST or type-checked model; ``None`` for checks alone).
        checks: the check set (``CaseCheck`` entries keep their ids; plain checks are named ``c0``, ``c1``...).
        bound: the trace bound ``h``.
        initial: the scenario valuation; entries named like state variables pin the initial state.
        tools: the domain's tool specs (types the parameters; without them parameters are typed by use).
        timeout_ms: per query, as a deterministic work budget (``timeout_ms * WORK_PER_MS`` Z3 resource units,
            a generous multiple of what that many milliseconds buy here); a query that runs out returns
            ``unknown``, on any machine alike.
        mode: ``"refusal"`` (default: refused calls leave the state unchanged) or ``"paper"`` (the paper's
            formulas); see the module docstring.
        list_bound: element slots per list argument (default: the longest list the inputs name, at least 3); a
            query that needs longer lists answers ``unknown`` and says so.
        refuse_invented_ids: in the refusal mode, leave out of every trace a call whose identifier argument names
            no record anybody could know (``Encoding``; off by default, a generation config's
            ``validation.refuse_invented_ids``).
        canonical_lists: the compliant witness holds each list argument's items in canonical order
            (:meth:`_ordered`), so it is shaped at its own length like any other witness; off by default (a
            generation config's ``validation.canonical_lists``: the order of shipped plans is the solver's).
        witness_at_own_length: the compliant witness is found and shaped on the case encoded at the witness's
            own length (:meth:`_first_fit`, :meth:`_shortened`): minutes faster on large cases, the same calls
            up to the solver's free choices (the order of two calls of one tool, of list items), which the two
            encodings may make differently. Off by default (a generation config's
            ``validation.witness_at_own_length``): every pass at the bound, on this solver after its other
            queries, as the shipped telecom, airline and operations suites were validated.
        array_relevancy: Z3 filters by relevancy where the world model writes arrays (:attr:`relevancy`): the same
            answers, other witnesses; off by default (a generation config's ``validation.array_relevancy``, recorded
            in the case: the shipped suites were validated without it).
        conflicts_at_own_length: a forward or backward conflict is looked for on the case encoded at bounds 2, 4,
            8, ... first and its witness shortened on encodings at its own length (:meth:`_conflict`): the same
            answers, witnesses up to the solver's free choices; off by default (a generation config's
            ``validation.conflicts_at_own_length``: the shipped validation histories were recorded at the bound).
        short_conflicts_first: a forward or backward conflict is looked for among the traces of at most 4, 8, 16,
            ... calls below the bound first, on this solver (an assumption that step ``n`` is a no-op; no other
            encoding, :meth:`_short_conflict`): the same answers, shorter witnesses that are the solver's other
            choices, and a third less solver work at h=64 on ``benchmarks/smt.py``; not where a postcondition writes
            an array, whose set updates at the open steps made it slower there (its list row); a consistent query pays
            for the short checks (a few percent on an all-consistent suite). Off by default (a
            generation config's ``validation.short_conflicts_first``: the shipped validation histories were
            recorded at the bound); ``conflicts_at_own_length`` already asks those lengths, so with it this asks
            nothing more.

    Raises:
        DslSyntaxError, DslTypeError: if the model does not parse or type-check.
        SmtInputError: if the checks or the initial state do not fit the model or the tools.
    """

    def __init__(
        self,
        model: str | WorldModel | CheckedModel | None,
        checks: Sequence[CaseCheck | Check],
        bound: int,
        initial: Mapping[str, Any] | None = None,
        tools: Sequence[ToolSpec] | Mapping[str, ToolSpec] | None = None,
        timeout_ms: int = DEFAULT_TIMEOUT_MS,
        mode: Mode = DEFAULT_MODE,
        list_bound: int | None = None,
        refuse_invented_ids: bool = False,
        canonical_lists: bool = False,
        witness_at_own_length: bool = False,
        array_relevancy: bool = False,
        conflicts_at_own_length: bool = False,
        short_conflicts_first: bool = False,
    ) -> None:
        if mode not in MODES:
            raise SmtInputError(f"unknown query mode {mode!r}: use one of {', '.join(MODES)}")
        self.mode = mode
        source = model if isinstance(model, str) else None
        if isinstance(model, str):
            model = parse_model(model)
        checked = model if isinstance(model, CheckedModel) else check_model(model or WorldModel(), tools, source)
        entries = [c if isinstance(c, CaseCheck) else CaseCheck(id=f"c{i}", check=c) for i, c in enumerate(checks)]
        self.check_ids = [entry.id for entry in entries]
        if len(set(self.check_ids)) != len(self.check_ids):
            raise SmtInputError("check ids must be unique within a check set")
        _validate_checks(entries, checked)
        try:
            started = time.perf_counter()
            self.encoding = Encoding(
                checked,
                [entry.check for entry in entries],
                bound,
                initial,
                semantics=mode,
                list_bound=list_bound,
                refuse_invented_ids=refuse_invented_ids,
            )
            self.build_seconds = time.perf_counter() - started
        except EncodingError as error:
            raise SmtInputError(str(error)) from None
        self.timeout_ms = timeout_ms
        self.canonical_lists = canonical_lists
        self.witness_at_own_length = witness_at_own_length
        self.array_relevancy = array_relevancy
        self.conflicts_at_own_length = conflicts_at_own_length
        self.short_conflicts_first = short_conflicts_first
        # Z3's relevancy filtering: off (measured 2-3x faster on benchmarks/smt.py) unless array_relevancy and a
        # postcondition writes an array, where it keeps the set updates of the tools a step does not call out of
        # the array theory (airline s023-1 at h=16: canceled at 200M work units without, 10M with)
        self.relevancy = 2 if array_relevancy and self.encoding.writes_arrays else 0
        # what :meth:`_at_bound` needs to encode the same case at another bound
        self._inputs = (checked, entries, initial, mode, self.encoding.layout.list_bound, refuse_invented_ids)
        self._shorter: dict[int, CaseSolver] = {}  # this case at shorter bounds, by bound (:meth:`_at_bound`)
        cap_solver_memory()  # before Z3 allocates for this case: its global backstop follows the variable
        self._ctx = z3.Context()
        self._solver: z3.Solver | None = None
        self._consts: dict[str, z3.ExprRef] = {}  # building a Z3 constant costs more than a dict lookup
        self._others: dict[int, int] = {}  # out-of-table Id values of the witness being decoded -> their ordinal
        self._read: ModelValues | None = None  # the values of the model last read (:meth:`_values`)
        self._preconditions: dict[tuple[str, int], list[z3.BoolRef]] = {}  # (tool, step) -> parsed (:meth:`_pre_at`)
        self._decls: dict[str, z3.FuncDeclRef] = {}  # the declarations :meth:`_pre_at` parses with
        self.pass_seconds: dict[str, float] | None = None
        """Set to ``{}`` to collect the wall time of the shortest, readable and canonical passes by name."""

    # --- solver --------------------------------------------------------------------------------------------------

    @property
    def solver(self) -> z3.Solver:
        if self._solver is None:
            started = time.perf_counter()
            solver = z3.Solver(ctx=self._ctx)
            self._limit(solver, self.timeout_ms)
            # Measured on benchmarks/smt.py: the dense simplex and no relevancy filtering solve these
            # formulas 2-3x faster than Z3's defaults.
            solver.set("arith.solver", 2)
            solver.set("relevancy", self.relevancy)
            if not self.encoding.extensional:
                solver.set("array.extensional", False)
            solver.from_string(self.encoding.text)  # about half the time of parse_smt2_string + add
            self._solver = solver
            self.build_seconds += time.perf_counter() - started
        return self._solver

    @staticmethod
    def _limit(solver: z3.Solver, budget_ms: int) -> None:
        """Each check of ``solver`` may spend ``budget_ms`` worth of Z3 resource units (``rlimit`` counts per
        check), with a wall clock only as a far safety net."""
        solver.set("rlimit", budget_ms * WORK_PER_MS)
        solver.set("timeout", budget_ms * WALL_CLOCK_FACTOR)
        # Z3 takes Ctrl-C for itself by default, even in a worker thread: the check ends 'interrupted from
        # keyboard', Python never sees the KeyboardInterrupt, and a generation run went on recording that answer.
        solver.set("ctrl_c", False)
        megabytes = cap_solver_memory()
        if megabytes:
            solver.set("max_memory", megabytes)

    def _bool(self, name: str) -> z3.BoolRef:
        found = self._consts.get(name)
        if found is None:
            found = self._consts[name] = z3.Bool(name, self._ctx)
        return found

    def _int(self, name: str) -> z3.ArithRef:
        found = self._consts.get(name)
        if found is None:
            found = self._consts[name] = z3.Int(name, self._ctx)
        return found

    def _run(
        self,
        query: Literal["forward", "backward", "witness", "alternative"],
        assumptions: list[z3.BoolRef],
        check_id: str | None,
    ) -> tuple[QueryResult, z3.ModelRef | None]:
        started = time.perf_counter()
        try:
            answer = self.solver.check(*assumptions)
        except z3.Z3Exception as error:  # e.g. interrupted, out of memory; never propagate
            return self._result(query, "unknown", check_id, started, reason=_z3_message(error)), None
        if answer == z3.unknown:
            return self._result(query, "unknown", check_id, started, reason=self.solver.reason_unknown()), None
        if answer == z3.unsat:
            fit = self._fit()
            if fit and self.solver.check(*(a for a in assumptions if not a.eq(fit[0]))) == z3.sat:
                reason = (
                    f"the answer needs a list argument longer than the list bound {self.encoding.layout.list_bound}"
                    "; raise list_bound"
                )
                return self._result(query, "unknown", check_id, started, reason=reason), None
            status: Status = "infeasible" if query in ("witness", "alternative") else "consistent"
            return self._result(query, status, check_id, started), None
        found: Status = "found" if query in ("witness", "alternative") else "conflict"
        return self._result(query, found, check_id, started), self.solver.model()

    def _result(
        self, query: Any, status: Status, check_id: str | None, started: float, reason: str = ""
    ) -> QueryResult:
        return QueryResult(
            query=query,
            status=status,
            check_id=check_id,
            bound=self.encoding.bound,
            reason=reason,
            seconds=time.perf_counter() - started,
        )

    # --- queries -----------------------------------------------------------------------------------------------

    def forward(self, shortest: bool = False) -> QueryResult:
        """The forward conflict query of the solver's mode; ``shortest`` shortens a conflict's witness and makes
        its arguments readable (:meth:`_readable`; a few more solver calls: worth it when a person or a judge
        reads the witness)."""
        focus = [tool for tool in self.encoding.layout.tools if tool in self.encoding.check_tools]
        # FOCUS (paper: focus preconditions ∧ goal; refusal: checks on accepted calls ∧ goal) is part of the
        # base formula; assuming its negation instead of asserting it under push/pop keeps the solver in one
        # incremental state across all queries.
        assumptions = [*self._checks(), z3.Not(self._bool("FOCUS")), *self._fit()]
        result, solver, model = self._conflict("forward", assumptions, None, shortest)
        if model is not None:
            result = result.model_copy(update={"witness": solver._witness(model, focus, goal=True)})
        return result

    def backward(self, check: int | str, shortest: bool = False) -> QueryResult:
        """The backward audit of one check (by index or id); ``shortest`` as for :meth:`forward`."""
        j = check if isinstance(check, int) else self.check_ids.index(check)
        others = [c for n, c in enumerate(self._checks()) if n != j]
        assumptions = [*others, z3.Not(self._bool(f"c_{j}")), *self._world(), *self._fit()]
        result, solver, model = self._conflict("backward", assumptions, self.check_ids[j], shortest)
        if model is not None:
            witness = solver._witness(model, (), goal=False)
            violation = f"check {self.check_ids[j]}: {format_check(self.encoding.checks[j])}"
            result = result.model_copy(update={"witness": witness.model_copy(update={"violations": [violation]})})
        return result

    def _conflict(
        self,
        query: Literal["forward", "backward"],
        assumptions: list[z3.BoolRef],
        check_id: str | None,
        shortest: bool,
    ) -> tuple[QueryResult, CaseSolver, z3.ModelRef | None]:
        """The answer to a conflict query, and the solver and model of its witness (shortened and made readable
        with ``shortest``). With ``conflicts_at_own_length`` the case encoded at bounds 2, 4, 8, ... below the
        bound is asked first (:meth:`_at_bound`): a trace found there is a trace at the bound (its remaining steps
        no-ops, which keep the state, match no atom and are accepted), found without the open steps Z3 wandered
        through (airline s024-4: a three-call conflict, out of 200M work units at h=16, 0.2 s at bound 3); and it
        is shortened on encodings at its own length (:meth:`_shortened`). A consistent answer still comes from the
        bound."""
        if self.conflicts_at_own_length:
            started, bound = time.perf_counter(), 2
            while bound < self.encoding.bound:
                short = self._at_bound(bound)
                try:
                    answer = short.solver.check(*short._translated(assumptions))
                except z3.Z3Exception:
                    break
                if answer == z3.sat:
                    result = self._result(query, "conflict", check_id, started)
                    return (
                        result,
                        *short._shaped_conflict(short._translated(assumptions), short.solver.model(), shortest),
                    )
                if answer != z3.unsat:
                    break  # out of budget at this bound: the bound answers, as without the mode
                bound *= 2
        elif self.short_conflicts_first and not self.encoding.writes_arrays:
            started = time.perf_counter()
            found = self._short_conflict(assumptions)
            if found is not None:
                result = self._result(query, "conflict", check_id, started)
                return (
                    result,
                    self,
                    self._readable(assumptions, self._shortest(assumptions, found)) if shortest else found,
                )
        result, model = self._run(query, assumptions, check_id)
        if model is None:
            return result, self, None
        if self.conflicts_at_own_length:
            return (result, *self._shaped_conflict(assumptions, model, shortest))
        return result, self, self._readable(assumptions, self._shortest(assumptions, model)) if shortest else model

    def _short_conflict(self, assumptions: list[z3.BoolRef]) -> z3.ModelRef | None:
        """A model of ``assumptions`` (a conflict query) with at most 4, else 8, 16, ... calls below the bound, or
        None: no such trace, or a check gave up (the query at the bound then answers, as without the mode).

        Why: a trace of ``n`` calls is a trace at the bound (its remaining steps no-ops), and a conflict is usually
        a few calls, but at the bound Z3 fills every step and carries each one's state through the search (on
        ``benchmarks/smt.py`` at h=64: 64-call witnesses, 4.7M work units for a case's audit; 3.0M this way, the
        witnesses 4-8 calls). Asked of this solver under an assumption, not of shorter encodings
        (``conflicts_at_own_length``), it costs no encoding: no loss where the bound is small. But the open steps'
        terms stay in the formula, and where they hold array updates the short checks cost more than they save
        (the list row of ``benchmarks/smt.py``: 141 ms to 201 ms at h=16 in refusal mode), so such a model is not
        asked this way (:meth:`_conflict`)."""
        length = 4
        while length < self.encoding.bound:
            try:
                answer = self.solver.check(*assumptions, self._int(f"t_{length}") == self.encoding.noop)
            except z3.Z3Exception:
                return None
            if answer == z3.sat:
                return self.solver.model()
            if answer != z3.unsat:
                return None
            length *= 2
        return None

    def _shaped_conflict(
        self, assumptions: list[z3.BoolRef], model: z3.ModelRef, shortest: bool
    ) -> tuple[CaseSolver, z3.ModelRef]:
        """A conflict witness of this solver, with ``shortest`` shortened on encodings at its own length and made
        readable there."""
        if not shortest:
            return self, model
        solver, model = self._shortened(assumptions, model)
        return solver, solver._readable(solver._translated(assumptions), model)

    def backward_all(self, shortest: bool = False) -> list[QueryResult]:
        """The backward audit of every check, in order."""
        return [self.backward(j, shortest) for j in range(len(self.check_ids))]

    def compliant_witness(self) -> QueryResult:
        """The canonical compliant trace: among the traces (within the bound) that satisfy the world model, the
        goal and every check, the shortest, then the one whose reads come as early as the world model allows,
        then the first in tool-index order step by step (with ``canonical_lists``, then each list argument's
        items in canonical order, :meth:`_ordered`). It is reproducible, and since a read is taken wherever one
        fits, the oracle replaying it reads before it writes whenever the model allows.

        Without ``witness_at_own_length`` every pass is made at the bound on this solver, whose earlier queries
        (the backward audits) steer the choices no pass fixes, such as which of two reads of one tool comes first;
        with it, the passes run on the case encoded at the witness's own length (the same calls up to those
        choices, and no open steps to search: minutes faster on large cases)."""
        assumptions = [*self._checks(), *self._world(), *self._fit()]
        if not self.witness_at_own_length:
            # every pass at the bound, on this solver (after the forward and backward queries it answered): the
            # witness the shipped telecom, airline and operations recordings hold (their validation histories)
            result, found = self._run("witness", assumptions, None)
            if found is None:
                return result
            return result.model_copy(update={"witness": self._shaped(assumptions, self._shortest(assumptions, found))})
        started = time.perf_counter()
        first, found = self._first_fit(assumptions), None
        if first is not None:  # the shortest trace, found below the bound
            result, (solver, model) = self._result("witness", "found", None, started), first
        else:
            result, found = self._run("witness", assumptions, None)
            if found is None:
                return result
            solver, model = self._shortened(assumptions, found)
        witness = solver._shaped(solver._translated(assumptions), model)
        if solver is not self and not self.canonical_lists and self._lists_in(witness):
            # Without canonical_lists the order of a list argument's items is the solver's free choice: shaped
            # at another length, two shipped retail plans came out permuted. So a witness with a list argument is
            # shaped at the bound as before, and stored oracle plans stay what they are (this solver has made no
            # other query since its first).
            if found is None:
                result, found = self._run("witness", assumptions, None)
                if found is None:  # cannot be: a shorter encoding found a trace
                    return result
            witness = self._shaped(assumptions, self._shortest(assumptions, found))
        return result.model_copy(update={"witness": witness})

    def _shaped(self, assumptions: list[z3.BoolRef], model: z3.ModelRef) -> Witness:
        model = self._canonical(assumptions, model)
        if self.canonical_lists:
            model, pinned = self._ordered(assumptions, model)
            assumptions = [*assumptions, *pinned]  # the readable pass solves again: it keeps the items' order
        # the scenario's own values where they fit; a value nothing asks for is marked (the oracle leaves it to
        # the case's bindings), so no argument carries another parameter's literal by accident
        model = self._readable(assumptions, model)
        return self._witness(model, (), goal=False)

    @_timed_pass("canonical")
    def _ordered(self, assumptions: list[z3.BoolRef], model: z3.ModelRef) -> tuple[z3.ModelRef, list[z3.BoolRef]]:
        """The same calls with each list argument's items in canonical order where the world model allows:
        step by step, argument by argument in the tool's parameter order, the items sorted by
        :meth:`_item_key` (named values by their JSON text, numbers by value, unnamed values last) if that
        order fits, else as the solver has them. Returns the model and one literal per list argument that pins
        its items, for the passes after this one (which solve again) to keep.

        Why: the items' order is the solver's free choice, which differs between encodings of the same case
        (at the bound and at the witness's own length); sorted, it is the same in both. A list paired by
        position with another (``exchange(item_ids, new_item_ids)``) is sorted first and the other follows
        the pairs (its own sort does not fit then)."""
        layout, length = self.encoding.layout, self._length(model)
        fixed = [self._int(f"t_{i}") == model.eval(self._int(f"t_{i}"), model_completion=True) for i in range(length)]
        if length < self.encoding.bound:
            fixed.append(self._int(f"t_{length}") == self.encoding.noop)
        pinned: list[z3.BoolRef] = []
        for i in range(length):
            tool = layout.tools[model.eval(self._int(f"t_{i}"), model_completion=True).as_long()]
            for slot in layout.slots[tool].values():
                if slot.sort != "List" or (slot.optional and not self._true(model, slot.flag(i))):
                    continue
                count = min(max(model.eval(self._int(slot.var(i)), model_completion=True).as_long(), 0), slot.width)
                items = [
                    [model.eval(self._item(c, i, k), model_completion=True) for c in slot.columns] for k in range(count)
                ]
                order = sorted(range(count), key=lambda k: self._item_key(slot, items[k]))
                pin = self._pin_items(slot, i, [items[k] for k in order])
                found = self._fits([*assumptions, *fixed, *pinned, pin]) if order != sorted(order) else model
                if found is None:  # the world model needs the solver's order (or the budget ran out): keep that
                    pin = self._pin_items(slot, i, items)
                else:
                    model = found
                pinned.append(pin)
        return model, pinned

    def _pin_items(self, slot: Slot, step: int, items: Sequence[Sequence[z3.ExprRef]]) -> z3.BoolRef:
        """A literal that makes the list ``slot`` at ``step`` hold exactly ``items`` (values per column), in order."""
        held = [
            self._item(c, step, k) == value
            for k, item in enumerate(items)
            for c, value in zip(slot.columns, item, strict=True)
        ]
        return self._guard(f"order_{step}_{slot.index}", z3.And(self._int(slot.var(step)) == len(items), *held))

    def _item(self, column: Column, step: int, k: int) -> z3.ExprRef:
        """The Z3 constant of item ``k`` of a list column at ``step``."""
        name = column.var(step, k)
        if column.sort == "Bool":
            return self._bool(name)
        return z3.Real(name, self._ctx) if column.sort == "Real" else self._int(name)

    def _item_key(self, slot: Slot, item: Sequence[z3.ExprRef]) -> tuple[tuple[int, Fraction, str], ...]:
        """The canonical sort key of a list item (its columns' values in ``slot``'s column order): numbers and
        Booleans by value, enum members and named strings by their JSON text, then unnamed values (the solver's
        integers, which name nothing) last."""
        key = []
        for column, value in zip(slot.columns, item, strict=True):
            if column.sort == "Bool":
                key.append((0, Fraction(int(z3.is_true(value))), ""))
                continue
            number = value.as_fraction() if column.sort == "Real" else Fraction(value.as_long())
            if column.enum is not None and 0 <= number < len(column.enum):
                key.append((1, Fraction(0), json.dumps(column.enum[int(number)])))
            elif column.sort == "Id" and int(number) in self.encoding.layout.by_id:
                key.append((1, Fraction(0), self.encoding.layout.by_id[int(number)]))
            else:
                key.append((0 if column.sort in ("Int", "Real") and column.enum is None else 2, number, ""))
        return tuple(key)

    def _lists_in(self, witness: Witness) -> bool:
        """Some call of ``witness`` passes a list argument."""
        slots = self.encoding.layout.slots
        return any(
            slots[call.tool][name].sort == "List"
            for call in witness.calls
            for name in call.args
            if name in slots[call.tool]
        )

    @_timed_pass("shortest")  # the length search: it replaced the binary search of _shortest on most cases
    def _first_fit(self, assumptions: list[z3.BoolRef]) -> tuple[CaseSolver, z3.ModelRef] | None:
        """The case encoded at the first length ``0, 1, 2, ...`` below the bound that admits a trace of
        ``assumptions`` (literals of the base formula), with its model: a shortest trace, since every shorter
        encoding answered unsat (length 0: the length-1 encoding with an empty trace). None if none does below
        the bound, or one gives up: the query at the bound then answers, as before.

        Why: a sat query at the bound carries every open step (airline s011-4: 33 s for a two-call witness at
        h=16); short encodings answer unsat quickly and sat at once (see :meth:`_shortened`)."""
        for length in range(self.encoding.bound):
            solver = self._at_bound(max(length, 1))
            empty = [solver._int("t_0") == solver.encoding.noop] if length == 0 else []  # no encoding has bound 0
            try:
                answer = solver.solver.check(*solver._translated(assumptions), *empty)
            except z3.Z3Exception:
                return None
            if answer == z3.sat:
                return solver, solver.solver.model()
            if answer != z3.unsat:
                return None
        return None

    @_timed_pass("shortest")
    def _shortened(self, assumptions: list[z3.BoolRef], model: z3.ModelRef) -> tuple[CaseSolver, z3.ModelRef]:
        """As :meth:`_shortest` (``assumptions`` are literals of the base formula), but each candidate length
        ``m`` is asked of the same case encoded at bound ``m``, and the answer is that encoding with a model of
        the shortest length: the solver to shape the witness in (:meth:`_canonical`, :meth:`_readable`).

        Why: a trace of length ``m`` at bound ``h`` is the same trace at bound ``m`` (steps from ``m`` on are
        no-ops, which keep the state, match no atom and are accepted; the goal is read at the last boundary),
        so every answer is the same; but at ``h`` each query still carries ``h - m`` open steps, and Z3 spent
        up to minutes per query on them (airline s023-4: 558 s for its canonical witness at h=16, 0.3 s at its
        own length 4; s005-1: 116 s for one length query). An encoding that gives up keeps the trace found so
        far, as :meth:`_shortest` does."""
        best: tuple[CaseSolver, z3.ModelRef] = (self, model)
        low, high = 0, self._length(model)  # the shortest length is in [low, high]; ``high`` is feasible
        while low < high:
            middle = (low + high) // 2
            if middle == 0:  # no encoding has bound 0: ask for an empty trace here
                solver = self
                extra = [self._int("t_0") == self.encoding.noop]
            else:
                solver, extra = self._at_bound(middle), []
            try:
                answer = solver.solver.check(*solver._translated(assumptions), *extra)
            except z3.Z3Exception:
                break
            if answer == z3.sat:
                best = (solver, solver.solver.model())
                high = solver._length(best[1])
            elif answer == z3.unsat:
                low = middle + 1
            else:
                break  # out of time while shortening: keep the trace found so far
        if high in (0, best[0].encoding.bound):
            return best
        short = self._at_bound(high)
        model = short._fits(short._translated(assumptions))
        return (short, model) if model is not None else best

    def _at_bound(self, bound: int) -> CaseSolver:
        """This case encoded at ``bound`` (made once per bound)."""
        if bound == self.encoding.bound:
            return self
        found = self._shorter.get(bound)
        if found is None:
            checked, entries, initial, mode, list_bound, refuse_invented_ids = self._inputs
            found = CaseSolver(
                checked,
                entries,
                bound,
                initial,
                None,
                self.timeout_ms,
                mode,
                list_bound,
                refuse_invented_ids,
                self.canonical_lists,
                self.witness_at_own_length,
                self.array_relevancy,
                self.conflicts_at_own_length,
                self.short_conflicts_first,
            )
            found.pass_seconds = self.pass_seconds  # passes run on the shorter encoding are this solver's passes
            found._shorter = self._shorter  # one encoding per bound for the case, whichever solver asks for it
            self._shorter[bound] = found
        return found

    def _translated(self, literals: Sequence[z3.BoolRef]) -> list[z3.BoolRef]:
        """Assumption literals of another solver of the same case, as this solver's (matched by name)."""
        return [literal if literal.ctx is self._ctx else literal.translate(self._ctx) for literal in literals]

    def alternative_witness(self, plan: Sequence[WitnessCall]) -> QueryResult:
        """Is there a second compliant trace (as :meth:`compliant_witness`: every call accepted, the goal, every
        check) that writes something in place of what ``plan`` writes? One with as many write calls as
        ``plan``, one of which matches no write of ``plan`` as a replay passes it: another tool (the other branch
        of an OR over writes), or another value of an argument that the case names (a check's literal, a stated
        fact, an enum's value, a number); never the solver's unnamed "any other string", which no replay can
        pass, and never a named value in place of free text (a summary replaced by a reservation id tells
        nothing). ``found`` comes with that trace (shortened within a small budget, its strings made readable,
        what the solver leaves open taken from ``plan`` at the same step); ``infeasible`` means unique: within
        the bound, every compliant trace writes what ``plan`` writes but for free text, which the world model
        tells apart from the case's values only (:meth:`variations` varies it).

        Raises:
            SmtInputError: the solver has no tool specs (it needs the read/write kinds), or ``plan`` calls a
                tool neither the world model nor a check names.
        """
        layout, tools = self.encoding.layout, self._plan_tools(plan)
        writes = [layout.index[name] for name in layout.tools if name in tools and tools[name].kind == "write"]
        planned = [call for call in plan if tools[call.tool].kind == "write"]
        steps = range(self.encoding.bound)
        false = z3.BoolVal(False, self._ctx)
        writing = [z3.Or([false, *(self._int(f"t_{i}") == k for k in writes)]) for i in steps]
        novel = [z3.And(writing[i], *(self._differs(i, call) for call in planned)) for i in steps]
        # as many writes as the plan: a write in place of one of the plan's, not one more (an extra write is
        # what the unrequested-write rule exists to fail, and no variation of the plan)
        count = z3.Sum([z3.If(w, 1, 0) for w in writing]) == len(planned)
        assumptions = [*self._checks(), *self._world(), *self._fit(), self._guard("alt", z3.And(z3.Or(novel), count))]
        result, model = self._run("alternative", assumptions, None)
        if model is None:
            return result
        solver = self.solver
        self._limit(solver, min(self.timeout_ms, READABLE_TIMEOUT_MS))  # cosmetic: never worth a full budget
        try:
            model = self._shortest(assumptions, model)
        finally:
            self._limit(solver, self.timeout_ms)
        witness = self._witness(self._readable(assumptions, model), (), goal=False)
        return result.model_copy(update={"witness": self._filled(witness, plan, None)})

    def variations(self, plan: Sequence[WitnessCall], free_only: bool = False) -> list[Alternative]:
        """The compliant traces that are ``plan`` with one write changed, the rest kept: per write step and
        argument the plan passes, another value the case names (as :meth:`alternative_witness` counts them),
        then for a string another text (:data:`OTHER_TEXT`, the plan's text with a suffix: free text, an
        argument without a slot, or a named string the world model lets go), then per write step another tool.
        ``free_only`` keeps only what :meth:`alternative_witness` cannot see (free text, arguments without a
        slot): use it when that query proved the rest impossible. Fast at a bound of
        ``len(plan)`` (a trace pinned to its length; at the case's bound, Z3 took up to a minute a query).
        A variation that runs out of work budget is left out.

        Raises:
            SmtInputError: as :meth:`alternative_witness`, or the bound is shorter than ``plan``.
        """
        layout, tools = self.encoding.layout, self._plan_tools(plan)
        if len(plan) > self.encoding.bound:
            raise SmtInputError(f"a plan of {len(plan)} calls does not fit the bound {self.encoding.bound}")
        planned = [call for call in plan if tools[call.tool].kind == "write"]
        shape = [*self._checks(), *self._world(), *self._fit()]
        if len(plan) < self.encoding.bound:
            shape.append(self._guard("alt_len", self._int(f"t_{len(plan)}") == self.encoding.noop))
        same = [self._guard(f"alt_same_{j}", self._same(j, call)) for j, call in enumerate(plan)]
        found: list[Alternative] = []
        models: dict[str, z3.ModelRef | None] = {}  # the plan's own trace is asked once, not once per free text
        for k, call in enumerate(plan):
            if tools[call.tool].kind != "write":
                continue
            novel = z3.And(*(self._differs(k, other) for other in planned))
            for change, argument, assumption in self._changes(k, call, novel, same[k], free_only):
                assumptions = [*shape, *same[:k], *same[k + 1 :], assumption]
                if str(assumption) not in models:
                    models[str(assumption)] = self._fits(assumptions)
                fits = models[str(assumption)]
                if fits is None:
                    continue
                model = self._readable(assumptions, fits) if change == "tool" else fits
                override = None
                if argument is not None and (change == "text" or argument not in layout.slots[call.tool]):
                    value = _other_value(self._schema(call.tool, argument), call.args[argument])
                    override = (k, argument, value)
                calls = self._filled(self._witness(model, (), goal=False), plan, override).calls
                found.append(Alternative(step=k, change=change, argument=argument, calls=calls))
        return found

    def _changes(
        self, k: int, call: WitnessCall, novel: z3.BoolRef, same: z3.BoolRef, free_only: bool
    ) -> Iterator[tuple[Change, str | None, z3.BoolRef]]:
        """(change, argument, assumption) of each way step ``k`` may differ from ``call`` (see :meth:`variations`)."""
        layout = self.encoding.layout
        slots = layout.slots[call.tool]
        step = self._int(f"t_{k}") == layout.index[call.tool]
        for name in sorted(call.args):  # an argument the plan leaves out stays out
            value, slot, schema = call.args[name], slots.get(name), self._schema(call.tool, name)
            if slot is None:  # the world model never reads it, no check pins it: any value fits as the plan's
                if _other_value(schema, value) is not None:
                    yield "text" if _free_text(schema) else "unread", name, same
                continue
            kept = [self._same_arg(other, k, call.args, n) for n, other in slots.items() if n != name]
            if not free_only:
                changed = z3.And(step, *kept, self._differs_arg(slot, k, call.args, name), novel)
                yield "value", name, self._guard(f"alt_value_{k}_{name}", changed)
            if self._unnamed(slot, value):  # free text: the world model tells it apart from named values only
                yield "text", name, same
            elif isinstance(value, str) and slot.sort == "Id" and slot.enum is None:  # a named string: unnamed?
                flag = [self._bool(slot.flag(k))] if slot.optional else []
                other = z3.Not(self._in_table(self._int(slot.var(k))))
                yield "text", name, self._guard(f"alt_text_{k}_{name}", z3.And(step, *kept, *flag, other))
        if not free_only:
            other_tool = z3.And(self._int(f"t_{k}") != layout.index[call.tool], novel)
            yield "tool", None, self._guard(f"alt_tool_{k}", other_tool)

    def _plan_tools(self, plan: Sequence[WitnessCall]) -> Mapping[str, ToolSpec]:
        tools = self.encoding.checked.tools
        if tools is None:
            raise SmtInputError("an alternative witness needs the tools' read/write kinds: pass tools=")
        strangers = sorted({call.tool for call in plan} - set(self.encoding.layout.index))
        if strangers:
            raise SmtInputError(f"the plan calls {', '.join(strangers)}, which no transition or check names")
        return tools

    def _schema(self, tool: str, name: str) -> dict[str, Any]:
        spec = (self.encoding.checked.tools or {}).get(tool)
        return (spec.param_schema(name) if spec is not None else None) or {}

    def _unnamed(self, slot: Slot, value: JsonValue) -> bool:
        """A string the case never names (free text from the bindings)."""
        key = value_key(id_value(value, slot)) if slot.sort == "Id" and isinstance(value, str) else None
        return key is not None and key not in self.encoding.layout.interned

    def _guard(self, name: str, formula: z3.BoolRef) -> z3.BoolRef:
        """A fresh literal that implies ``formula`` (assumptions must be literals; unassumed, it constrains
        nothing)."""
        literal = self._bool(f"{name}_{len(self._consts)}")
        self.solver.add(z3.Implies(literal, formula))
        return literal

    def _same(self, i: int, call: WitnessCall) -> z3.BoolRef:
        """Step ``i`` makes ``call`` as a replay would pass it (see :meth:`_equals`)."""
        slots = self.encoding.layout.slots[call.tool]
        step = self._int(f"t_{i}") == self.encoding.layout.index[call.tool]
        return z3.And(step, *(self._same_arg(slot, i, call.args, name) for name, slot in slots.items()))

    def _differs(self, i: int, call: WitnessCall) -> z3.BoolRef:
        """Step ``i`` is not ``call``: another tool, or an argument a replay passes otherwise."""
        slots = self.encoding.layout.slots[call.tool]
        step = self._int(f"t_{i}") != self.encoding.layout.index[call.tool]
        return z3.Or(step, *(self._differs_arg(slot, i, call.args, name) for name, slot in slots.items()))

    def _same_arg(self, slot: Slot, i: int, args: Mapping[str, JsonValue], name: str) -> z3.BoolRef:
        equal = self._equals(slot, i, args[name]) if name in args else None
        if slot.optional:
            flag = self._bool(slot.flag(i))
            return z3.Not(flag) if name not in args else flag if equal is None else z3.And(flag, equal)
        return z3.BoolVal(True, self._ctx) if equal is None else equal  # a value the slot cannot hold: open

    def _differs_arg(self, slot: Slot, i: int, args: Mapping[str, JsonValue], name: str) -> z3.BoolRef:
        equal, named = (self._equals(slot, i, args[name]) if name in args else None), self._named(slot, i)
        free_text = name in args and self._unnamed(slot, args[name])  # its other values are texts, not literals
        other = z3.BoolVal(False, self._ctx) if equal is None or free_text else z3.And(z3.Not(equal), named)
        if equal is not None and self._as_set(slot):  # another order of the same items is the same argument
            other = z3.And(self._other_items(slot, i, args[name]), named)
        if slot.optional:
            flag = self._bool(slot.flag(i))
            return z3.And(flag, named) if name not in args else z3.Or(z3.Not(flag), z3.And(flag, other))
        return other

    def _equals(self, slot: Slot, i: int, value: JsonValue) -> z3.BoolRef | None:
        """``slot`` at step ``i`` holds ``value``; a string outside the intern table is any unnamed value (the
        decoded witness shows a placeholder there, which the replay fills with the plan's value). None: a value
        the slot cannot hold."""
        if slot.sort != "List":
            held = id_value(value, slot) if slot.sort == "Id" else value
            return self._scalar_equals(slot.sort, slot.enum, slot.var(i), held)
        if not isinstance(value, list) or len(value) > slot.width:
            return None
        parts = [self._int(slot.var(i)) == len(value)]
        for k, item in enumerate(value):
            for column in slot.columns:
                part = item if column.field is None else item.get(column.field) if isinstance(item, dict) else None
                equal = self._scalar_equals(column.sort, column.enum, column.var(i, k), part)
                if equal is None:
                    return None
                parts.append(equal)
        return z3.And(parts)

    def _scalar_equals(self, sort: str, enum: tuple[str, ...] | None, var: str, value: Any) -> z3.BoolRef | None:
        if enum is not None:
            return self._int(var) == enum.index(value) if value in enum else None
        if sort == "Bool":
            return self._bool(var) == value if isinstance(value, bool) else None
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if sort == "Int":
            return self._int(var) == int(value) if number and float(value).is_integer() else None
        if sort == "Real":
            return z3.Real(var, self._ctx) == z3.RealVal(str(Fraction(str(value))), self._ctx) if number else None
        key = value_key(value)
        n = self.encoding.layout.interned.get(key) if key is not None else None
        arg = self._int(var)
        return z3.Not(self._in_table(arg)) if n is None else arg == n

    @staticmethod
    def _as_set(slot: Slot) -> bool:
        """A list of scalars: the grader matches it up to permutation (or, paired with others, its rows up to one
        common permutation; another pairing of the same items is not told apart here)."""
        return slot.sort == "List" and len(slot.columns) == 1 and slot.columns[0].field is None

    def _other_items(self, slot: Slot, i: int, value: JsonValue) -> z3.BoolRef:
        """The list at step ``i`` has another length than ``value`` or an item ``value`` does not hold."""
        assert isinstance(value, list)
        column, length = slot.columns[0], self._int(slot.var(i))
        strangers = []
        for k in range(slot.width):
            equal = [self._scalar_equals(column.sort, column.enum, column.var(i, k), item) for item in value]
            strangers.append(z3.And(length > k, *(z3.Not(e) for e in equal if e is not None)))
        return z3.Or(length != len(value), *strangers)

    def _named(self, slot: Slot, i: int) -> z3.BoolRef:
        """Step ``i``'s value of ``slot`` is one a replay can pass: a string the case names (in the intern
        table), an enum's value; numbers and Booleans always are."""
        if slot.sort == "List":
            length = self._int(slot.var(i))
            return z3.And(
                [
                    z3.Implies(length > k, self._named_scalar(column.sort, column.enum, column.var(i, k)))
                    for column in slot.columns
                    for k in range(slot.width)
                ]
            )
        return self._named_scalar(slot.sort, slot.enum, slot.var(i))

    def _named_scalar(self, sort: str, enum: tuple[str, ...] | None, var: str) -> z3.BoolRef:
        if enum is not None:
            return z3.And(self._int(var) >= 0, self._int(var) < len(enum))
        if sort == "Id":
            return self._in_table(self._int(var))
        return z3.BoolVal(True, self._ctx)

    def _in_table(self, arg: z3.ArithRef) -> z3.BoolRef:
        return z3.And(arg >= 0, arg < len(self.encoding.layout.interned))

    def _filled(
        self, witness: Witness, plan: Sequence[WitnessCall], override: tuple[int, str, JsonValue] | None
    ) -> Witness:
        """``witness`` with what the solver leaves open taken from ``plan`` at the same step, where the tools
        agree: a placeholder value, and the parameters the encoding has no slot for; ``override`` (step,
        argument, value) sets one argument (an other text, or another value of an argument without a slot)."""
        calls = []
        for i, call in enumerate(witness.calls):
            planned = plan[i] if i < len(plan) and plan[i].tool == call.tool else None
            if planned is None:
                calls.append(call)
                continue
            slots = self.encoding.layout.slots[call.tool]
            args = {
                name: planned.args[name] if is_placeholder(value) and name in planned.args else value
                for name, value in call.args.items()
            }
            args.update({name: value for name, value in planned.args.items() if name not in slots})
            if override is not None and override[0] == i:
                args[override[1]] = override[2]
            calls.append(call.model_copy(update={"args": args}))
        return witness.model_copy(update={"calls": calls})

    @_timed_pass("canonical")
    def _canonical(self, assumptions: list[z3.BoolRef], model: z3.ModelRef) -> z3.ModelRef:
        """Fix the witness step by step: a read tool if one fits, then the lowest tool index that fits (binary
        search). The length is kept; a solver time-out keeps the trace found so far."""
        length, layout = self._length(model), self.encoding.layout
        tools = self.encoding.checked.tools or {}
        reads = [layout.index[name] for name in layout.tools if name in tools and tools[name].kind == "read"]
        fixed = list(assumptions)
        if length < self.encoding.bound:
            fixed.append(self._int(f"t_{length}") == self.encoding.noop)
        for i in range(length):
            step = self._int(f"t_{i}")
            if reads:
                read = self._reads_at(i, reads)
                found = self._fits([*fixed, read])
                if found is not None:
                    model = found
                    fixed.append(read)
            low, high = 0, model.eval(step, model_completion=True).as_long()
            while low < high:
                middle = (low + high) // 2
                found = self._fits([*fixed, step <= middle])
                if found is None:
                    low = middle + 1
                else:
                    model, high = found, found.eval(step, model_completion=True).as_long()
            fixed.append(step == high)
        return model

    @_timed_pass("readable")
    def _readable(self, assumptions: list[z3.BoolRef], model: z3.ModelRef) -> z3.ModelRef:
        """The same calls with arguments a reader can follow: each string argument keeps its value if the checks
        pin it for that parameter or the scenario states it under the parameter's name, else takes the
        scenario's value of that name, else an unnamed value (``<value #n>``), never another parameter's literal
        (``first_name="#W7647140"``); the oracle leaves an unnamed value to the case's argument bindings or out,
        since nothing in the case asks for it. Preferences the query cannot meet (the world
        model needs the value) are dropped, found through unsat cores.

        Cosmetic, so it must never cost an answer: the preference clauses live in a push/pop scope (left in the
        solver, they slowed every later query; benchmarks/smt.py 15+L at h=32 went from 2 s to 54 s and a backward
        query timed out), each check gets at most :data:`READABLE_TIMEOUT_MS` worth of work, at most
        :data:`READABLE_ROUNDS` checks are made, and whatever fails keeps the model as it was."""
        layout, length = self.encoding.layout, self._length(model)
        fixed = [self._int(f"t_{i}") == model.eval(self._int(f"t_{i}"), model_completion=True) for i in range(length)]
        if length < self.encoding.bound:
            fixed.append(self._int(f"t_{length}") == self.encoding.noop)
        wanted: list[list[z3.BoolRef]] = []  # per free argument, its preferences in order (the first is tried)
        for i in range(length):
            tool = layout.tools[model.eval(self._int(f"t_{i}"), model_completion=True).as_long()]
            for name, slot in layout.slots[tool].items():
                if slot.sort != "Id" or slot.enum is not None:
                    continue
                if slot.optional and not z3.is_true(model.eval(self._bool(slot.flag(i)))):
                    continue
                arg = self._int(slot.var(i))
                current = model.eval(arg, model_completion=True).as_long()
                if current in self._natural_ids(tool, name):
                    wanted.append([arg == current])
                    continue
                stated = self._stated_id(name)
                outside = arg >= len(layout.interned)
                wanted.append([outside] if stated is None else [arg == stated, outside])
        if not wanted:
            return model
        solver = self.solver
        solver.push()
        self._limit(solver, min(self.timeout_ms, READABLE_TIMEOUT_MS))
        try:
            # assumptions must be literals: each preference is guarded by a Bool of this scope
            guards = [[z3.Bool(f"prefer_{n}_{k}", self._ctx) for k in range(len(o))] for n, o in enumerate(wanted)]
            for options, literals in zip(wanted, guards, strict=True):
                for preference, literal in zip(options, literals, strict=True):
                    solver.add(z3.Implies(literal, preference))
            for _ in range(READABLE_ROUNDS):
                answer = solver.check(*assumptions, *fixed, *(literals[0] for literals in guards))
                if answer == z3.sat:
                    return solver.model()
                if answer != z3.unsat:
                    return model
                core = {str(literal) for literal in solver.unsat_core()}
                if not any(str(literals[0]) in core for literals in guards):
                    return model
                # a preference in the core gives way to the next one (or to any value)
                guards = [literals[1:] if str(literals[0]) in core else literals for literals in guards]
                guards = [literals for literals in guards if literals]
            return model
        except z3.Z3Exception:
            return model
        finally:
            solver.pop()
            self._limit(solver, self.timeout_ms)

    def _natural_ids(self, tool: str, name: str) -> set[int]:
        """Interned values that belong to ``tool``'s parameter ``name``: what the checks pin for it, and the
        scenario's value of the same name."""
        layout = self.encoding.layout
        slot = layout.slots[tool][name]
        found = {
            layout.id_of(id_value(atom.args[name], slot))
            for check in self.encoding.checks
            for atom in atoms(check)
            if atom.tool == tool and name in atom.args
        }
        stated = self._stated_id(name)
        return found | ({stated} if stated is not None else set())

    def _stated_id(self, name: str) -> int | None:
        key = value_key(self.encoding.initial[name]) if name in self.encoding.initial else None
        return self.encoding.layout.interned.get(key) if key is not None else None

    def _reads_at(self, i: int, reads: Sequence[int]) -> z3.BoolRef:
        """A literal that makes step ``i`` call a read tool (assumptions must be literals, so the disjunction
        is guarded by a fresh Bool added to the base formula once; unassumed, it constrains nothing)."""
        name = f"read_{i}"
        if name not in self._consts:
            step = self._int(f"t_{i}")
            self.solver.add(z3.Implies(self._bool(name), z3.Or([step == k for k in reads])))
        return self._bool(name)

    def _fits(self, assumptions: list[z3.BoolRef]) -> z3.ModelRef | None:
        """A model of ``assumptions``, or None if there is none or the solver gives up."""
        try:
            answer = self.solver.check(*assumptions)
        except z3.Z3Exception:
            return None
        return self.solver.model() if answer == z3.sat else None

    @_timed_pass("shortest")
    def _shortest(self, assumptions: list[z3.BoolRef], model: z3.ModelRef) -> z3.ModelRef:
        """A model of ``assumptions`` with the fewest active steps (binary search on the length; a witness is
        read by people and judges, and by the oracle agent, so it should not wander)."""
        low, high = 0, self._length(model)  # the shortest length is in [low, high]; ``high`` is feasible
        while low < high:
            middle = (low + high) // 2
            limit = self._int(f"t_{middle}") == self.encoding.noop
            try:
                answer = self.solver.check(*assumptions, limit)
            except z3.Z3Exception:
                break
            if answer == z3.sat:
                model = self.solver.model()
                high = self._length(model)
            elif answer == z3.unsat:
                low = middle + 1
            else:
                break  # out of time while shortening: keep the trace found so far
        return model

    def audit(self, shortest: bool = False) -> list[QueryResult]:
        """The forward query and every backward query."""
        return [self.forward(shortest), *self.backward_all(shortest)]

    def smtlib(self) -> str:
        """The base formula as SMT-LIB 2 text (definitions only; each query adds assumptions)."""
        return self.encoding.text

    def admits(self, calls: Sequence[WitnessCall]) -> bool | None:
        """Whether the world model admits exactly the trace ``calls`` (as :meth:`compliant_witness` asks, but
        without the checks): every call accepted and the goal reached. A string the case never names stands for
        any unnamed value, as in :meth:`_equals`. None: the work budget ran out.

        Raises:
            SmtInputError: ``calls`` is longer than the bound, or calls a tool neither the world model nor a check
                names (leave such calls out: the model says nothing about them).
        """
        layout = self.encoding.layout
        if len(calls) > self.encoding.bound:
            raise SmtInputError(f"a trace of {len(calls)} calls does not fit the bound {self.encoding.bound}")
        strangers = sorted({call.tool for call in calls} - set(layout.index))
        if strangers:
            raise SmtInputError(f"the trace calls {', '.join(strangers)}, which no transition or check names")
        pinned = [self._guard(f"admit_{j}", self._same(j, call)) for j, call in enumerate(calls)]
        if len(calls) < self.encoding.bound:
            pinned.append(self._guard("admit_len", self._int(f"t_{len(calls)}") == self.encoding.noop))
        try:
            answer = self.solver.check(*self._world(), *self._fit(), *pinned)
        except z3.Z3Exception:  # interrupted: as a budget run out
            return None
        return None if answer == z3.unknown else answer == z3.sat

    # --- pieces --------------------------------------------------------------------------------------------------

    def _fit(self) -> list[z3.BoolRef]:
        """The assumption that list arguments fit the list bound (none without list arguments)."""
        return [self._bool("LISTS_FIT")] if self.encoding.has_lists else []

    def _checks(self) -> list[z3.BoolRef]:
        return [self._bool(f"c_{j}") for j in range(len(self.check_ids))]

    def _world(self) -> list[z3.BoolRef]:
        return [self._bool(name) for name in self.encoding.world]

    def _values(self, model: z3.ModelRef) -> ModelValues:
        """The values of ``model``, read once each: the length search, the decoded calls and their explanation
        read the same steps (the values of the last model read are kept while that model lives)."""
        if self._read is None or not self._read.of(model):
            self._read = ModelValues(model)
        return self._read

    def _length(self, model: z3.ModelRef) -> int:
        values = self._values(model)
        for i in range(self.encoding.bound):
            if values.number(self._int(f"t_{i}")) == self.encoding.noop:
                return i
        return self.encoding.bound

    def _witness(self, model: z3.ModelRef, focus: Sequence[str], goal: bool) -> Witness:
        layout, values = self.encoding.layout, self._values(model)
        self._others = {}
        calls: list[WitnessCall] = []
        violations: list[str] = []
        for i in range(self._length(model)):
            tool = layout.tools[values.number(self._int(f"t_{i}"))]
            args: dict[str, JsonValue] = {}
            for name, slot in layout.slots[tool].items():
                if slot.optional and not values.truth(self._bool(slot.flag(i))):
                    continue
                if slot.sort == "List":
                    args[name] = self._decode_list(model, slot, i)
                    continue
                args[name] = self._decode_slot(model, slot.var(i), slot.sort, slot.enum)
            calls.append(WitnessCall(tool=tool, args=args))
            refusal = self.encoding.refusal
            if refusal and self._true(model, f"A_{i}"):
                continue
            if tool in focus or refusal:
                transition = self.encoding.checked.model.transition(tool)
                refused = " (the call is refused)" if refusal else ""
                for j, formula in enumerate(self._pre_at(tool, i)):
                    if not values.truth(formula):
                        assert transition is not None
                        pre = format_expr(transition.pre[j])
                        violations.append(f"step {i}: {tool} precondition {pre} is false{refused}")
        if goal and self.encoding.refusal:
            for j, check in enumerate(self.encoding.checks):
                if not self._true(model, f"ca_{j}"):
                    violations.append(
                        f"check {self.check_ids[j]} holds only through refused calls: {format_check(check)}"
                    )
        if goal and not values.truth(self._bool("G")):
            goals = " ".join(format_expr(e) for e in self.encoding.checked.model.goal)
            violations.append(f"goal {goals} is not reached")
        return Witness(calls=calls, initial_state=self._initial_state(model), violations=violations)

    def _true(self, model: z3.ModelRef, name: str) -> bool:
        return self._values(model).truth(self._bool(name))

    def _pre_at(self, tool: str, step: int) -> list[z3.BoolRef]:
        """The preconditions of ``tool`` at ``step`` as formulas of this encoding (parsed once per tool and step,
        in one parse; used only to explain a witness)."""
        key = (tool, step)
        found = self._preconditions.get(key)
        if found is None:
            terms = [template.format(i=step, j=step + 1) for template in self.encoding.pre_templates.get(tool, [])]
            names = {name for term in terms for name in re.findall(r"\b(?:[sah]_\d+_[0-9A-Z]+|t_\d+)\b", term)}
            decls = {name: self._decl(name) for name in names}
            text = "".join(f"(assert {term})" for term in terms)
            found = list(z3.parse_smt2_string(text, decls=decls, ctx=self._ctx)) if terms else []
            assert len(found) == len(terms)
            self._preconditions[key] = found
        return found

    def _decl(self, name: str) -> z3.FuncDeclRef:
        found = self._decls.get(name)
        if found is None:
            found = self._decls[name] = self._const(name).decl()
        return found

    def _const(self, name: str) -> z3.ExprRef:
        """The Z3 constant of a name of this encoding, with its sort (from the layout, not by scanning text)."""
        kind, _, rest = name.partition("_")
        layout = self.encoding.layout
        if kind == "s":
            return z3.Const(name, self._sort(z3_sort(layout.leaves[int(rest.split("_")[1])].type)))
        if kind == "a":
            code = rest.split("_")[1][0]
            return z3.Const(name, self._sort({"I": "Int", "S": "Int", "R": "Real", "B": "Bool", "L": "Int"}[code]))
        return z3.Const(name, self._sort("Int" if kind == "t" else "Bool"))

    def _sort(self, text: str) -> z3.SortRef:
        """The Z3 sort of an SMT-LIB sort of this encoding: Int, Real, Bool or (Array E Bool)."""
        simple = {"Int": z3.IntSort(self._ctx), "Real": z3.RealSort(self._ctx), "Bool": z3.BoolSort(self._ctx)}
        if text in simple:
            return simple[text]
        return z3.ArraySort(simple[text.split()[1]], simple["Bool"])

    def _decode_slot(self, model: z3.ModelRef, name: str, sort: str, enum: tuple[str, ...] | None) -> JsonValue:
        if sort == "Bool":
            return self._values(model).truth(self._bool(name))
        if sort == "Real":
            value = model.eval(z3.Real(name, self._ctx), model_completion=True)
            return _real(value)
        number = self._values(model).number(self._int(name))
        if enum is not None:
            return enum[number] if 0 <= number < len(enum) else f"{PLACEHOLDER_PREFIXES[1]}{number}>"
        if sort == "Id":
            return self._decode_id(number)
        return int(number)

    def _decode_list(self, model: z3.ModelRef, slot: Slot, step: int) -> JsonValue:
        length = min(self._values(model).number(self._int(slot.var(step))), slot.width)
        items: list[JsonValue] = []
        for k in range(max(length, 0)):
            parts = {c.field: self._decode_slot(model, c.var(step, k), c.sort, c.enum) for c in slot.columns}
            items.append(parts[None] if None in parts else {str(name): value for name, value in parts.items()})
        return items

    def _decode_id(self, number: int) -> JsonValue:
        key = self.encoding.layout.by_id.get(number)
        if key is not None:
            value: JsonValue = json.loads(key)
            return value
        if 0 <= number - UNSTATED_BASE < len(self.encoding.unstated):
            return f"{PLACEHOLDER_PREFIXES[2]}{number - UNSTATED_BASE}>"
        # Numbered by first appearance in the witness: equal values read equal, and the solver's raw integers
        # (which say nothing) stay out of the review material.
        ordinal = self._others.setdefault(number, len(self._others) + 1)
        return f"{PLACEHOLDER_PREFIXES[0]}{ordinal}>"

    def _initial_state(self, model: z3.ModelRef) -> dict[str, JsonValue]:
        state: dict[str, Any] = {}
        layout = self.encoding.layout
        for n, leaf in enumerate(layout.leaves):
            name = f"s_0_{n}"
            dsl_type = leaf.type
            value: JsonValue
            if isinstance(dsl_type, ArrayType):
                value = self._decode_array(model, name, dsl_type)
            else:
                enum = dsl_type.values if isinstance(dsl_type, EnumType) else None
                value = self._decode_slot(model, name, slot_sort(dsl_type), enum)
            if not leaf.path:
                state[leaf.var] = value
                continue
            target = state.setdefault(leaf.var, {})
            for part in leaf.path[:-1]:
                target = target.setdefault(part, {})
            target[leaf.path[-1]] = value
        return state

    def _decode_array(self, model: z3.ModelRef, name: str, dsl_type: ArrayType) -> JsonValue:
        element = dsl_type.element
        array = self._const(name)
        candidates: list[tuple[Any, JsonValue]]
        if isinstance(element, EnumType):
            candidates = [(index, value) for index, value in enumerate(element.values)]
        elif isinstance(element, ScalarType) and element.type == "String":
            candidates = [(n, json.loads(key)) for n, key in sorted(self.encoding.layout.by_id.items())]
        elif isinstance(element, ScalarType) and element.type == "Bool":
            candidates = [(False, False), (True, True)]
        else:
            return "<array>"
        members: list[JsonValue] = []
        for raw, value in candidates:
            if z3.is_true(model.eval(z3.Select(array, raw), model_completion=True)):
                members.append(value)
        return members


def _real(value: z3.ExprRef) -> JsonValue:
    fraction = value.as_fraction()
    return int(fraction) if fraction.denominator == 1 else float(fraction)


def _validate_checks(entries: Sequence[CaseCheck], checked: CheckedModel) -> None:
    tools = checked.tools
    if tools is None:
        return
    for entry in entries:
        for atom in entry.check.atoms:
            problem = call_problem(atom.tool, atom.args, tools) or list_order_problem(atom, tools)
            if problem:
                raise SmtInputError(f"check {entry.id} ({entry.text}) {problem}")


def _free_text(schema: Mapping[str, Any]) -> bool:
    return schema.get("type") == "string" and "enum" not in schema


def _other_value(schema: Mapping[str, Any], value: JsonValue) -> JsonValue:
    """Another value of a parameter's schema type than ``value``: the next enum member, the other Boolean, the
    next number, the text with :data:`OTHER_TEXT`; None for anything else (a list, an object)."""
    members = schema.get("enum")
    if isinstance(members, list) and value in members and len(members) > 1:
        following: JsonValue = members[(members.index(value) + 1) % len(members)]
        return following
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return OTHER_TEXT.format(value)
    return None
