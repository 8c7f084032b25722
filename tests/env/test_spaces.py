"""The JSON text spaces: exact membership, well-formed samples, and gymnasium's shared-memory handlers."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory
from hypothesis import given, settings
from hypothesis import strategies as st

from mantra_env.domains import domain_names, load_domain
from mantra_env.errors import MantraError
from mantra_env.spaces import JsonText, ObservationTooLargeError, ToolCallSpace, random_value


@pytest.mark.parametrize(
    ("text", "member"),
    [
        ('{"a": 1}', True),
        ("{}", True),
        ('{"é": "ü"}', True),  # 12 bytes of UTF-8: fits 16
        ('{"é": "üüüü"}', False),  # 13 characters, but 18 bytes of UTF-8
        ("[1, 2]", False),  # JSON, but not an object
        ("{", False),
        ('{"a": "\ud800"}', False),  # a lone surrogate has no UTF-8 form
        (b"{}", False),
        (None, False),
    ],
)
def test_json_text_membership_is_exact(text: object, member: bool) -> None:
    assert JsonText(16).contains(text) is member


def test_json_text_space_equality_pickling_and_samples() -> None:
    space = JsonText(64, seed=1)
    assert space == JsonText(64) and space != JsonText(65) and hash(space) == hash(JsonText(64))
    assert pickle.loads(pickle.dumps(space)) == space
    assert all(space.contains(space.sample()) for _ in range(20))
    with pytest.raises(MantraError, match="max_bytes >= 2"):
        JsonText(1)
    with pytest.raises(MantraError, match="no mask"):
        space.sample(mask=np.zeros(1))


@pytest.mark.parametrize("name", domain_names())
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_sampled_actions_are_well_formed_tool_calls_of_the_domain(name: str, seed: int) -> None:
    domain = load_domain(name)
    space = ToolCallSpace(domain.tool_specs(), 10_000, seed=seed)
    toolkit = domain.toolkit(domain.fresh_database(None))
    for _ in range(5):
        text = space.sample()
        action = json.loads(text)
        assert space.contains(text) and action.keys() == {"tool", "arguments"}
        _, error = toolkit.execute(action["tool"], action["arguments"])
        assert error is None or error.code not in {"invalid_arguments", "unknown_tool"}, error


def test_random_values_follow_nested_schemas() -> None:
    rng = np.random.default_rng(0)
    schema = {"type": "object", "properties": {"ids": {"type": "array", "items": {"type": "integer"}}}}
    for _ in range(20):
        value = random_value(schema, rng)
        assert value.keys() == {"ids"} and value["ids"] and all(isinstance(item, int) for item in value["ids"])


def test_shared_memory_round_trips_utf8_text_per_sub_env() -> None:
    space = JsonText(32)
    memory = create_shared_memory(space, n=3)
    view = read_from_shared_memory(space, memory, n=3)
    texts = ['{"a": "ü€"}', "{}", '{"b": [1, 2, 3]}']
    for index, text in enumerate(texts):
        write_to_shared_memory(space, index, text, memory)
    assert list(view) == texts and view[-1] == texts[2] and view[1:] == tuple(texts[1:])
    write_to_shared_memory(space, 0, "{}", memory)  # shorter text over a longer one: the length decides
    assert view[0] == "{}"
    with pytest.raises(ObservationTooLargeError, match="33 bytes"):
        write_to_shared_memory(space, 1, json.dumps({"x": "y" * 24}), memory)
    with pytest.raises(IndexError):
        view[3]
