"""Finding domains and suites: what ``import mantra_env`` adds to register every suite's gymnasium ids, and what a
suite name costs (``--suite operations``, ``gym.make``), with the entry-point scan cached and not.

Run: ``.venv/bin/python benchmarks/discovery.py [--repeats R]``. Targets: registering the ids <= 5 ms, a cached
domain lookup <= 1 ms, ``find_suite("operations")`` <= 25 ms (it loads and checks the 14 starter cases).
Reports the best and the median of R repeats (wall time).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from mantra_env.domains import find_suite
from mantra_env.domains.discovery import _entry_points_on, domain_sources
from mantra_env.registration import catalog


def timed(work: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Best and median milliseconds of ``repeats`` runs."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return min(times), statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    start = time.perf_counter()
    sum(range(1000))
    print(f"calibration: sum(range(1000)) = {(time.perf_counter() - start) * 1e6:.1f} us")

    def uncached() -> object:
        _entry_points_on.cache_clear()
        return domain_sources()

    for label, work in (
        ("domain_sources, entry points scanned", uncached),
        ("domain_sources, cached", domain_sources),
        ("catalog (registration: folders + manifests)", catalog),
        ("find_suite('operations')", lambda: find_suite("operations")),
    ):
        best, median = timed(work, args.repeats)
        print(f"{label:<46} best {best:8.2f} ms   median {median:8.2f} ms")


if __name__ == "__main__":
    main()
