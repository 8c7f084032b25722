"""Episode rewards from a verdict: credit for what an agent did, never for what it did not do.

A check is an **obligation** iff it fails on the empty trace (``CALL A``, ``FOLLOWS``, ``PRECEDES``, an ``OR``
of obligations): only an action can meet it. Every other check (``NO-CALL``, the conditionals ``AFTER`` and
``BEFORE``, an ``OR`` with such a branch) is a **prohibition**: an agent that does nothing keeps it, so keeping
it earns nothing, and breaking it costs as much as an obligation is worth. With ``k`` obligations:

* ``binary``: 1 iff every check passes and no write was unrequested (the verdict's ``passed``).
* ``fraction``: (obligations met - prohibitions broken) / k, floored at 0, where each unrequested write
  (:mod:`mantra_env.unrequested`) counts as one more broken prohibition. The no-op agent earns 0 on every
  case with an obligation; a compliant trace earns 1; any failed check (a missing call, an order violation,
  a forbidden call) or unrequested write costs 1/k. A case with no obligation has nothing to earn: its reward
  is ``binary``'s.
* ``shaped``: ``fraction`` minus ``TOOL_ERROR_PENALTY`` (0.02) per tool error, floored at 0.

A read a check pins by its arguments that finds nothing (``not_found``) is no tool error here or at the export's
screen (:func:`expected_misses`): the check requires that lookup, as when the procedure has the agent try the
email the customer gave before the name and zip code and the email is not on file.

A **dense** variant of each mode pays, after every step, the change of the mode's reward of the trace so far
(the potential ``phi(trace)``, with ``phi`` of the empty trace taken as 0): potential-based shaping, so the
rewards of an episode sum to its final reward exactly, and the optimal policy is unchanged. An unrequested write
lowers the potential on the step it happens (whether a write is unrequested depends on that call alone).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from mantra_env.case import CaseCheck
from mantra_env.checks import TraceIndex, evaluate
from mantra_env.checks.ast import Call
from mantra_env.checks.matching import match_all
from mantra_env.trace import ToolCall
from mantra_env.verdict import Verdict

RewardMode = Literal["binary", "fraction", "shaped"]
REWARD_MODES: tuple[RewardMode, ...] = ("binary", "fraction", "shaped")
TOOL_ERROR_PENALTY = 0.02

_EMPTY = TraceIndex([])


def obligations(checks: Sequence[CaseCheck]) -> tuple[bool, ...]:
    """For each check, whether it is an obligation (fails on the empty trace)."""
    return tuple(not evaluate(entry.check, _EMPTY).passed for entry in checks)


def reward(mode: RewardMode, verdict: Verdict, obligation: Sequence[bool], tool_errors: int) -> float:
    """The reward of ``verdict`` (its checks in the order of ``obligation``) under ``mode``; see the module."""
    if mode == "binary":
        return 1.0 if verdict.passed else 0.0
    owed = sum(obligation)
    if owed == 0:
        credit = 1.0 if verdict.passed else 0.0
    else:
        met = sum(1 for check, owing in zip(verdict.checks, obligation, strict=True) if owing and check.passed)
        broken = sum(
            1 for check, owing in zip(verdict.checks, obligation, strict=True) if not owing and not check.passed
        ) + len(verdict.unrequested_writes or ())
        credit = max(0.0, (met - broken) / owed)
    if mode == "shaped":
        credit = max(0.0, credit - TOOL_ERROR_PENALTY * tool_errors)
    return credit


def expected_misses(checks: Sequence[CaseCheck], calls: Sequence[ToolCall]) -> set[int]:
    """Steps of ``calls`` that are reads a check pins by its arguments and that found nothing (``not_found``)."""
    misses = [c for c in calls if c.kind == "read" and c.error is not None and c.error.code == "not_found"]
    if not misses:
        return set()
    atoms = [atom for entry in checks for atom in entry.check.atoms if isinstance(atom, Call) and atom.args]
    if not atoms:
        return set()
    matched = match_all(atoms, calls)
    pinned = {step for atom in atoms for step in matched[atom.match_key]}
    return {call.step for call in misses if call.step in pinned}
