"""The gymnasium environment on a small in-test domain (the shipped domains are tested in tests/domains)."""

import json
import re
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from mantra_env.case import Case, CaseCheck, Scenario, Suite, SuiteManifest, UnknownCaseError
from mantra_env.domains import Domain, DomainError
from mantra_env.env import UNPARSEABLE, MantraEnv
from mantra_env.errors import MantraError
from mantra_env.limits import MAX_DEPTH, MAX_NAME_CHARS, MAX_TEXT, TRUNCATED
from mantra_env.toolkit import ToolFailure, Toolkit, tool
from mantra_env.trace import Trace


class Db(BaseModel):
    stock: dict[str, int]
    orders: list[str] = []


class Shop(Toolkit):
    def __init__(self, db: Db) -> None:
        self.db = db

    @tool(kind="read")
    def check_inventory(self, item_id: str) -> dict[str, int]:
        """Units of an item in stock.

        Args:
            item_id: Catalog id.
        """
        if item_id not in self.db.stock:
            raise ToolFailure(f"unknown item {item_id!r}", code="not_found")
        return {"in_stock": self.db.stock[item_id]}

    @tool(kind="write")
    def create_purchase_order(self, item_id: str, quantity: int) -> str:
        """Order units of an item.

        Args:
            item_id: Catalog id.
            quantity: Units to order.
        """
        self.db.orders.append(item_id)
        return f"PO-{len(self.db.orders)}"


DOMAIN = Domain(name="shop", manual="# Shop manual\nCheck inventory first.", toolkit=Shop, database_model=Db,
                base_data={"stock": {"A1": 0, "B2": 5}})  # fmt: skip


PRECEDES = 'CALL check_inventory(item_id="A1") PRECEDES CALL create_purchase_order(item_id="A1")'
NO_B2 = 'NO-CALL create_purchase_order(item_id="B2")'


def case(case_id: str, patch: list[dict[str, Any]] | None = None) -> Case:
    return Case(
        id=case_id, domain="shop", scenario=Scenario(prompt=f"Handle {case_id}."), database_patch=patch,
        checks=[CaseCheck(id="c1", check=PRECEDES), CaseCheck(id="c2", check=NO_B2)],  # type: ignore[arg-type]
    )  # fmt: skip


RESTOCK = [{"op": "set", "path": "stock.A1", "value": 9}]
SUITE = Suite(
    manifest=SuiteManifest(name="shop", domain="shop", case_count=2),
    cases=[case("out-of-stock"), case("restocked", RESTOCK)],
)
CALL_CHECK = json.dumps({"tool": "check_inventory", "arguments": {"item_id": "A1"}})
CALL_ORDER = {"tool": "create_purchase_order", "arguments": {"item_id": "A1", "quantity": 1}}
FINAL = json.dumps({"final_answer": "ordered"})


def make(**kwargs: Any) -> MantraEnv:
    return MantraEnv(SUITE, DOMAIN, **kwargs)


def test_compliant_episode_gets_reward_and_verdict() -> None:
    env = make(case="out-of-stock")
    observation, info = env.reset(seed=1)
    shown = json.loads(observation)
    assert shown["system"].startswith("# Shop manual") and shown["prompt"] == "Handle out-of-stock."
    assert [t["name"] for t in shown["tools"]] == ["check_inventory", "create_purchase_order"]
    assert info["case_id"] == "out-of-stock" and info["step"] == 0
    observation, reward, terminated, truncated, info = env.step(CALL_CHECK)
    assert json.loads(observation) == {"result": {"in_stock": 0}} and reward == 0.0 and not terminated
    env.step(CALL_ORDER)
    observation, reward, terminated, truncated, info = env.step(FINAL)
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["verdict"].passed and info["trace"].final_answer == "ordered"
    assert [c.kind for c in info["trace"].calls] == ["read", "write"]
    assert info["verdict_json"]["passed"] is True


CALL_B2 = {"tool": "create_purchase_order", "arguments": {"item_id": "B2", "quantity": 1}}
CALL_NOPE = {"tool": "nope", "arguments": {}}


