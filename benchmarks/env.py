"""Environment throughput: steps per second with a scripted policy, on one core.

Run: ``.venv/bin/python benchmarks/env.py [--episodes N]``. Target: >= 10,000 steps/s (for comparison, tau2-bench's
gym polls a worker thread every 10 ms, i.e. at most 100 steps/s). Reports best and median of 5 repeats (CPU time).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from mantra_env.env import MantraEnv
from tests.env.test_env import CALL_CHECK, CALL_ORDER, DOMAIN, FINAL, SUITE

POLICY = [CALL_CHECK, CALL_ORDER, CALL_CHECK, CALL_CHECK, CALL_ORDER, CALL_CHECK, CALL_CHECK, CALL_CHECK, FINAL]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    env = MantraEnv(SUITE, DOMAIN, max_steps=50)
    rates = []
    for _ in range(args.repeats):
        steps = 0
        start = time.process_time()
        for episode in range(args.episodes):
            env.reset(seed=episode)
            for action in POLICY:
                env.step(action)
                steps += 1
        rates.append(steps / (time.process_time() - start))
    best, median = max(rates), statistics.median(rates)
    print(f"{args.episodes} episodes x {len(POLICY)} steps (reset and grading included), {args.repeats} repeats")
    print(f"throughput: best {best:,.0f} steps/s, median {median:,.0f} steps/s on one core (CPU time)")
    print(f"target >= 10,000 steps/s: best is {best / 10_000:.2f}x, median {median / 10_000:.2f}x the target")


if __name__ == "__main__":
    main()
