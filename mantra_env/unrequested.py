"""Unrequested writes: accepted writes the case never asks for, which fail an episode besides its checks.

A case's checks say what an agent must and must not do; they rarely list every write it must leave alone. An
agent that resumes a suspended line the customer only asked about, or sends a compensation certificate nobody
asked for, passes every check and still leaves the database in a state the customer never wanted. The rule:

    A step is an **unrequested write** iff it calls a tool of kind ``write``, the call was accepted (no tool
    error), and it matches neither
    (a) a write of the case's stored oracle plan with the same tool and the same *targets*: the arguments that
        name the record the write acts on (:meth:`mantra_env.tools.ToolSpec.targets`: parameters named ``id``
        or ``*_id`` unless the tool schema marks them ``"x-target": false``, as a payment method is; or marked
        ``"x-target": true``). Targets compare as pinned arguments do (strings exact: an id in other case is
        another record); a target the plan's write leaves out is a wildcard; nor
    (b) a positive atom of the case's checks (every ``CALL`` atom: targets and anchors of every operator, both
        branches of every ``OR``), matched as the grader matches it (tool and pinned arguments), that names
        its record: it pins every target of its tool, or its tool has no target, or the plan writes nothing
        with its tool (the branch of an ``OR`` the plan did not take).

    Why (b) asks an atom to name its record: 130 of the 293 shipped cases anchor a check on a write the plan
    makes with an atom that pins nothing (``CALL get_line_details(line_id="L1") PRECEDES CALL resume_line()``).
    Such an atom says *that* the write comes after the read, not *which* line: counted as a request, it would let
    an agent resume every line of the customer. Where the plan writes that tool, the plan's targets say which.

What passes: another value of a write argument no check pins (a reason, a quantity, the items of a return); the
other branch of an ``OR`` over two write tools; paying by gift card instead of card (the payment method is no
target); a record id the database generated (a write is identified by the record it acts on, never by the id
it creates). What fails: a write of a tool the plan never writes and no check names, or of a record neither the
plan nor an atom pinning it names. A refused attempt (a tool error) is never an unrequested write: the checks
judge attempts, the rule judges changes.

Limits: the rule compares tools and targets, not values, so a requested write with a wrong unpinned value (a
return of the wrong item of the right order) or a requested write made twice still passes; a write of another
record passes when the check's atom pins no target and the plan writes nothing with that tool (an ``OR``
branch the plan did not take); a case without a stored oracle plan (the hand-written starter suite) is not
graded for writes (:func:`unrequested_writes` returns None).

Whether a step is unrequested depends on that step alone, never on later steps: the unrequested writes of a
prefix of a trace are a prefix of the trace's (dense rewards charge each on the step it happens).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, JsonValue

from mantra_env.case import CaseCheck, PlannedCall
from mantra_env.checks import Call, Check
from mantra_env.checks.matching import match_all
from mantra_env.checks.semantics import CallLike
from mantra_env.tools import ToolSpec, with_list_order
from mantra_env.trace import ToolCall, Trace


class UnrequestedWrite(BaseModel):
    """One accepted write the case never asks for: the step, the tool and the arguments the agent sent."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    step: int
    tool: str
    args: dict[str, JsonValue]


class RequestedWrites:
    """The writes a case asks for, compiled once per case: the check atoms and plan targets a write may match."""

    __slots__ = ("_atoms", "_writes")

    def __init__(
        self, checks: Sequence[CaseCheck | Check], oracle_plan: Sequence[PlannedCall], tools: Sequence[ToolSpec]
    ) -> None:
        writes = {spec.name: spec for spec in tools if spec.kind == "write"}
        self._writes = frozenset(writes)
        atoms: dict[str, Call] = {}
        targets: dict[str, tuple[str, ...]] = {}
        for planned in oracle_plan:
            if planned.tool in writes:
                if planned.tool not in targets:
                    targets[planned.tool] = writes[planned.tool].targets()
                pinned = {name: planned.arguments[name] for name in targets[planned.tool] if name in planned.arguments}
                planned_atom = _paired_as_schema_says(Call(tool=planned.tool, args=pinned), writes)
                atoms.setdefault(planned_atom.match_key, planned_atom)
        for entry in checks:
            check = entry.check if isinstance(entry, CaseCheck) else entry
            for atom in check.atoms:
                if not isinstance(atom, Call) or atom.tool not in writes or atom.match_key in atoms:
                    continue
                named = targets.get(atom.tool)  # None: the plan writes nothing with this tool
                if named is None or all(name in atom.args for name in named):
                    atoms[atom.match_key] = atom  # as the grader matches it
        self._atoms = tuple(atoms.values())

    def unrequested(self, calls: Sequence[ToolCall]) -> tuple[UnrequestedWrite, ...]:
        """The unrequested writes among ``calls`` (steps as numbered in ``calls``)."""
        accepted = [call for call in calls if call.error is None and call.tool in self._writes]
        if not accepted:
            return ()
        allowed = self._allowed(accepted)
        return tuple(
            UnrequestedWrite(step=call.step, tool=call.tool, args=call.args)
            for position, call in enumerate(accepted)
            if position not in allowed
        )

    def is_unrequested(self, call: ToolCall) -> bool:
        """Whether one call is an unrequested write (the rule depends on the call alone)."""
        return call.error is None and call.tool in self._writes and not self._allowed([call])

    def _allowed(self, calls: Sequence[CallLike]) -> set[int]:
        """Positions in ``calls`` matching some atom a write may match."""
        if not self._atoms:
            return set()
        return {position for steps in match_all(self._atoms, calls).values() for position in steps}


def _paired_as_schema_says(atom: Call, specs: Mapping[str, ToolSpec]) -> Call:
    """``atom`` with its paired lists taken from the tool schema, as the grader's checks are stamped."""
    if not any(type(value) is list for value in atom.args.values()):
        return atom
    stamped = with_list_order(atom, specs)
    assert isinstance(stamped, Call)
    return stamped


def unrequested_writes(
    trace: Trace,
    checks: Sequence[CaseCheck | Check],
    oracle_plan: Sequence[PlannedCall] | None,
    tools: Sequence[ToolSpec],
) -> tuple[UnrequestedWrite, ...] | None:
    """The accepted writes of ``trace`` that the case never asks for (see the module), in step order.

    Returns None when the case has no stored oracle plan: it is not graded for writes.
    """
    if oracle_plan is None:
        return None
    return requested_writes(checks, oracle_plan, tools).unrequested(trace.calls)


_COMPILED: dict[tuple[int, int, int], tuple[object, object, object, RequestedWrites]] = {}
_COMPILED_LIMIT = 4096


def requested_writes(
    checks: Sequence[CaseCheck | Check], oracle_plan: Sequence[PlannedCall], tools: Sequence[ToolSpec]
) -> RequestedWrites:
    """:class:`RequestedWrites` for a case, memoised by the identity of its inputs (the runner, the export and
    rejection sampling grade many episodes of one case with the same objects; compiling costs ~0.1 ms). The memo
    holds the inputs, so that an id in its key cannot be reused by another object while the entry lives."""
    key = (id(checks), id(oracle_plan), id(tools))
    entry = _COMPILED.get(key)
    if entry is not None and entry[0] is checks and entry[1] is oracle_plan and entry[2] is tools:
        return entry[3]
    if len(_COMPILED) >= _COMPILED_LIMIT:
        _COMPILED.clear()
    compiled = RequestedWrites(checks, oracle_plan, tools)
    _COMPILED[key] = (checks, oracle_plan, tools, compiled)
    return compiled
