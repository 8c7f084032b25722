"""The checks stage's hygiene (issue 33 item 5), gated by config keys: pins that break the tool schema come back as
a syntactic repair, and pins on free-text parameters are flagged by a lint."""

from __future__ import annotations

from typing import Any

import pytest

from mantra_env.case import CaseCheck
from mantra_env.checks import parse_check
from mantra_env.generators.answers import rebuild_check
from mantra_env.generators.artifacts import CheckDraft, CheckSet, ScenarioChecks
from mantra_env.generators.checkgen import ChecksCheck, parse_check_set
from mantra_env.generators.config import CheckSettings
from mantra_env.generators.llm import RepairNeeded, accept
from mantra_env.lints import free_text_pins
from mantra_env.tools import ToolSpec


def spec(name: str, kind: str, **properties: dict[str, Any]) -> ToolSpec:
    parameters = {"type": "object", "properties": properties, "required": [], "additionalProperties": False}
    return ToolSpec(name=name, kind=kind, parameters=parameters)  # type: ignore[arg-type]


TOOLS = [
    spec("get_order", "read", order_id={"type": "string"}),
    spec(
        "refund",
        "write",
        order_id={"type": "string"},
        amount={"type": "integer"},
        reason={"type": "string", "x-free-text": True},
        mode={"type": "string", "enum": ["card", "credit"]},
    ),
]


def answer(*checks: str) -> CheckSet:
    return CheckSet(checks=[CheckDraft(id=f"k{i}", check=text) for i, text in enumerate(checks)])


def test_a_pin_that_breaks_the_schema_is_refused_with_the_repair_message_when_on() -> None:
    quoted = answer('CALL get_order(order_id="A1") PRECEDES CALL refund(order_id="A1", amount="90")')
    with pytest.raises(RepairNeeded) as raised:
        parse_check_set(quoted, TOOLS, refuse_unfit_pins=True)
    message = str(raised.value)
    assert 'pins amount="90", which does not fit refund\'s parameter amount' in message
    assert '"type": "integer"' in message and "a number unquoted" in message
    # an enum value the schema does not list, too
    with pytest.raises(RepairNeeded, match='pins mode="cash"'):
        parse_check_set(answer('CALL refund(mode="cash")'), TOOLS, refuse_unfit_pins=True)


def test_without_the_key_the_stage_accepts_what_it_accepted_before() -> None:
    (entry,) = parse_check_set(answer('CALL refund(amount="90")'), TOOLS)
    assert entry.text == 'CALL refund(amount="90")'
    assert CheckSettings().refuse_unfit_pins is False and CheckSettings().lint_free_text_pins is False


def test_fitting_pins_pass_the_strict_check() -> None:
    entries = parse_check_set(answer('CALL refund(order_id="A1", amount=90, mode="card")'), TOOLS, True)
    assert [e.id for e in entries] == ["k0"]


def test_the_answer_check_carries_the_key_and_rebuilds_from_the_request_context() -> None:
    strict = ChecksCheck(tools=TOOLS, refuse_unfit_pins=True)
    value, problem = accept(strict, answer('CALL refund(amount="90")').model_dump_json())
    assert value is None and "does not fit" in problem
    rebuilt = rebuild_check("check_generation", strict.model_dump(mode="json"))
    assert rebuilt == strict
    # off: the request's context is as it was before the key existed
    assert "refuse_unfit_pins" not in ChecksCheck(tools=TOOLS).model_dump(mode="json")


def test_the_lint_flags_a_positive_pin_on_free_text_only() -> None:
    checks = [
        CaseCheck(id="words", check=parse_check('CALL refund(order_id="A1", reason="damaged in transit")')),
        CaseCheck(id="ids", check=parse_check('CALL refund(order_id="A1")')),
        CaseCheck(id="never", check=parse_check('NO-CALL refund(reason="goodwill")')),
    ]
    (lint,) = free_text_pins("s000-1", checks, TOOLS)
    assert lint.code == "free_text_pinned" and lint.place == "s000-1: check words"
    assert "pins reason of refund" in lint.message


def test_the_checks_artifact_keeps_its_bytes_without_warnings() -> None:
    assert "warnings" not in ScenarioChecks(scenario_id="s000-1").model_dump(mode="json")
