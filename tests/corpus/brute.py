"""Brute-force cross-validation without Z3: every trace up to the bound over small argument domains, simulated
step by step, graded by the Python check semantics (``mantra_env.checks.evaluate``).

It answers the same questions as ``CaseSolver`` in both modes (see ``mantra_env/smt/queries.py``):

* ``refusal``: a call whose preconditions fail is refused and leaves the state unchanged. Forward conflict: some
  trace passes every check while the checks on its accepted calls alone fail, or the goal is missed. Backward
  ``j`` and the witness range over traces whose calls are all accepted.
* ``paper``: every call applies its postconditions; a trace is admitted only if the preconditions of tools no
  check mentions hold. Forward conflict: some admitted trace passes every check and breaks a precondition of
  a tool the checks mention, or misses the goal.

Only a fragment of the DSL is simulated, enough for the conflict corpus: scalar, enum and array (a frozenset)
variables, scalar and list (a tuple) constants and parameters, arithmetic, logic and the list operations, and
postconditions that assign ``(= (next v) e)``. A list parameter ranges over every list of at most
:data:`LIST_LENGTH` elements of its element domain, and the lists the checks pin. Anything else raises
:class:`Unsupported`. Argument domains are every literal of the right JSON type in the model, the checks and
the initial state, every integer one above those, a junk value (``"<junk>"``, ``-1``), and "omitted" for a
parameter only checks pin; the model's parameters are always supplied (as in the encoding). Initial variables
the entry leaves open range over their Bool or enum values; an open String variable is unknown to the agent in
the refusal mode (``"<unstated #n>"``, a value no argument takes, as the witness shows it) and ranges over the
argument strings in the paper's. In the refusal mode a trace never calls a tool on an identifier (a String
parameter the model binds named like an id, not free text) that names no stated value (a literal string that is
not an enum value, a pinned value) and nothing a variable that returns values holds before the call, as
``CaseSolver(refuse_invented_ids=True)``; ``"<junk>"`` is such an identifier.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mantra_env.checks import Check, TraceIndex, atoms, evaluate, parse_check, tools_mentioned
from mantra_env.smt.encode import is_identifier, returning_vars
from mantra_env.tools import ToolSpec
from mantra_env.worldmodel import check_model, parse_model
from mantra_env.worldmodel.ast import (
    STRING,
    ArrayType,
    CollectionOp,
    Contains,
    EnumType,
    Expr,
    ListLit,
    ListType,
    Lit,
    NextRef,
    OpApp,
    ParamRef,
    ScalarType,
    VarRef,
    WorldModel,
    subexpressions,
)

_OMITTED = object()
LIST_LENGTH = 2


class Unsupported(ValueError):
    """The model uses a construct the brute-force simulator does not cover."""


@dataclass(frozen=True, slots=True)
class Step:
    """One call of an enumerated trace (what ``TraceIndex`` needs)."""

    tool: str
    args: Mapping[str, Any]


@dataclass
class Verdict:
    """The statuses of every query in one mode, as ``CaseSolver`` reports them, and how many traces were seen."""

    forward: str = "consistent"
    backward: list[str] = field(default_factory=list)
    witness: str = "infeasible"
    traces: int = 0

    @property
    def statuses(self) -> tuple[str, tuple[str, ...], str]:
        return self.forward, tuple(self.backward), self.witness


def _value(expr: Expr, state: Mapping[str, Any], args: Mapping[str, Any], consts: Mapping[str, Any]) -> Any:
    if isinstance(expr, Lit):
        return expr.value
    if isinstance(expr, VarRef):
        return consts[expr.name] if expr.name in consts else state[expr.name]
    if isinstance(expr, ParamRef):
        value = args[expr.name]
        return tuple(value) if isinstance(value, list) else value
    if isinstance(expr, ListLit):
        return tuple(_value(item, state, args, consts) for item in expr.items)
    if isinstance(expr, Contains):
        return _value(expr.element, state, args, consts) in _value(expr.array, state, args, consts)
    if isinstance(expr, CollectionOp):
        first, *rest = (_value(arg, state, args, consts) for arg in expr.args)
        match expr.symbol:
            case "length":
                return len(first)
            case "empty":
                return not first
            case "sum":
                return sum(first)
            case "subset":
                return all(x in rest[0] for x in first)
            case "union":
                return first | frozenset(rest[0])
            case "difference":
                return first - frozenset(rest[0])
    if isinstance(expr, OpApp):
        values = [_value(arg, state, args, consts) for arg in expr.args]
        return _apply(expr.symbol, values)
    raise Unsupported(f"{type(expr).__name__} is not simulated")


def _apply(symbol: str, values: list[Any]) -> Any:
    match symbol:
        case "and":
            return all(values)
        case "or":
            return any(values)
        case "not":
            return not values[0]
        case "=>":
            return (not values[0]) or values[1]
        case "=":
            return all(v == values[0] and type(v) is type(values[0]) for v in values[1:])
        case "<" | "<=" | ">" | ">=":
            a, b = values
            return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[symbol]
        case "+":
            return sum(values)
        case "-":
            return -values[0] if len(values) == 1 else values[0] - sum(values[1:])
        case "*":
            return values[0] * values[1]
    raise Unsupported(f"operator {symbol} is not simulated")


class Simulator:
    """The world model of one entry as Python functions over dict states (enum values are their names)."""

    def __init__(
        self,
        model_text: str,
        checks: Sequence[str],
        initial: Mapping[str, Any],
        tools: Sequence[ToolSpec] | None = None,
    ) -> None:
        self.model: WorldModel = parse_model(model_text)
        checked = check_model(self.model, tools)
        self.checks: list[Check] = [parse_check(text) for text in checks]
        self.consts = {c.name: tuple(c.value) if isinstance(c.value, list) else c.value for c in self.model.consts}
        self.sets = {var.name for var in self.model.vars if var.var_type == ArrayType(STRING)}
        self.returning = returning_vars(self.model)  # the variables the encoding consults for returned ids
        for var in self.model.vars:
            scalar = isinstance(var.var_type, ScalarType | EnumType) and var.var_type != ScalarType("Real")
            if not scalar and var.name not in self.sets:
                raise Unsupported(f"variable {var.name} of type {var.var_type}")
        initial = {k: frozenset(v) if k in self.sets else v for k, v in initial.items()}
        self.posts: dict[str, list[tuple[str, Expr]]] = {}
        for transition in self.model.transitions:
            assigns = []
            for post in transition.post:
                if not (isinstance(post, OpApp) and post.symbol == "=" and isinstance(post.args[0], NextRef)):
                    raise Unsupported(f"postcondition of {transition.tool} is not (= (next v) e)")
                if any(isinstance(e, NextRef) for e in subexpressions(post.args[1])):
                    raise Unsupported(f"postcondition of {transition.tool} reads a next state")
                assigns.append((post.args[0].name, post.args[1]))
            self.posts[transition.tool] = assigns
        literals = [e.value for e in _model_exprs(self.model) if isinstance(e, Lit)]
        literals += [v for check in self.checks for atom in atoms(check) for v in atom.args.values()]
        literals += list(initial.values()) + list(self.consts.values())
        literals += [x for v in literals if isinstance(v, list | tuple | frozenset) for x in v]
        literals += [v + 1 for v in literals if isinstance(v, int) and not isinstance(v, bool)]  # "just above"
        self.strings = sorted({v for v in literals if isinstance(v, str)} | {"<junk>"})
        self.initials = list(self._initial_states(initial, "refusal"))
        self.paper_initials = list(self._initial_states(initial, "paper"))
        self.focus = {tool for check in self.checks for tool in tools_mentioned(check)}
        self.calls = self._calls(checked.params, literals)
        # Identifier parameters (refusal mode): the String parameters the model binds named like ids, except
        # free text; a call naming no stated value and nothing the state holds is no trace (the env: "not found").
        # What the encoding interns: the literal strings, and every value a check pins.
        pins = [v for check in self.checks for atom in atoms(check) for v in atom.args.values()]
        statuses = {v for var in self.model.vars if isinstance(var.var_type, EnumType) for v in var.var_type.values}
        statuses |= {v for b in params_of(checked) if isinstance(b.type, EnumType) for v in b.type.values}
        self.stated = (frozenset(self.strings) - {"<junk>"} - statuses) | {
            v for v in pins if not isinstance(v, list | dict)
        }
        specs = {spec.name: spec for spec in tools or ()}
        self.identifiers = {
            tool: [
                bind.tool_param
                for bind in binds.values()
                if bind.type == STRING
                and is_identifier(bind.tool_param)
                and not (tool in specs and specs[tool].free_text(bind.tool_param))
            ]
            for tool, binds in checked.params.items()
        }

    def _initial_states(self, initial: Mapping[str, Any], mode: str) -> Iterator[dict[str, Any]]:
        open_vars = [var for var in self.model.vars if var.name not in initial]
        domains: list[list[Any]] = []
        unstated = 0
        for var in open_vars:
            if isinstance(var.var_type, EnumType):
                domains.append(list(var.var_type.values))
            elif var.var_type == ScalarType("Bool"):
                domains.append([False, True])
            elif var.var_type == STRING and mode == "refusal":
                domains.append([f"<unstated #{unstated}>"])
                unstated += 1
            elif var.var_type == STRING:
                domains.append(list(self.strings))
            else:
                raise Unsupported(f"initial value of {var.name} is not given")
        for values in itertools.product(*domains):
            state = {var.name: initial[var.name] for var in self.model.vars if var.name in initial}
            state.update({var.name: value for var, value in zip(open_vars, values, strict=True)})
            yield state

    def _calls(self, params: Mapping[str, Mapping[str, Any]], literals: list[Any]) -> list[Step]:
        strings = self.strings
        ints = sorted({v for v in literals if isinstance(v, int) and not isinstance(v, bool)} | {-1})
        tools = [t.tool for t in self.model.transitions]
        tools += sorted({t for check in self.checks for t in tools_mentioned(check)} - set(tools))
        calls = []
        for tool in tools:
            domains: dict[str, list[Any]] = {}
            for bind in params.get(tool, {}).values():
                kind = bind.type
                if isinstance(kind, EnumType):
                    domains[bind.tool_param] = list(kind.values)
                elif kind == ScalarType("Bool"):
                    domains[bind.tool_param] = [False, True]
                elif kind == ScalarType("Int"):
                    domains[bind.tool_param] = list(ints)
                elif kind == ScalarType("String"):
                    domains[bind.tool_param] = list(strings)
                elif kind == ListType(STRING):
                    domains[bind.tool_param] = [
                        list(items) for n in range(LIST_LENGTH + 1) for items in itertools.product(strings, repeat=n)
                    ]
                else:
                    raise Unsupported(f"parameter {tool}.{bind.tool_param} of type {kind}")
            pinned: dict[str, list[Any]] = {}
            for check in self.checks:
                for atom in atoms(check):
                    if atom.tool == tool:
                        for name, value in atom.args.items():
                            if value not in pinned.setdefault(name, []):
                                pinned[name].append(value)
            for name, values in sorted(pinned.items()):
                if name in domains:  # a parameter the model leaves untyped (unused) takes the pinned values too
                    domains[name] = [*domains[name], *sorted((v for v in values if v not in domains[name]), key=repr)]
                else:
                    domains[name] = [*sorted(values, key=repr), "<junk>", _OMITTED]
            names = sorted(domains)
            for combo in itertools.product(*(domains[n] for n in names)):
                calls.append(Step(tool, {n: v for n, v in zip(names, combo, strict=True) if v is not _OMITTED}))
        return calls

    def _local_args(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        transition = self.model.transition(tool)
        return {b.local: args[b.tool_param] for b in transition.params} if transition else {}

    def accepts(self, state: Mapping[str, Any], call: Step) -> list[bool]:
        """Whether each precondition of the call holds in ``state``."""
        transition = self.model.transition(call.tool)
        if transition is None:
            return []
        local = self._local_args(call.tool, call.args)
        return [bool(_value(pre, state, local, self.consts)) for pre in transition.pre]

    def knows(self, state: Mapping[str, Any], call: Step) -> bool:
        """Whether every identifier argument of the call names a stated value or one the state holds."""
        held = {v for name, v in state.items() if name in self.returning and isinstance(v, str)}
        held |= {x for name in self.sets & self.returning for x in state.get(name, ())}
        return all(
            call.args[name] in self.stated or call.args[name] in held for name in self.identifiers.get(call.tool, ())
        )

    def apply(self, state: Mapping[str, Any], call: Step) -> dict[str, Any]:
        local = self._local_args(call.tool, call.args)
        updates = {v: _value(e, state, local, self.consts) for v, e in self.posts.get(call.tool, [])}
        return {**state, **updates}

    def goal(self, state: Mapping[str, Any]) -> bool:
        return all(_value(expr, state, {}, self.consts) for expr in self.model.goal)

    def passes(self, trace: Sequence[Step]) -> list[bool]:
        index = TraceIndex(trace)
        return [evaluate(check, index).passed for check in self.checks]


def params_of(checked: Any) -> list[Any]:
    return [bind for binds in checked.params.values() for bind in binds.values()]


def _model_exprs(model: WorldModel) -> Iterator[Expr]:
    for transition in model.transitions:
        for expr in (*transition.pre, *transition.post):
            yield from subexpressions(expr)
    for expr in model.goal:
        yield from subexpressions(expr)


def brute_force(
    model: str,
    checks: Sequence[str],
    initial: Mapping[str, Any],
    bound: int,
    tools: Sequence[ToolSpec] | None = None,
) -> dict[str, Verdict]:
    """The verdicts of both modes for every trace of at most ``bound`` calls."""
    sim = Simulator(model, checks, initial, tools)
    n = len(sim.checks)
    refusal, paper = Verdict(backward=["consistent"] * n), Verdict(backward=["consistent"] * n)

    def record(verdict: Verdict, admitted: bool, full: list[bool], ok: bool, goal: bool) -> None:
        """``admitted``: the trace is a model of the world model; ``ok``: what the forward query negates."""
        verdict.traces += 1
        if all(full) and not ok:
            verdict.forward = "conflict"
        if admitted and goal:
            if all(full):
                verdict.witness = "found"
            for j in range(n):
                if not full[j] and all(full[k] for k in range(n) if k != j):
                    verdict.backward[j] = "conflict"

    # The modes share a start unless an open String variable is unstated (refusal) or free (paper).
    starts = [(start, True, start in sim.paper_initials) for start in sim.initials]
    starts += [(start, False, True) for start in sim.paper_initials if start not in sim.initials]
    for start, in_refusal, in_paper in starts:
        # Depth-first over traces; each node carries both modes' states and what they know so far. A trace that
        # calls a tool on an identifier nobody could know is no refusal-mode trace (``Simulator.knows``).
        stack: list[tuple[list[Step], list[Step], dict[str, Any], dict[str, Any], bool, bool, bool, bool]] = [
            ([], [], start, start, in_refusal, True, in_paper, True)
        ]
        while stack:
            trace, accepted, state_r, state_p, alive_r, all_accepted, paper_admitted, focus_pre = stack.pop()
            full = sim.passes(trace)
            goal_r = sim.goal(state_r)
            ok_r = all(sim.passes(accepted)) and goal_r if all(full) else True
            if alive_r:
                record(refusal, all_accepted, full, ok_r, goal_r)
            if paper_admitted:
                goal_p = sim.goal(state_p)
                record(paper, focus_pre, full, focus_pre and goal_p, goal_p)
            if len(trace) == bound:
                continue
            for call in sim.calls:
                accept_r = all(sim.accepts(state_r, call))
                holds_p = all(sim.accepts(state_p, call))
                background = call.tool not in sim.focus
                stack.append(
                    (
                        [*trace, call],
                        [*accepted, call] if accept_r else accepted,
                        sim.apply(state_r, call) if accept_r else state_r,
                        sim.apply(state_p, call),
                        alive_r and sim.knows(state_r, call),
                        all_accepted and accept_r,
                        paper_admitted and (holds_p or not background),
                        focus_pre and (holds_p or background),
                    )
                )
    return {"refusal": refusal, "paper": paper}
