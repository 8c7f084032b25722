"""The oracle's plans on every shipped suite: the canonical compliant witness reads before it writes."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

import mantra_env  # noqa: F401 - registers the shipped suites
from mantra_env import registration
from mantra_env.agents.scripted import oracle_plan, plan_from_witness
from mantra_env.case import Case, CaseCheck, PlannedCall, Scenario
from mantra_env.env import MantraEnv
from mantra_env.smt import Witness
from mantra_env.smt.queries import WitnessCall
from mantra_env.tools import ToolSpec

SUITES = registration.suite_env_ids()  # not suite-less domains


@pytest.mark.parametrize("env_id", SUITES)
def test_the_oracle_never_writes_before_its_first_read(env_id: str) -> None:
    env = gym.make(env_id).unwrapped
    assert isinstance(env, MantraEnv)
    specs = env.domain.tool_specs()
    kinds = {spec.name: spec.kind for spec in specs}
    premature = []
    for case in env.suite.cases:
        tools = [action["tool"] for action in oracle_plan(case, specs)]
        reads = [i for i, tool in enumerate(tools) if kinds[tool] == "read"]
        writes = [i for i, tool in enumerate(tools) if kinds[tool] == "write"]
        if writes and (not reads or writes[0] < reads[0]):
            premature.append((case.id, tools))
    assert premature == []


@pytest.mark.parametrize("env_id", SUITES)
def test_every_oracle_argument_comes_from_the_case(env_id: str) -> None:
    """Each argument the oracle passes is a check's literal for that parameter, the case's binding, or the
    scenario's value of that name (issue 14: never another parameter's literal, never a placeholder)."""
    env = gym.make(env_id).unwrapped
    assert isinstance(env, MantraEnv)
    strays = []
    for case in env.suite.cases:
        literals: dict[tuple[str, str], list[object]] = {}
        for entry in case.checks:
            for atom in entry.check.atoms:
                for name, literal in atom.args.items():
                    literals.setdefault((atom.tool, name), []).append(literal)
        for action in oracle_plan(case, env.domain.tool_specs()):
            tool = action["tool"]
            for name, value in action["arguments"].items():
                known = [
                    *literals.get((tool, name), []),
                    case.argument_bindings.get(tool, {}).get(name),
                    case.scenario.valuation.get(name),
                ]
                # a list comes from the case when its items do, in any order (a pinned list matches in any order)
                lists = [sorted(map(str, k)) for k in known if isinstance(k, list)]
                if value not in known and not (isinstance(value, list) and sorted(map(str, value)) in lists):
                    strays.append((case.id, tool, name, value))
    assert strays == []


LOOKUP = ToolSpec(
    name="find_customer",
    kind="read",
    parameters={
        "type": "object",
        "properties": {"email": {"type": "string"}, "note": {"type": "string"}},
        "required": ["email"],
    },
)
RETURN = ToolSpec(
    name="return_items",
    kind="write",
    parameters={
        "type": "object",
        "properties": {"order_id": {"type": "string"}, "item_ids": {"type": "array", "items": {"type": "string"}}},
        "required": ["order_id", "item_ids"],
    },
)
RETURN_MODEL = """
(model
  (var email String)
  (var order_id String)
  (var found Bool)
  (var returned (Array String))
  (transition find_customer
    (params (email e) (note n))
    (pre)
    (post (= (next found) (or found (= (param e) email)))))
  (transition return_items
    (params (order_id o) (item_ids items))
    (pre found (= (param o) order_id))
    (post (= (next returned) (union returned (param items)))))
  (goal (contains returned "I1") (contains returned "I2") (contains returned "I3")))
"""


OTHER_FACTS = {f"fact_{n}": f"#W{n}000" for n in range(8)}


def _return_case(bindings: dict[str, dict[str, object]]) -> Case:
    return Case(
        id="return-two",
        domain="test",
        scenario=Scenario(
            prompt="Return items I3, I1 and I2 of order O1; I am ann@example.com.",
            # facts no call needs are interned too: the solver's first pick for a free string is such a literal
            internal={"email": "ann@example.com", "order_id": "O1", "found": False, "returned": [], **OTHER_FACTS},
        ),
        checks=[
            CaseCheck(id="lookup", check='CALL find_customer(email="ann@example.com")'),
            CaseCheck(id="return", check='CALL return_items(order_id="O1", item_ids=["I3", "I1", "I2"])'),
        ],
        world_model=RETURN_MODEL,
        argument_bindings=bindings,
    )


def test_an_argument_nothing_asks_for_is_left_out_or_bound_and_a_pinned_list_keeps_its_order() -> None:
    plan = oracle_plan(_return_case({}), [LOOKUP, RETURN])
    assert plan == [
        {"tool": "find_customer", "arguments": {"email": "ann@example.com"}},
        {"tool": "return_items", "arguments": {"order_id": "O1", "item_ids": ["I3", "I1", "I2"]}},
    ]
    bound = oracle_plan(_return_case({"find_customer": {"note": "returning"}}), [LOOKUP, RETURN])
    assert bound[0]["arguments"] == {"email": "ann@example.com", "note": "returning"}


def test_a_list_matched_as_a_set_takes_the_order_the_check_pins() -> None:
    """The solver orders an unordered list arbitrarily; the oracle replays the check's order, so its call reads
    as the case does."""
    witness = Witness(
        calls=[
            WitnessCall(tool="find_customer", args={"email": "ann@example.com"}),
            WitnessCall(tool="return_items", args={"order_id": "O1", "item_ids": ["I2", "I3", "I1"]}),
        ]
    )
    plan = plan_from_witness(_return_case({}), witness, [LOOKUP, RETURN])
    assert plan[1]["arguments"]["item_ids"] == ["I3", "I1", "I2"]
    paired = RETURN.model_copy(update={"parameters": _ordered(RETURN.parameters)})
    plan = plan_from_witness(_return_case({}), witness, [LOOKUP, paired])
    assert plan[1]["arguments"]["item_ids"] == ["I2", "I3", "I1"]  # a paired list keeps the solver's pairs


def _ordered(parameters: dict[str, Any]) -> dict[str, Any]:
    properties = {**parameters["properties"], "item_ids": {**parameters["properties"]["item_ids"], "x-ordered": True}}
    return {**parameters, "properties": properties}


def test_a_stored_plan_is_replayed_without_solving_and_each_caller_gets_its_own_copy() -> None:
    stored = [
        {"tool": "find_customer", "arguments": {"email": "ann@example.com", "note": "stored"}},
        {"tool": "return_items", "arguments": {"order_id": "O1", "item_ids": ["I1", "I2", "I3"]}},
    ]
    case = _return_case({}).model_copy(update={"oracle_plan": [PlannedCall.model_validate(a) for a in stored]})
    first = oracle_plan(case, [LOOKUP, RETURN])
    assert first == stored  # the solver's plan has no note: this one was not solved
    first[1]["arguments"]["item_ids"].pop()
    assert oracle_plan(case, [LOOKUP, RETURN]) == stored
    assert oracle_plan(case, [LOOKUP, RETURN], bound=8)[0]["arguments"] == {"email": "ann@example.com"}  # solved


def test_a_case_dumps_its_stored_plan_and_a_case_without_one_keeps_the_old_bytes() -> None:
    case = _return_case({})
    assert "oracle_plan" not in case.model_dump_json()
    planned = case.model_copy(update={"oracle_plan": [PlannedCall(tool="find_customer", arguments={"email": "a"})]})
    assert Case.model_validate_json(planned.model_dump_json()) == planned