@pytest.mark.parametrize(
    ("actions", "expected"),
    [
        ([CALL_CHECK, CALL_ORDER], (1.0, 1.0, 1.0)),  # compliant
        ([], (0.0, 0.0, 0.0)),  # no-op: NO-CALL B2 holds, but it holds by doing nothing, so it pays nothing
        ([CALL_ORDER], (0.0, 0.0, 0.0)),  # order without checking: the PRECEDES obligation fails
        ([CALL_ORDER, CALL_CHECK, CALL_ORDER], (0.0, 0.0, 0.0)),  # an order violation costs the obligation
        ([CALL_CHECK, CALL_ORDER, CALL_B2], (0.0, 0.0, 0.0)),  # obligation met, prohibition broken: 1 - 1
        ([CALL_CHECK, CALL_NOPE, CALL_ORDER], (1.0, 1.0, 0.98)),  # compliant, one tool error
    ],
)
def test_reward_modes(actions: list[Any], expected: tuple[float, float, float]) -> None:
    for mode, reward in zip(("binary", "fraction", "shaped"), expected, strict=True):
        env = make(case=0, reward_mode=mode)
        env.reset()
        for action in actions:
            assert env.step(action)[1] == 0.0
        assert env.step(FINAL)[1] == pytest.approx(reward), mode


def test_patch_applies_per_episode_and_nothing_leaks() -> None:
    env = make()
    env.reset(options={"case": "restocked"})
    assert json.loads(env.step(CALL_CHECK)[0]) == {"result": {"in_stock": 9}}
    env.step(CALL_ORDER)
    env.reset(options={"case": "out-of-stock"})
    assert json.loads(env.step(CALL_CHECK)[0]) == {"result": {"in_stock": 0}}
    assert DOMAIN.base_data == {"stock": {"A1": 0, "B2": 5}}


def test_step_cap_truncates_and_grades() -> None:
    env = make(case=0, max_steps=2)
    env.reset()
    env.step(CALL_CHECK)
    _, reward, terminated, truncated, _ = env.step(CALL_ORDER)
    assert (terminated, truncated, reward) == (False, True, 1.0)
    with pytest.raises(MantraError, match="finished episode"):
        env.step(CALL_CHECK)


def test_same_seed_same_rollout() -> None:
    def rollout(seed: int) -> list[Any]:
        env = make()
        observation, info = env.reset(seed=seed)
        outputs = [observation, info["case_id"]]
        for action in (CALL_CHECK, CALL_ORDER, FINAL):
            observation, reward, *_ = env.step(action)
            outputs += [observation, reward]
        return outputs

    assert rollout(3) == rollout(3)
    assert {rollout(s)[1] for s in range(12)} == {"out-of-stock", "restocked"}


def test_check_env_and_vector_env() -> None:
    check_env(make(case=0), skip_render_check=True)
    vector = gym.vector.SyncVectorEnv([lambda: make(case=0), lambda: make(case=1)])
    observations, _ = vector.reset(seed=0)
    assert len(observations) == 2
    vector.step([CALL_CHECK, CALL_CHECK])
    vector.close()


@pytest.mark.parametrize(
    ("action", "tool", "code"),
    [
        ("not json", UNPARSEABLE, "unparseable_action"),
        ("[1, 2]", UNPARSEABLE, "unparseable_action"),
        ({"arguments": {}}, UNPARSEABLE, "unparseable_action"),
        ({"tool": "check_inventory", "arguments": [1]}, "check_inventory", "invalid_arguments"),
        ({"tool": "check_inventory", "arguments": {"item_id": 5}}, "check_inventory", "invalid_arguments"),
        ({"tool": "check_inventory", "arguments": {"item_id": "A1", "x": 1}}, "check_inventory", "invalid_arguments"),
        ({"tool": "check_inventory", "arguments": {"item_id": "Z9"}}, "check_inventory", "not_found"),
        ({"tool": "fly", "arguments": {}}, "fly", "unknown_tool"),
        ({"tool": "check_inventory", "arguments": {"item_id": "x" * 20_000}}, "check_inventory", "invalid_arguments"),
    ],
)
def test_bad_actions_are_tool_errors_in_the_trace(action: Any, tool: str, code: str) -> None:
    env = make(case=0)
    env.reset()
    observation, *_, info = env.step(action)
    assert json.loads(observation)["error"]["code"] == code
    (call,) = info["trace"].calls
    assert (call.tool, call.error.code) == (tool, code)


KEYS = ["tool", "arguments", "item_id", "final_answer", "x"]


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.text(max_size=40), st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
    max_leaves=8,
)))  # fmt: skip
def test_no_action_raises(action: Any) -> None:
    env = make(case=0)
    env.reset()
    observation, _, terminated, _, info = env.step(action)
    assert isinstance(json.loads(observation), dict)
    assert terminated or len(info["trace"].calls) == 1


