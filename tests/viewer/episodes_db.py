"""A rollout database of hand-made episodes for the viewer's tests: one that errored, one with a tool error, a
malformed call and an unrequested write, one missing two calls, one with a forbidden call, one stored before
grader 2 (not graded for writes), and a second run of many episodes for paging."""

from __future__ import annotations

import json
from pathlib import Path

from mantra_env.checks import parse_check
from mantra_env.graders import grade
from mantra_env.store import EpisodeRecord, RolloutStore, RunRecord
from mantra_env.trace import ToolCall, ToolError, Trace
from mantra_env.unrequested import UnrequestedWrite
from mantra_env.verdict import Verdict

CHECKS = [
    parse_check("CALL check_inventory() PRECEDES CALL assign_picker()"),
    parse_check("NO-CALL create_po()"),
    parse_check("CALL notify_customer()"),
    parse_check("CALL escalate() OR CALL notify_customer()"),
]
KINDS = {"check_inventory": "read", "assign_picker": "write", "create_po": "write", "notify_customer": "write",
         "list_orders": "read", "refund": "write"}  # fmt: skip
ERROR_MESSAGE = "the model did not answer within 120 s (attempt 3 of 3)"
TOOL_ERROR = "no item SKU-9 in the warehouse: list the items first"
RAW_ARGUMENTS = '{"order_id": "O-17", "picker": '
LONG_RESULT = {"items": [{"sku": f"SKU-{i}", "name": f"item number {i}", "stock": i * 7} for i in range(40)]}
PAGED_EPISODES = 60
ORDER = {"order_id": "O-17", "status": "pending", "address": {"address1": "7546 Maple Way", "address2": "Suite 525",
         "city": "Denver", "zip": "80202"}, "items": [{"item_id": f"I-{i}", "name": f"monitor stand model {i}",
         "price": 19.5 + i, "options": {"colour": "black", "size": "large"}} for i in range(8)],
         "payment_history": [{"transaction": "payment", "amount": 240.0, "method": "credit_card_4421"}]}  # fmt: skip
MANUAL = "Warehouse procedure. " + " ".join(
    f"Rule {i}: check the stock of every item before assigning a picker, "
    "and never order from a supplier without approval."
    for i in range(60)
)
"""A system prompt of realistic length: the messages of a real episode carry the whole manual."""


def _call(step: int, tool: str, **fields: object) -> ToolCall:
    return ToolCall(step=step, tool=tool, kind=KINDS[tool], **fields)  # type: ignore[arg-type]


def _episode(case: str, calls: list[ToolCall], writes: tuple[UnrequestedWrite, ...] | None = ()) -> EpisodeRecord:
    trace = Trace(calls=tuple(calls), final_answer="Done: the order is assigned.")
    verdict = Verdict.combined(grade(trace, CHECKS).checks, writes)
    messages = [{"role": "system", "content": MANUAL}, {"role": "user", "content": "Please assign order O-17."}]
    return EpisodeRecord(run_id="r1", case_id=case, attempt=0, status="passed" if verdict.passed else "failed",
                         reward=1.0 if verdict.passed else 0.0, verdict=verdict, trace=trace,
                         messages=messages)  # type: ignore[arg-type]  # fmt: skip


def build(path: Path) -> Path:
    """Write the database to ``path``."""
    with RolloutStore(path) as store:
        store.start_run(RunRecord(run_id="r1", suite="ops/main", model="model-a", agent="a"))
        store.record_episode(EpisodeRecord(
            run_id="r1", case_id="errored", attempt=0, status="error", error_kind="timeout", error=ERROR_MESSAGE,
            trace=Trace(calls=(_call(0, "list_orders"),)),
        ))  # fmt: skip
        store.record_episode(_episode("tooling", [
            _call(0, "check_inventory", args={"sku": "SKU-9"}, error=ToolError(code="not_found", message=TOOL_ERROR)),
            _call(1, "check_inventory", args={"sku": "SKU-1"}, result=LONG_RESULT),
            _call(2, "assign_picker", raw_arguments=RAW_ARGUMENTS),
            _call(3, "notify_customer", args={"order_id": "O-17", "text": "assigned"}, result={"sent": True}),
            _call(4, "refund", args={"order_id": "O-17", "amount": 12.5}, result={"refunded": 12.5}),
        ], (UnrequestedWrite(step=4, tool="refund", args={"order_id": "O-17", "amount": 12.5}),)))  # fmt: skip
        store.record_episode(_episode("missing", [
            _call(0, "list_orders", result={"orders": ["O-17"]}),
            _call(1, "assign_picker", args={"order_id": "O-17"}, result={"ok": True}),
        ]))  # fmt: skip
        store.record_episode(_episode("forbidden", [  # four steps with results of a realistic size
            _call(0, "check_inventory", args={"sku": "SKU-1"}, result=ORDER),
            _call(1, "create_po", args={"sku": "SKU-1", "quantity": 40, "supplier": "ACME"}, result=ORDER),
            _call(2, "assign_picker", args={"order_id": "O-17"}, result=ORDER),
            _call(3, "notify_customer", args={"order_id": "O-17"}, result=ORDER),
        ]))  # fmt: skip
        store.record_episode(_episode("old", [_call(0, "check_inventory", args={"sku": "SKU-1"})], None))
        store.start_run(RunRecord(run_id="r2", suite="retail", model="model-b", agent="a"))
        trace = Trace(calls=(_call(0, "check_inventory"), _call(1, "assign_picker"), _call(2, "notify_customer")))
        for n in range(PAGED_EPISODES):
            store.record_episode(EpisodeRecord(run_id="r2", case_id=f"case-{n:03d}", attempt=0, status="passed",
                                               verdict=Verdict.combined(grade(trace, CHECKS).checks, ()),
                                               trace=trace))  # fmt: skip
    return path


def stored_writes(path: Path, case: str) -> object:
    """The stored ``unrequested_writes`` of case ``case`` of run r1 (parsed)."""
    with RolloutStore(path, read_only=True) as store:
        raw = store.query("SELECT unrequested_writes FROM episodes WHERE run_id = 'r1' AND case_id = ?", [case])
    return None if raw[0][0] is None else json.loads(raw[0][0])
