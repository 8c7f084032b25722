"""Issue 31 in the runner: the env's end-of-episode verdict (checks and unrequested writes, one computation) is
what a run stores, both parts apart, under the run's grader version."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from mantra_env.agents.base import AgentReport
from mantra_env.env import MantraEnv
from mantra_env.graders.analysis import failure_categories, summarize_run
from mantra_env.grading import GRADER_VERSION
from mantra_env.runner import RunSettings, run_suite
from mantra_env.store import RolloutStore
from mantra_env.store.records import RunRecord
from tests.env.test_env import CALL_CHECK, CALL_ORDER, DOMAIN, FINAL
from tests.env.test_rewards import CALL_C3, PLANNED_SUITE


class Actions:
    """Plays fixed actions: attempt 0 the plan and an order of C3 nobody asked for, attempt 1 the plan alone."""

    name = "fixed"

    async def run(self, env: MantraEnv, case_id: str, seed: int) -> AgentReport:
        env.reset(seed=seed, options={"case": case_id})
        extra: list[Any] = [CALL_C3] if seed % 2 == 0 else []
        for action in [CALL_CHECK, CALL_ORDER, *extra, FINAL]:
            env.step(action)
        return AgentReport()


def test_a_run_stores_the_checks_verdict_and_the_unrequested_writes_apart(tmp_path: Path) -> None:
    record = RunRecord(run_id="r", suite="shop/shop", model="test", agent="fixed")
    with RolloutStore(tmp_path / "r.duckdb") as store:
        asyncio.run(run_suite(store, record, PLANNED_SUITE, DOMAIN, Actions, RunSettings(attempts=2)))
        rows = store.query(
            "SELECT attempt, status, reward, all_checks_passed, unrequested_writes FROM episodes ORDER BY attempt"
        )
        writes = store.query("SELECT attempt, step, tool FROM v_unrequested_writes")
        categories = {(c.category, c.count) for c in failure_categories(store)}
        summary = summarize_run(store, "r", k=1)
        stored = store.run_record("r")
    assert [(a, s, r, c, None if w is None else json.loads(w)) for a, s, r, c, w in rows] == [
        (0, "failed", 0.0, True, [{"step": 2, "tool": "create_purchase_order",
                                    "args": {"item_id": "C3", "quantity": 1}}]),
        (1, "passed", 1.0, True, []),
    ]  # fmt: skip
    assert writes == [(0, 2, "create_purchase_order")]
    assert categories == {("unrequested_write", 1)}
    assert (summary.pass_at_1.value, summary.graded_for_writes, summary.unrequested_write_rate) == (0.5, 2, 0.5)
    assert stored is not None and stored.grader_version == GRADER_VERSION