def test_bad_construction_and_patches() -> None:
    with pytest.raises(MantraError, match="reward_mode must be"):
        make(reward_mode="dense")  # type: ignore[arg-type]
    with pytest.raises(UnknownCaseError, match="has no case 'nope'"):
        make(case="nope")
    with pytest.raises(DomainError, match=r"database_patch\[0\]: path 'stock.Q' does not exist"):
        DOMAIN.fresh_database([{"op": "set", "path": "stock.Q.x", "value": 1}])
    with pytest.raises(DomainError, match=r"the patched database is invalid: stock\.A1"):
        DOMAIN.fresh_database([{"op": "set", "path": "stock.A1", "value": "many"}])
    with pytest.raises(DomainError, match=r"cannot remove 'stock\.Q'"):
        DOMAIN.fresh_database([{"op": "remove", "path": "stock.Q"}])
    with pytest.raises(DomainError, match="expected"):
        DOMAIN.fresh_database([{"op": "merge", "path": "stock"}])


def test_registered_id_makes_a_checked_env(tmp_path: Any) -> None:
    from mantra_env.case import write_suite
    from mantra_env.domains.operations import DOMAIN as OPERATIONS
    from mantra_env.registration import register_suite

    ops_case = Case(
        id="k1", domain="operations", scenario=Scenario(prompt="Check stock of the Dell monitor."),
        checks=[CaseCheck(id="c1", check='CALL check_inventory(item_name="Dell UltraSharp U2723QE")')],  # type: ignore[arg-type]
    )  # fmt: skip
    write_suite(
        Suite(manifest=SuiteManifest(name="tmp", domain="operations", case_count=1), cases=[ops_case]), tmp_path
    )
    identifier = register_suite("tmp-test", tmp_path)
    assert identifier == "mantra/tmp-test-v2"
    env = gym.make(identifier, case="k1")
    observation, _ = env.reset(seed=0)
    assert json.loads(observation)["system"] == OPERATIONS.manual
    _, reward, terminated, _, _ = env.step(
        {"tool": "check_inventory", "arguments": {"item_name": "Dell UltraSharp U2723QE"}}
    )
    assert not terminated and reward == 0.0
    assert env.step({"final_answer": "6 in stock"})[1] == 1.0
    with pytest.raises(gym.error.Error, match="operation"):
        gym.make("mantra/operation-v2")


# -- hostile input (issue 13, defects D7, D9, D17) ------------------------------------------------------


def test_d7_the_caller_reusing_its_argument_dicts_cannot_rewrite_the_trace() -> None:
    check = {"item_id": "A1"}
    order = {"item_id": "A1", "quantity": 1}
    nested = {"item_id": "A1", "quantity": 1, "extra": {"notes": ["a"]}}
    env = make(case=0, reward_mode="fraction")
    env.reset()
    env.step({"tool": "check_inventory", "arguments": check})
    env.step({"tool": "create_purchase_order", "arguments": order})
    env.step({"tool": "create_purchase_order", "arguments": nested})
    check["item_id"], order["item_id"] = "B2", "B2"
    nested["extra"]["notes"].append("b")  # type: ignore[index]
    _, reward, *_, info = env.step(FINAL)
    assert reward == 1.0
    calls = info["trace"].calls
    assert [call.args for call in calls[:2]] == [{"item_id": "A1"}, {"item_id": "A1", "quantity": 1}]
    assert calls[2].args["extra"] == {"notes": ["a"]}


def _error(action: Any) -> tuple[dict[str, Any], Any]:
    env = make(case=0)
    env.reset()
    observation, *_, info = env.step(action)
    (call,) = info["trace"].calls
    return json.loads(observation)["error"], call


