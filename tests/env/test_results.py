"""Tool results in the trace and the observation: private JSON copies, non-JSON values converted, size bounded."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from mantra_env.case import Case, CaseCheck, Scenario, Suite, SuiteManifest
from mantra_env.domains import Domain
from mantra_env.env import MantraEnv, _json_key, _jsonable, _to_json
from mantra_env.errors import MantraError
from mantra_env.limits import MAX_RESULT_BYTES
from mantra_env.toolkit import Toolkit, tool


class Db(BaseModel):
    records: dict[str, dict[str, Any]]


class Item(BaseModel):
    name: str


class Results(Toolkit):
    def __init__(self, db: Db) -> None:
        self.db = db

    @tool(kind="read")
    def read(self, key: str) -> Any:
        """The live record (tools often return the database's own dicts).

        Args:
            key: Record key.
        """
        return self.db.records[key]

    @tool(kind="write")
    def bump(self, key: str) -> str:
        """Change a record in place.

        Args:
            key: Record key.
        """
        self.db.records[key]["n"] += 1
        return "ok"

    @tool(kind="read")
    def odd(self) -> Any:
        """Values JSON has no word for."""
        return {"model": Item(name="x"), "pair": (1, 2), 3: "three", None: "none", True: "yes", "é": "NaN"}

    @tool(kind="read")
    def unwritable(self, what: str) -> Any:
        """Values with no JSON text.

        Args:
            what: nan, inf, -inf or surrogate (the last beside a value only the slow path converts).
        """
        values = {"nan": float("nan"), "inf": float("inf"), "-inf": -float("inf"), "surrogate": "\ud800"}
        return {"v": values[what], "pair": (1, 2), "text": "NaN and Infinity as words are fine"}

    @tool(kind="read")
    def huge(self, size: int) -> str:
        """A result of ``size`` characters.

        Args:
            size: Characters.
        """
        return "é" * size

    @tool(kind="read")
    def broken(self) -> Any:
        """A value that is not JSON at all."""
        return {"s": object()}


DOMAIN = Domain(name="results", manual="# Results", toolkit=Results, database_model=Db,
                base_data={"records": {"a": {"n": 1}}})  # fmt: skip
SUITE = Suite(
    manifest=SuiteManifest(name="results", domain="results", case_count=1),
    cases=[Case(id="c", domain="results", scenario=Scenario(prompt="p"),
                checks=[CaseCheck(id="c1", check="CALL read()")])],  # type: ignore[arg-type]
)  # fmt: skip


def call(env: MantraEnv, tool: str, **arguments: Any) -> tuple[dict[str, Any], Any]:
    observation, *_, info = env.step({"tool": tool, "arguments": arguments})
    return json.loads(observation), info["trace"].calls[-1]


def test_a_recorded_result_is_a_copy_the_database_cannot_change() -> None:
    env = MantraEnv(SUITE, DOMAIN)
    env.reset(options={"case": "c"})
    observation, first = call(env, "read", key="a")
    call(env, "bump", key="a")
    _, second = call(env, "read", key="a")
    assert observation == {"result": {"n": 1}} and first.result == {"n": 1} and second.result == {"n": 2}


def test_non_json_results_are_converted_as_pydantic_writes_them() -> None:
    env = MantraEnv(SUITE, DOMAIN)
    env.reset(options={"case": "c"})
    text, *_, info = env.step({"tool": "odd", "arguments": {}})
    observation, recorded = json.loads(text), info["trace"].calls[-1]
    expected = {"model": {"name": "x"}, "pair": [1, 2], "3": "three", "None": "none", "true": "yes", "é": "NaN"}
    assert observation == {"result": expected}
    assert recorded.result == expected and env.observation_space.contains(text)
    with pytest.raises(MantraError, match="tool 'broken' returned a value that is not JSON"):
        call(env, "broken")


def test_a_result_larger_than_an_observation_is_a_structured_error() -> None:
    env = MantraEnv(SUITE, DOMAIN)
    env.reset(options={"case": "c"})
    fits = (MAX_RESULT_BYTES - len('{"result": ""}')) // 2  # "é" is two bytes of UTF-8
    text = env.step({"tool": "huge", "arguments": {"size": fits}})[0]
    assert len(json.loads(text)["result"]) == fits and env.observation_space.contains(text)
    observation, recorded = call(env, "huge", size=fits + 1)
    assert observation["error"]["code"] == "result_too_large" and recorded.result is None
    assert recorded.tool == "huge"  # the call was made: it is in the trace, and checks see it


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=4) | st.integers() | st.booleans() | st.none(), inner, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_the_fast_path_agrees_with_the_conversion(value: Any) -> None:
    copied, text, error = _jsonable(value, "t")
    assert error is None
    assert copied == json.loads(json.dumps(_to_json(value))) and json.loads(text) == copied
    assert not _shares_containers(copied, value)


def _shares_containers(copy: Any, original: Any) -> bool:
    if isinstance(copy, dict | list) and copy is original:
        return True
    if isinstance(copy, dict) and isinstance(original, dict):
        return any(_shares_containers(copy.get(_json_key(k)), v) for k, v in original.items())
    if isinstance(copy, list) and isinstance(original, list | tuple):
        return any(_shares_containers(c, o) for c, o in zip(copy, original, strict=False))
    return False


def test_an_error_message_quoting_megabytes_of_the_action_is_cut_to_fit() -> None:
    env = MantraEnv(SUITE, DOMAIN)
    env.reset(options={"case": "c"})
    action: dict[str, Any] = {"tool": "read", "arguments": {}, **{"\U0001f600" * 200 + str(i): 1 for i in range(2000)}}
    text, *_, info = env.step(action)
    assert env.observation_space.contains(text) and json.loads(text)["error"]["code"] == "unparseable_action"
    assert len(info["trace"].calls[-1].error.message) > len(json.loads(text)["error"]["message"])


@pytest.mark.parametrize("what", ["nan", "inf", "-inf", "surrogate"])
def test_n9_a_result_json_cannot_carry_is_the_tool_error_invalid_result(what: str) -> None:
    env = MantraEnv(SUITE, DOMAIN)
    env.reset(options={"case": "c"})
    text, *_, info = env.step({"tool": "unwritable", "arguments": {"what": what}})
    assert json.loads(text)["error"]["code"] == "invalid_result" and env.observation_space.contains(text)
    recorded = info["trace"].calls[-1]
    assert recorded.tool == "unwritable" and recorded.result is None and recorded.error.code == "invalid_result"
    env.step({"final_answer": "done"})
    json.loads(env.last_trace.model_dump_json())  # the trace (and so the episode) can be stored
