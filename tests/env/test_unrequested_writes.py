"""The unrequested-write rule on shipped cases, with hand-made traces through the env: the wrong agents the checks
let through now fail, and the legitimate alternatives still pass (rule and limits: mantra_env/unrequested.py)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest

from mantra_env.case import PlannedCall
from mantra_env.domains import find_suite
from mantra_env.env import MantraEnv
from mantra_env.verdict import Verdict
from tests.env.test_env import DOMAIN, case
from tests.env.test_rewards import PLANNED_SUITE

Call = dict[str, Any]


@cache
def shipped(suite: str) -> MantraEnv:
    domain, loaded = find_suite(suite)
    assert domain is not None
    return MantraEnv(loaded, domain)


def plan(suite: str, case_id: str) -> list[Call]:
    planned = shipped(suite).suite.case(case_id).oracle_plan
    assert planned is not None
    return [{"tool": call.tool, "arguments": call.arguments} for call in planned]


def verdict(suite: str, case_id: str, actions: list[Call]) -> Verdict:
    env = shipped(suite)
    env.reset(options={"case": case_id})
    for action in actions:
        env.step(json.dumps(action))
    env.step(json.dumps({"final_answer": "done"}))
    assert env.last_verdict is not None
    return env.last_verdict


def call(tool: str, **arguments: Any) -> Call:
    return {"tool": tool, "arguments": arguments}


def test_the_oracle_plans_make_no_unrequested_write() -> None:
    for suite, case_id in [("telecom", "generated-s003-2"), ("operations/generated", "generated-s010-1")]:
        result = verdict(suite, case_id, plan(suite, case_id))
        assert result.passed and result.unrequested_writes == ()


WRONG_AGENTS = [
    # The customer asks about picture messages on a suspended line; the agent resumes it.
    ("telecom", "generated-s003-2", call("resume_line", line_id="L5278040")),
    # A standard purchase order within the employee's limit; the agent escalates it anyway.
    ("operations/generated", "generated-s010-1", call("escalate_to_manager", request_id="HW-2863", reason="check")),
    # The customer asks for a compensation certificate; the agent also cancels the reservation.
    ("airline", "generated-s023-4", call("cancel_reservation", reservation_id="SL2ATU", reason="change of plan")),
    # The customer asks to change a pending order's address; the agent cancels the order.
    ("retail", "generated-s024-1", call("cancel_pending_order", order_id="#W7301728", reason="no longer needed")),
    # Roaming on the line the customer called about, and on their other line: the checks order the writes with
    # an atom that names no line (CALL get_line_details(...) PRECEDES CALL enable_roaming()).
    ("telecom", "generated-s008-2", call("enable_roaming", line_id="L5476276")),
    # The customer's second phone stays at home: suspend that line, and the agent suspends the first one too.
    ("telecom", "generated-s013-2", call("suspend_line", line_id="L3900029", reason="customer_request")),
]


@pytest.mark.parametrize(("suite", "case_id", "wrong"), WRONG_AGENTS, ids=[f"{w[0]}-{w[1]}" for w in WRONG_AGENTS])
def test_an_accepted_write_nobody_asked_for_fails_although_every_check_passes(
    suite: str, case_id: str, wrong: Call
) -> None:
    actions = plan(suite, case_id)
    result = verdict(suite, case_id, [*actions, wrong])
    assert result.checks_passed, "the checks let this wrong agent through (the reason for the rule)"
    assert not result.passed
    assert [(w.step, w.tool, w.args) for w in result.unrequested_writes or ()] == [
        (len(actions), wrong["tool"], wrong["arguments"])
    ]


def test_another_value_of_a_write_argument_no_check_pins_passes() -> None:
    suite, case_id = "operations/generated", "generated-s000-1"
    actions = plan(suite, case_id)
    (booking,) = [action for action in actions if action["tool"] == "book_travel"]
    assert booking["arguments"]["destination"] == "Munich, Germany"
    booking["arguments"]["destination"] = "Munich"
    result = verdict(suite, case_id, actions)
    assert result.passed and result.unrequested_writes == ()


def test_a_transfer_summary_in_other_words_passes() -> None:
    suite, case_id = "telecom", "generated-s000-4"
    actions = plan(suite, case_id)
    actions[-1] = call("transfer_to_human_agents", summary="No service for two days; outage and diagnostics clean.")
    assert verdict(suite, case_id, actions).passed


def test_a_refused_write_is_never_unrequested_and_an_id_in_other_case_is_another_record() -> None:
    suite, case_id = "telecom", "generated-s003-2"
    # The line id in lower case names no line: the env refuses the call, so it changes nothing and never counts.
    result = verdict(suite, case_id, [*plan(suite, case_id), call("resume_line", line_id="l5278040")])
    assert result.passed and result.unrequested_writes == ()
    suite, case_id = "retail", "generated-s024-1"
    actions = plan(suite, case_id)
    actions[-1]["arguments"]["order_id"] = "#w7301728"  # not the order the plan changes
    result = verdict(suite, case_id, actions)
    assert result.unrequested_writes == () and not result.checks_passed  # refused: the checks judge the attempt


def test_generated_record_ids_do_not_identify_a_write() -> None:
    # Both orders are plan writes; made in the other order, each purchase order gets the other's generated id
    # (PO-1, PO-2): a comparison of records with the oracle's replay would fail it, the rule does not.
    both = case("out-of-stock").model_copy(
        update={
            "oracle_plan": [
                PlannedCall(tool="check_inventory", arguments={"item_id": "A1"}),
                PlannedCall(tool="create_purchase_order", arguments={"item_id": "A1", "quantity": 1}),
                PlannedCall(tool="create_purchase_order", arguments={"item_id": "C3", "quantity": 1}),
            ]
        }
    )
    env = MantraEnv(PLANNED_SUITE.model_copy(update={"cases": [both]}), DOMAIN, case=0)
    env.reset()
    results = []
    for action in (
        call("check_inventory", item_id="A1"),
        call("create_purchase_order", item_id="C3", quantity=1),
        call("create_purchase_order", item_id="A1", quantity=1),
        {"final_answer": "ordered"},
    ):
        observation, *_ = env.step(json.dumps(action))
        results.append(json.loads(observation))
    assert results[1:3] == [{"result": "PO-1"}, {"result": "PO-2"}]  # the oracle's run gives A1 PO-1
    assert env.last_verdict is not None and env.last_verdict.passed and env.last_verdict.unrequested_writes == ()
