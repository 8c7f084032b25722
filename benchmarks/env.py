"""Environment throughput: steps per second with a scripted policy, on one core.

Run: ``.venv/bin/python benchmarks/env.py [--episodes N]``. Target: >= 10,000 steps/s (for comparison, tau2-bench's
gym polls a worker thread every 10 ms, i.e. at most 100 steps/s). Reports best and median of 5 repeats (CPU time)
for two workloads, reset (fresh database) and grading included:

* ``operations``: the operations starter suite, every case in turn, replayed by the oracle (its plans are
  computed once, before timing: the SMT solve is not part of an environment step);
* ``minimal``: a two-tool test domain, which shows the environment's own overhead.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1]))

from agents.scripted import FINAL, action_text, oracle_plan
from mantra_env.domains import find_suite
from mantra_env.env import MantraEnv
from tests.env.test_env import CALL_CHECK, CALL_ORDER, DOMAIN, SUITE

TARGET = 10_000


def measure(env: MantraEnv, episodes: Sequence[tuple[str, Sequence[Any]]], count: int, repeats: int) -> list[float]:
    rates = []
    for _ in range(repeats):
        steps = 0
        start = time.process_time()
        for number in range(count):
            case_id, actions = episodes[number % len(episodes)]
            env.reset(seed=number, options={"case": case_id})
            for action in actions:
                env.step(action)
                steps += 1
        rates.append(steps / (time.process_time() - start))
    return rates


def report(name: str, rates: list[float], detail: str) -> None:
    best, median = max(rates), statistics.median(rates)
    print(f"{name}: {detail}")
    print(f"  best {best:,.0f} steps/s, median {median:,.0f} steps/s ({median / TARGET:.2f}x the {TARGET:,} target)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    domain, suite = find_suite("operations")
    assert domain is not None
    tools = domain.tool_specs()
    plans = [(case.id, [*map(action_text, oracle_plan(case, tools)), action_text(FINAL)]) for case in suite.cases]
    steps = sum(len(actions) for _, actions in plans) / len(plans)
    rates = measure(MantraEnv(suite, domain, max_steps=50), plans, args.episodes, args.repeats)
    report("operations", rates, f"{len(plans)} starter cases replayed by the oracle, {steps:.1f} steps per episode")

    minimal = [CALL_CHECK, CALL_ORDER, CALL_CHECK, CALL_CHECK, CALL_ORDER, CALL_CHECK, CALL_CHECK, CALL_CHECK, FINAL]
    rates = measure(MantraEnv(SUITE, DOMAIN, max_steps=50), [(SUITE.cases[0].id, minimal)], args.episodes, args.repeats)
    report("minimal", rates, f"one case, {len(minimal)} steps per episode")


if __name__ == "__main__":
    main()
