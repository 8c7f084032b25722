"""The review app's "Re-run the solver" on a 20-tool case at h = 16: forward, every backward query and the
compliant witness, exactly what the button runs (:func:`mantra_env.generators.review.state.solve`).

Run: ``.venv/bin/python benchmarks/review.py [--repeats R]``. Target (issue 18): under a second per case on the
machine the targets were set on (where ``sum(range(1000))`` takes about 25 us). Each case of the operations
starter suite (20 tools) is solved as a fresh review of it; the line per case shows the best and median of R
repeats, the last line the worst case's best and the calibration measured in the same run.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
import timeit

from mantra_env.case import Case
from mantra_env.domains import find_suite
from mantra_env.generators.artifacts import Scenario, ScenarioDraft
from mantra_env.generators.review.state import SampleReview, solve
from mantra_env.worldmodel import format_model, parse_model
from mantra_env.worldmodel.printer import format_expr

BOUND = 16


def review_of(case: Case) -> tuple[SampleReview, Scenario]:
    """The review of ``case`` as the app would hold it (its model, checks and valuation; the goal in the model)."""
    model = parse_model(case.world_model)
    goal = [format_expr(expr) for expr in model.goal]  # a review keeps the goal per scenario, out of the model
    review = SampleReview(
        sample_id=case.id,
        model=format_model(dataclasses.replace(model, goal=())),
        checks={case.id: list(case.checks)},
        goals={case.id: goal},
        initial={},
    )
    draft = ScenarioDraft(prompt=case.scenario.prompt, external=case.scenario.external, internal=case.scenario.internal)
    return review, Scenario(id=case.id, sample_id=case.id, draft=draft)


def calibration() -> float:
    """Microseconds of ``sum(range(1000))`` (best of 5 x 10,000)."""
    return min(timeit.repeat("sum(range(1000))", number=10_000, repeat=5)) / 10_000 * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    domain, suite = find_suite("operations/starter")
    assert domain is not None
    tools = domain.tool_specs()
    print(f"{len(suite.cases)} cases of operations/starter, {len(tools)} tools, h = {BOUND}")
    worst = 0.0
    for case in suite.cases:
        review, scenario = review_of(case)
        times = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            report = solve(review, scenario, tools, BOUND)
            times.append(time.perf_counter() - started)
        assert not report.error, report.error
        assert report.clean, f"{case.id}: a validated starter case must solve clean"
        worst = max(worst, min(times))
        best, median = min(times) * 1000, statistics.median(times) * 1000
        print(f"{case.id:<28} best {best:7.0f} ms  median {median:7.0f} ms  clean")
    print(f"slowest case (best of {args.repeats}): {worst * 1000:.0f} ms (target < 1000 ms at 25 us calibration)")
    print(f"calibration: sum(range(1000)) takes {calibration():.2f} us")


if __name__ == "__main__":
    main()
