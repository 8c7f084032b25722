"""The live snapshot's cost: one snapshot (CHECKPOINT, a copy by a short-lived process, rename) of a rollout
database of N episodes, which a run's writer takes at most every ``SNAPSHOT_INTERVAL_S`` (2 s) while it commits.

Run: ``.venv/bin/python benchmarks/snapshot.py [--episodes N]``. Target: under 5 % of the writer's time at the
default interval, i.e. a snapshot under 100 ms for a database of a few thousand episodes.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mantra_env.store import RolloutStore, appender
from tests.store.test_store import _run
from tests.store.test_writer import _episodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=2000)
    args = parser.parse_args()
    calibration = min(timeit.repeat("sum(range(1000))", number=10_000, repeat=5)) / 10_000 * 1e6
    print(f"calibration: sum(range(1000)) takes {calibration:.2f} us")
    with tempfile.TemporaryDirectory() as folder:
        db = str(Path(folder) / "bench.duckdb")
        with RolloutStore(db) as store:
            store.start_run(_run())
            for episode in _episodes(args.episodes):
                store.record_episode(episode)
        conn = appender.connect(db)
        snapshots = appender.Snapshots(conn, db, 0.0)
        times = []
        for _ in range(7):
            snapshots.stale = True
            started = time.perf_counter()
            snapshots.take_if_due()
            times.append(time.perf_counter() - started)
        size = Path(snapshots.target).stat().st_size / 1e6
        conn.close()
    best, median = min(times) * 1e3, sorted(times)[len(times) // 2] * 1e3
    share = median / 1e3 / appender.SNAPSHOT_INTERVAL_S
    print(
        f"{args.episodes} episodes, {size:.1f} MB: a snapshot takes {best:.1f} ms (best of 7), {median:.1f} ms "
        f"(median): {share:.1%} of the writer's time at one per {appender.SNAPSHOT_INTERVAL_S:g} s"
    )


if __name__ == "__main__":
    main()
