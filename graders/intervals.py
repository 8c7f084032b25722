"""The one way an estimate is written: ``value [low, high]`` in %, with how it was computed when that is not the
task bootstrap, and its coverage when some tasks were left out. The run summary, the report, the notebooks and
the viewer all use :func:`format_estimate`, so an interval reads the same everywhere.

``x ± y`` is not used: the intervals are asymmetric (near 0 % and 100 % very much so), and ``1.2 ± 1.9`` would
suggest a negative bound.
"""

from __future__ import annotations

import math

from mantra_env.graders.metrics import Estimate


def _bound(value: float, scale: float, digits: int, signed: bool) -> str:
    return f"{scale * value:{'+' if signed else ''}.{digits}f}"


def coverage(estimate: Estimate) -> str:
    """``8 of 10 tasks`` when some tasks had fewer scored attempts than the estimate needs (:attr:`Estimate.k`),
    else ``""``."""
    return f"{estimate.tasks} of {estimate.of} tasks" if estimate.tasks < estimate.of else ""


def format_estimate(estimate: Estimate, *, scale: float = 100.0, digits: int = 1, signed: bool = False) -> str:
    """``62.5 [40.0, 85.0]`` (a share in %, its 95 % interval); ``100.0 [95.4, 100.0] Wilson`` when the interval is
    a Wilson bound; ``..., 8 of 10 tasks (...)`` when tasks were left out; ``n/a (...)`` when no task counts.

    ``scale=1`` writes plain numbers (e.g. checks per case), ``signed`` a difference (``+12.5 [-3.0, +25.0]``).
    """
    if math.isnan(estimate.value):
        if estimate.of:
            need = "a scored attempt" if estimate.k <= 1 else f"{estimate.k} scored attempts"
            return f"n/a (no task of {estimate.of} has {need})"
        return "n/a"
    text = _bound(estimate.value, scale, digits, signed)
    if not math.isnan(estimate.low):
        text += f" [{_bound(estimate.low, scale, digits, signed)}, {_bound(estimate.high, scale, digits, signed)}]"
    if estimate.method == "Wilson":
        text += " Wilson"
    left_out = coverage(estimate)
    return f"{text}, {left_out}" if left_out else text
