"""Scenario generation's answer check: every problem of a batch goes back to the model at once, and a usable
batch becomes scenarios with their ids."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mantra_env.domains import load_domain
from mantra_env.generators.artifacts import ScenarioBatch
from mantra_env.generators.llm import AnswerCheck, RepairNeeded
from mantra_env.generators.scenarios import generate_scenarios

DOMAIN = load_domain("operations")
TOOLS = DOMAIN.tool_specs()


class OneAnswer:
    """A client whose model answers ``batch``; the stage's check decides, as in the repair loop."""

    def __init__(self, batch: dict[str, Any]) -> None:
        self.batch = ScenarioBatch.model_validate(batch)

    async def generate(self, stage: str, subject: str, messages: Any, answer: AnswerCheck[Any]) -> Any:
        assert stage == "scenario_generation" and answer.output() is ScenarioBatch
        return answer.check(self.batch)


def generate(batch: dict[str, Any], count: int) -> Any:
    return asyncio.run(generate_scenarios(OneAnswer(batch), "s001", "excerpt", TOOLS, DOMAIN, count))  # type: ignore[arg-type]


def draft(**fields: Any) -> dict[str, Any]:
    return {"prompt": "Maya needs a monitor.", **fields}


def test_every_problem_of_a_batch_is_listed() -> None:
    batch = {
        "scenarios": [
            draft(argument_bindings={"check_inventroy": {"item_name": "Dell"}}),
            draft(argument_bindings={"check_inventory": {"sku": "HWM2741"}}),
            draft(database_patch=[{"op": "set", "path": "items.NOPE.stock", "value": 1}]),
            draft(external={"stock": 0}, internal={"stock": 1}),
        ]
    }
    with pytest.raises(RepairNeeded) as raised:
        generate(batch, count=5)
    lines = str(raised.value).splitlines()
    assert lines[0] == (
        "- scenario 1: argument_bindings calls check_inventroy, which is not a tool; did you mean 'check_inventory'?"
    )
    assert lines[1].startswith("- scenario 2: argument_bindings pins sku, which check_inventory does not take")
    assert lines[2].startswith("- scenario 3: database_patch: ") and "items.NOPE" in lines[2]
    assert lines[3] == "- scenario 4: stock is both external and internal"
    assert lines[4] == "- 4 scenarios given; write 5"
    assert len(lines) == 5


def test_a_usable_batch_becomes_numbered_scenarios() -> None:
    batch = {
        "scenarios": [
            draft(argument_bindings={"check_inventory": {"item_name": "Dell UltraSharp U2723QE"}}),
            draft(database_patch=[{"op": "set", "path": "items.HWM2741.stock", "value": 0}], external={"stock": 0}),
            draft(),
        ]
    }
    made = generate(batch, count=2)
    assert [s.id for s in made] == ["s001-1", "s001-2"] and {s.sample_id for s in made} == {"s001"}
    assert made[1].draft.database_patch[0].path == "items.HWM2741.stock"


def test_a_variable_keeps_one_type_across_the_scenarios_of_a_sample() -> None:
    batch = {
        "scenarios": [
            draft(external={"item_ids": ["a1"], "stock": 3, "note": None}),
            draft(external={"item_ids": "a1", "stock": 2.5, "note": "x"}),
            draft(external={"item_ids": ["a1", "a2"]}, internal={"stock": "three"}),
        ]
    }
    with pytest.raises(RepairNeeded) as raised:
        generate(batch, count=3)
    assert str(raised.value).splitlines() == [
        "- scenario 2: variable item_ids is a string but a list in scenario 1; give it one type in every scenario "
        "(a list stays a list even with one element)",
        "- scenario 3: variable stock is a string but a number in scenario 1; give it one type in every scenario "
        "(a list stays a list even with one element)",
    ]


@pytest.mark.parametrize("anchored", [False, True])
def test_anchor_by_fields_reaches_the_records_the_writer_sees(anchored: bool) -> None:
    telecom = load_domain("telecom")
    tools = [spec for spec in telecom.tool_specs() if spec.name == "check_network_outages"]
    seen: list[str] = []

    class Reads(OneAnswer):
        async def generate(self, stage: str, subject: str, messages: Any, answer: AnswerCheck[Any]) -> Any:
            seen.append(messages[-1]["content"])
            return await super().generate(stage, subject, messages, answer)

    client: Any = Reads({"scenarios": [{"prompt": "Is there an outage at 95814?"}]})  # a stand-in LLMClient
    made = generate_scenarios(
        client, "s001", "excerpt", tools, telecom, 1, database_chars=2_000, anchor_by_fields=anchored
    )
    asyncio.run(made)
    shown = {line.split(".", 1)[0] for line in seen[0].splitlines() if line.split(".", 1)[0] in telecom.base_data}
    assert (shown == {"outages"}) is anchored
