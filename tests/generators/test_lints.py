"""Argument-insensitive world models are warned about (mantra_env/lints.py): by the world-model stage without the
checks, and by the validation stage against the parameters the checks pin."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from mantra_env.case import CaseCheck
from mantra_env.checks import parse_check
from mantra_env.domains import load_domain
from mantra_env.generators.artifacts import Scenario, ScenarioDraft, WorldModelAnswer, WorldModelSchema
from mantra_env.generators.llm import AnswerCheck
from mantra_env.generators.prompts import full_pass
from mantra_env.generators.worldgen import generate_world_model
from mantra_env.lints import identifying_params, ignored_pins, insensitive_writes
from mantra_env.worldmodel import parse_model

TOOLS = load_domain("operations").tool_specs()
DECLARATIONS = "(var request_id String) (var item_id String) (var closed Bool) (var ordered Bool)"
SENSITIVE = """(model
  (var request_id String) (var item_id String) (var closed Bool) (var ordered Bool)
  (transition update_request_status
    (params (request_id req) (status st))
    (pre)
    (post (= (next closed) (or closed (and (= (param req) request_id) (= (param st) "ordered"))))))
  (transition create_purchase_order
    (params (item_id item))
    (pre)
    (post (= (next ordered) (or ordered (= (param item) item_id))))))"""
INSENSITIVE = """(model
  (var request_id String) (var item_id String) (var closed Bool) (var ordered Bool)
  (transition update_request_status
    (params (request_id req) (status st))
    (pre)
    (post (= (next closed) (= (param st) "ordered"))))
  (transition create_purchase_order
    (params (item_id item) (quantity q))
    (pre)
    (post (= (next ordered) true))))"""


def _checks(*texts: str) -> list[CaseCheck]:
    return [CaseCheck(id=f"c{n}", check=parse_check(text)) for n, text in enumerate(texts)]


def test_identifying_parameters_are_ids_or_else_the_required_ones() -> None:
    specs = {spec.name: spec for spec in TOOLS}
    assert identifying_params(specs["create_purchase_order"]) == ["item_id", "request_id"]
    assert identifying_params(specs["check_inventory"]) == ["item_name"]


def test_world_model_stage_warns_on_writes_that_ignore_every_identifying_parameter() -> None:
    assert insensitive_writes(parse_model(SENSITIVE), TOOLS) == []
    found = insensitive_writes(parse_model(INSENSITIVE), TOOLS)
    assert [(lint.code, lint.place) for lint in found] == [
        ("argument_insensitive_effect", "transition update_request_status (line 3)"),
        ("argument_insensitive_effect", "transition create_purchase_order (line 7)"),
    ]
    assert "ignores request_id" in found[0].message and "(param" in found[0].hint


class WorldWriter:
    """A client whose world-model writer answers ``model`` (the stage's checks decide, as in the repair loop)."""

    def __init__(self, model: str) -> None:
        self.model = model

    async def generate(self, stage: str, subject: str, messages: Any, answer: AnswerCheck[Any]) -> Any:
        if stage == "smt_schema_prepass":
            return answer.check(WorldModelSchema(declarations=DECLARATIONS, initial={"closed": False}))
        return answer.check(WorldModelAnswer(model=self.model, goals={"s001-1": ["closed"]}))


def test_world_model_artifact_records_the_warning_and_the_log_names_it(caplog: pytest.LogCaptureFixture) -> None:
    scenario = Scenario(id="s001-1", sample_id="s001", draft=ScenarioDraft(prompt="Close HW-2841."))
    run = generate_world_model(WorldWriter(INSENSITIVE), "s001", "excerpt", TOOLS, [scenario])  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger="mantra.generators.worldgen"):
        artifact = asyncio.run(run)
    assert [lint.code for lint in artifact.warnings] == ["argument_insensitive_effect"] * 2
    assert "world model of s001: transition update_request_status" in caplog.text
    clean = generate_world_model(WorldWriter(SENSITIVE), "s001", "excerpt", TOOLS, [scenario])  # type: ignore[arg-type]
    assert asyncio.run(clean).warnings == []


def test_validation_lint_names_the_pinned_parameters_a_postcondition_ignores() -> None:
    checks = {
        "s001-1": _checks(
            'CALL update_request_status(request_id="HW-2841", status="ordered")',
            'CALL create_purchase_order(item_id="HWM2741", quantity=1)',
        )
    }
    assert ignored_pins(parse_model(SENSITIVE), {"s001-1": checks["s001-1"][:1]}) == []
    found = ignored_pins(parse_model(INSENSITIVE), checks)
    assert [(lint.place, lint.message.split(" but")[0]) for lint in found] == [
        (
            "s001-1: transition create_purchase_order (line 7)",
            "the checks pin item_id, quantity of create_purchase_order",
        ),
        ("s001-1: transition update_request_status (line 3)", "the checks pin request_id of update_request_status"),
    ]
    assert all(lint.code == "pinned_argument_ignored" for lint in found)


def test_world_model_prompt_says_why_effects_depend_on_the_arguments() -> None:
    system = full_pass("excerpt", TOOLS, "scenarios", DECLARATIONS)[0]["content"]
    assert "Effects must depend on the arguments" in system and "audit" in system
