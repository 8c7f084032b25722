"""A suite's refusal share: the share of its cases whose stored oracle plan writes nothing.

On such a case the compliant run reads and declines, so the scripted ``decline`` baseline (the oracle's reads, no
write, a refusal) passes it: the refusal share is the best Pass@1 any policy that never writes can score, the
floor a model's score reads against. A case without a stored plan (a hand-written suite) cannot be classified
without solving it and is counted apart, as n/a.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from mantra_env.case import Case

__all__ = ["RefusalShare", "is_refusal", "refusal_share"]


def is_refusal(case: Case, kinds: Mapping[str, str]) -> bool | None:
    """Whether the case's stored oracle plan calls no write tool (``kinds``: tool name → ``read``/``write``);
    None when the case has no stored plan."""
    if case.oracle_plan is None:
        return None
    return not any(kinds.get(call.tool) == "write" for call in case.oracle_plan)


@dataclass(frozen=True, slots=True)
class RefusalShare:
    """How many of a suite's cases are refusals, of those whose oracle plan is stored."""

    suite: str
    refusals: int
    actions: int
    """Cases whose stored plan writes."""
    unplanned: int
    """Cases without a stored plan: not classified."""

    @property
    def cases(self) -> int:
        return self.refusals + self.actions + self.unplanned

    @property
    def share(self) -> float:
        """Refusals over the cases with a stored plan (NaN: none has one)."""
        planned = self.refusals + self.actions
        return self.refusals / planned if planned else math.nan

    def text(self) -> str:
        """``57.5% (46 of 80 cases with a stored plan)``; cases without a stored plan are counted as n/a."""
        planned = self.refusals + self.actions
        parts = [f"{self.refusals} of {planned} cases with a stored plan"] if planned else []
        if self.unplanned:
            parts.append(f"{self.unplanned} case(s) without a stored plan: n/a")
        share = "n/a" if math.isnan(self.share) else f"{self.share:.1%}"
        return f"{share} ({'; '.join(parts)})" if parts else f"{share} (no cases)"


def refusal_share(suite: str, cases: Iterable[Case], kinds: Mapping[str, str]) -> RefusalShare:
    """The refusal share of ``cases`` (named ``suite`` in tables), see :func:`is_refusal`."""
    verdicts = [is_refusal(case, kinds) for case in cases]
    return RefusalShare(
        suite=suite,
        refusals=sum(verdict is True for verdict in verdicts),
        actions=sum(verdict is False for verdict in verdicts),
        unplanned=sum(verdict is None for verdict in verdicts),
    )
