"""The world-model stage's answer check: with ``validation.encode_world_models`` a model the solver cannot encode
goes back to its writer; without it the check (and the request's bytes) are as before."""

from __future__ import annotations

import pytest

from mantra_env.generators.answers import rebuild_check
from mantra_env.generators.artifacts import WorldModelAnswer
from mantra_env.generators.llm import RepairNeeded
from mantra_env.generators.worldgen import FullPassCheck
from tests.list_tools import IDS, list_tool

TOOLS = [list_tool("return_items", order_id={"type": "string"}, item_ids=IDS)]


def _answer(values: int) -> WorldModelAnswer:
    """A return-items model whose constant of known items has ``values`` entries (a writer listed every minute
    of a day as 1,440 of them)."""
    items = " ".join(f'"i{k}"' for k in range(values))
    model = f"""(model
  (const KNOWN_ITEMS (List String) ({items}))
  (var returned (Array String))
  (transition return_items
    (params (order_id o) (item_ids items))
    (pre (= (param o) "W1") (subset (param items) KNOWN_ITEMS))
    (post (= (next returned) (union returned (param items))))))"""
    return WorldModelAnswer(model=model, initial={"returned": []}, goals={"s0-1": ['(contains returned "i1")']})


def test_an_unencodable_model_goes_back_to_its_writer_with_the_encoders_reason() -> None:
    check = FullPassCheck(tools=TOOLS, scenario_ids=["s0-1"], encode_bound=16)
    assert check.check(_answer(5)).goals == {"s0-1": ['(contains returned "i1")']}
    with pytest.raises(RepairNeeded) as raised:
        check.check(_answer(40))
    assert str(raised.value) == (
        "- the solver cannot encode the model: a list argument would need 40 element slots (the longest list the "
        "world model, the checks or the tools name), more than the 32 the encoding allows: state the fact a rule "
        "needs instead of listing every value (a Bool or Int variable the scenario sets), or split the list"
    )
    assert "which the solver can encode with each goal" in check.statement()


def test_without_the_key_the_check_and_its_request_context_are_as_before() -> None:
    check = FullPassCheck(tools=TOOLS, scenario_ids=["s0-1"])
    assert check.check(_answer(40)).model.startswith("(model")  # type-checks: accepted as before the key
    assert "encode_bound" not in check.model_dump(mode="json")
    assert "encode" not in check.statement()


def test_the_exchange_rebuilds_the_check_with_its_bound() -> None:
    stored = FullPassCheck(tools=TOOLS, scenario_ids=["s0-1"], encode_bound=16).model_dump(mode="json")
    rebuilt = rebuild_check("smt_full_pass", stored)
    assert isinstance(rebuilt, FullPassCheck) and rebuilt.encode_bound == 16
    with pytest.raises(RepairNeeded, match="would need 40 element slots"):
        rebuilt.check(_answer(40))
