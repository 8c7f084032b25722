"""Grader throughput: 20-call traces graded against 10 mixed checks, on one core.

Run: ``.venv/bin/python benchmarks/grader.py [--traces N]``. Target: >= 20,000 traces/s.
"""

from __future__ import annotations

import argparse
import random
import time

from graders import grade
from mantra_env.checks import parse_check
from mantra_env.trace import Trace

TOOLS = ["check_inventory", "assign_warehouse_picker", "create_purchase_order", "check_legacy_portal",
         "set_delivery_options", "get_request", "get_employee", "update_request_status"]  # fmt: skip
CHECKS = [
    parse_check(text)
    for text in (
        'CALL check_inventory(item_name="Dell UltraSharp U2723QE")',
        'CALL assign_warehouse_picker(item_id="HWM2741", quantity=1)',
        'CALL check_inventory() PRECEDES CALL assign_warehouse_picker(item_id="HWM2741")',
        "NO-CALL create_purchase_order()",
        'CALL set_delivery_options(item_id="HWM2741") FOLLOWS CALL assign_warehouse_picker(item_id="HWM2741")',
        'NO-CALL update_request_status(status="rejected") AFTER CALL assign_warehouse_picker()',
        'CALL get_request(request_id="HW-2841") BEFORE CALL update_request_status()',
        'CALL check_legacy_portal(item_id="HWM2741") OR NO-CALL create_purchase_order(priority="standard")',
        'NO-CALL get_employee(employee_id="E404") BEFORE CALL check_inventory()',
        'CALL update_request_status(request_id="HW-2841", status="fulfilled")',
    )
]


def make_traces(count: int, length: int, seed: int) -> list[Trace]:
    rng = random.Random(seed)
    traces = []
    for _ in range(count):
        calls = []
        for _ in range(length):
            tool = rng.choice(TOOLS)
            args = {"item_id": rng.choice(["HWM2741", "HWC9305"]), "quantity": rng.choice([1, 2, 1.0]),
                    "item_name": "Dell UltraSharp U2723QE", "request_id": "HW-2841",
                    "status": rng.choice(["fulfilled", "rejected", "pending"])}  # fmt: skip
            calls.append((tool, args))
        traces.append(Trace.of(*calls))
    return traces


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--traces", type=int, default=20_000)
    parser.add_argument("--length", type=int, default=20)
    args = parser.parse_args()
    traces = make_traces(args.traces, args.length, seed=7)
    for trace in traces[:200]:  # warm-up
        grade(trace, CHECKS)
    passed = 0
    start = time.process_time()
    for trace in traces:
        passed += grade(trace, CHECKS).passed
    elapsed = time.process_time() - start
    rate = len(traces) / elapsed
    print(f"graded {len(traces)} traces of {args.length} calls against {len(CHECKS)} checks in {elapsed:.2f} s CPU")
    print(f"throughput: {rate:,.0f} traces/s on one core (target >= 20,000; {rate / 20_000:.2f}x target)")
    print(f"({passed} traces passed every check)")


if __name__ == "__main__":
    main()
