"""Runner overhead: what the harness costs per episode when the model answers instantly.

Run: ``.venv/bin/python benchmarks/runner.py [--episodes N]``. The strands agent runs against litellm's own
mock (``mock_response``: no HTTP, no model), so the time is the harness's: building the agent and its 20
tools, the strands loop, litellm's request path, the environment and one DuckDB transaction per episode.
Target: <= 5 ms per episode sequentially; also reported: throughput with 64 episodes in flight, and the
scripted oracle (no model at all) for comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1]))

from agents.base import ScriptedAgent
from agents.models import ModelConfig
from agents.scripted import OraclePolicy
from agents.strands_agent import StrandsAgent
from mantra_env.domains import find_suite
from mantra_env.runner import RunSettings, run_suite
from mantra_env.store import RolloutStore
from mantra_env.store.records import RunRecord

TARGET_MS = 5.0


def timed(make_agent: Callable[[], Any], episodes: int, concurrency: int) -> float:
    """Seconds per episode for ``episodes`` episodes (attempts of the starter cases) at ``concurrency``."""
    domain, suite = find_suite("operations")
    assert domain is not None
    attempts = max(1, episodes // len(suite.cases))
    with tempfile.TemporaryDirectory() as scratch, RolloutStore(Path(scratch) / "bench.duckdb") as store:
        record = RunRecord(run_id="bench", suite="operations/starter", model="mock", agent="bench")
        settings = RunSettings(attempts=attempts, concurrency=concurrency, retries=0)
        started = time.perf_counter()
        progress = asyncio.run(run_suite(store, record, suite, domain, make_agent, settings))
        return (time.perf_counter() - started) / progress.done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=140)
    args = parser.parse_args()
    mock = ModelConfig(alias="mock", model="openai/mock", api_key="none", params={"mock_response": "Done."})
    strands = lambda: StrandsAgent(mock)  # noqa: E731
    oracle = lambda: ScriptedAgent(OraclePolicy())  # noqa: E731
    timed(strands, 14, 1)  # warm-up: imports, first litellm call
    for name, factory in (("strands agent, instant mock model", strands), ("scripted oracle, no model", oracle)):
        sequential = timed(factory, args.episodes, 1) * 1000
        parallel = timed(factory, args.episodes, 64)
        print(f"{name}:")
        print(
            f"  sequential: {sequential:.1f} ms per episode ({sequential / TARGET_MS:.2f}x the {TARGET_MS:g} ms target)"
        )
        print(f"  64 in flight: {1 / parallel:,.0f} episodes/s")


if __name__ == "__main__":
    main()