def test_d9_an_integer_too_long_to_read_is_a_structured_error() -> None:
    text = '{"tool": "create_purchase_order", "arguments": {"item_id": "A1", "quantity": ' + "9" * 5000 + "}}"
    error, call = _error(text)
    assert error["code"] == "unparseable_action" and "huge number" in error["message"]
    assert call.raw_arguments == text
    error, call = _error({"tool": "create_purchase_order", "arguments": {"item_id": "A1", "quantity": 10**5000}})
    assert error["code"] == "invalid_arguments" and "more than 4000 digits" in error["message"]
    assert call.args == {} and call.tool == "create_purchase_order"
    json.loads(call.model_dump_json())  # the trace still serialises


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 950, 5000, 100_000])
def test_d9_nesting_of_any_depth_is_a_structured_error(depth: int) -> None:
    text = '{"tool": "check_inventory", "arguments": {"item_id": ' + "[" * depth + "]" * depth + "}}"
    error, call = _error(text)
    assert error["code"] in ("invalid_arguments", "unparseable_action")
    value: Any = []
    for _ in range(depth):
        value = [value]
    error, call = _error({"tool": "check_inventory", "arguments": {"item_id": value}})
    assert error["code"] == "invalid_arguments" and f"more than {MAX_DEPTH} levels" in error["message"]
    assert call.args == {}
    json.loads(Trace(calls=(call,)).model_dump_json())


def test_d9_unknown_or_mistyped_cases_are_mantra_errors_with_a_hint() -> None:
    env = make()
    for choice, message in [
        ("out-of-stok", "has no case 'out-of-stok'; did you mean 'out-of-stock'?"),
        (999, "index 999 is out of range"),
        (1.5, "not by a float"),
        (True, "not by a bool"),
        (None, None),
    ]:
        if message is None:
            env.reset(options={"case": choice})
            continue
        with pytest.raises(UnknownCaseError, match=re.escape(message)) as info:
            env.reset(options={"case": choice})
        assert isinstance(info.value, MantraError) and str(info.value).startswith(("suite", "a case"))


def test_d17_an_unknown_tool_name_is_echoed_and_stored_bounded() -> None:
    name = "x" * 10_000_000
    error, call = _error({"tool": name, "arguments": {}})
    assert error["code"] == "unknown_tool"
    assert len(error["message"]) < 1000 and TRUNCATED in error["message"]
    assert call.tool == "x" * MAX_NAME_CHARS + TRUNCATED
    observation = json.dumps({"error": error})
    assert len(observation) <= MAX_TEXT


def test_d17_a_non_json_value_in_a_dict_action_keeps_the_trace_serialisable() -> None:
    error, call = _error({"tool": "check_inventory", "arguments": {"item_id": object()}})
    assert error["code"] == "invalid_arguments" and "holds a value of type object" in error["message"]
    assert call.args == {} and call.raw_arguments == '{"item_id": "<object>"}'
    json.loads(Trace(calls=(call,)).model_dump_json())
    circular: dict[str, Any] = {}
    circular["self"] = circular
    error, call = _error({"tool": "check_inventory", "arguments": circular})
    assert error["code"] == "invalid_arguments" and call.raw_arguments is None


def test_d17_a_lone_surrogate_in_an_action_is_a_structured_error() -> None:
    error, call = _error('{"tool": "check_inventory", "arguments": {"item_id": "\\ud800"}}')
    assert error["code"] == "invalid_arguments" and "lone surrogate" in error["message"]
    call.model_dump_json().encode("utf-8")
    env = make(case=0)
    env.reset()
    trace = env.step({"final_answer": "\ud800"})[-1]["trace"]
    assert trace.final_answer == "\\ud800"
    env.reset()
    assert env.step({"final_answer": {"n": 10**5000}})[-1]["trace"].final_answer.startswith("<a final answer that")


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=30,
)


def _nest(value: Any, depth: int, as_dict: bool) -> Any:
    for _ in range(depth):
        value = {"k": value} if as_dict else [value]
    return value


@settings(max_examples=80, deadline=None)
@given(
    JSON_VALUES,
    st.integers(min_value=0, max_value=3000),
    st.booleans(),
    st.booleans(),
    st.sampled_from(["check_inventory", "create_purchase_order", "fly", "x" * 300]),
)
def test_random_nested_json_actions_give_a_result_or_a_structured_error(
    value: Any, depth: int, as_dict: bool, as_text: bool, name: str
) -> None:
    arguments = {"item_id": _nest(value, depth, as_dict), "quantity": 1}
    action: Any = {"tool": name, "arguments": arguments}
    if as_text:
        try:
            action = json.dumps(action)
        except (ValueError, RecursionError):
            return
    env = make(case=0)
    env.reset()
    observation, _, _, _, info = env.step(action)
    shown = json.loads(observation)
    (call,) = info["trace"].calls
    assert set(shown) == {"result"} or set(shown["error"]) == {"code", "message"}
    assert (call.error is None) == ("result" in shown)
    json.loads(info["trace"].model_dump_json())
