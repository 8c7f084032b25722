"""Gymnasium spaces of JSON text: the env's observations and actions, usable in shared memory.

gymnasium's ``Text`` space stores a string as one int32 per character of a fixed charset; with a charset that
admits every character (JSON text holds any) a 1 MB space takes ~16 s and 227 MB to build and ~3 s to read one
observation back. :class:`JsonText` stores UTF-8 bytes instead: a vector env's shared memory holds, per sub-env,
a length and ``max_bytes`` bytes, and reading decodes only the bytes in use. The handlers are registered with
gymnasium's ``create_shared_memory`` / ``read_from_shared_memory`` / ``write_to_shared_memory`` when this module
is imported (the env imports it, so worker processes have them too).

:class:`ToolCallSpace` is the action space: its ``sample()`` is a well-formed tool call of one of the domain's
tools with arguments valid for the tool's JSON schema (:func:`random_arguments`, also what the random scripted
agent calls).
"""

from __future__ import annotations

import json
import multiprocessing as mp
from collections.abc import Iterator, Mapping, Sequence
from ctypes import c_int64, c_uint8
from types import ModuleType
from typing import Any

import numpy as np
from gymnasium.spaces import Space
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

from mantra_env.errors import MantraError
from mantra_env.tools import ToolSpec


class ObservationTooLargeError(MantraError, ValueError):
    """A text longer than its space's ``max_bytes`` was to be written to shared memory."""


class JsonText(Space[str]):
    """Text holding one JSON object, at most ``max_bytes`` bytes of UTF-8.

    ``contains`` is exact (a string, valid UTF-8 within the size, a JSON object); ``sample`` gives
    ``{"result": <random short string>}``.
    """

    def __init__(self, max_bytes: int, seed: int | np.random.Generator | None = None) -> None:
        if max_bytes < 2:
            raise MantraError(f"a JSON text space needs max_bytes >= 2 (the text '{{}}'), got {max_bytes}")
        self.max_bytes = max_bytes
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        if not isinstance(x, str) or len(x) > self.max_bytes:  # a character is at least one byte
            return False
        try:
            if len(x.encode("utf-8")) > self.max_bytes:
                return False
            return isinstance(json.loads(x), dict)
        except (UnicodeEncodeError, ValueError, RecursionError):  # lone surrogates, not JSON, too deep
            return False

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        if mask is not None or probability is not None:
            raise MantraError(f"{type(self).__name__}.sample() takes no mask or probability")
        return json.dumps({"result": _random_string(self.np_random)})

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and isinstance(other, JsonText) and other.max_bytes == self.max_bytes

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.max_bytes))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(max_bytes={self.max_bytes})"


class ToolCallSpace(JsonText):
    """Actions: a tool call ``{"tool": name, "arguments": {...}}`` or ``{"final_answer": text}`` as JSON text.

    ``sample()`` is a tool call of a tool drawn uniformly, with schema-valid random arguments (never a final
    answer: a sampled episode runs to its step cap). ``contains`` accepts any JSON object within the size, as the
    env does: an unknown tool or bad arguments are the env's structured tool errors, not malformed actions.
    """

    def __init__(
        self, tools: Sequence[ToolSpec], max_bytes: int, seed: int | np.random.Generator | None = None
    ) -> None:
        if not tools:
            raise MantraError("a tool-call space needs at least one tool")
        self.tools = tuple(tools)
        super().__init__(max_bytes, seed=seed)

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        if mask is not None or probability is not None:
            raise MantraError(f"{type(self).__name__}.sample() takes no mask or probability")
        return json.dumps(random_call(self.tools, self.np_random), ensure_ascii=False)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToolCallSpace) and other.max_bytes == self.max_bytes and other.tools == self.tools

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.max_bytes, tuple(tool.name for tool in self.tools)))

    def __repr__(self) -> str:
        return f"ToolCallSpace({len(self.tools)} tools, max_bytes={self.max_bytes})"


def random_call(tools: Sequence[ToolSpec], rng: np.random.Generator) -> dict[str, Any]:
    """A call of a tool drawn uniformly from ``tools`` with :func:`random_arguments`."""
    spec = tools[int(rng.integers(len(tools)))]
    return {"tool": spec.name, "arguments": random_arguments(spec, rng)}


def random_arguments(spec: ToolSpec, rng: np.random.Generator) -> dict[str, Any]:
    """Every parameter of ``spec`` with a random value valid for its JSON schema."""
    return {name: random_value(schema, rng) for name, schema in spec.properties.items()}


def random_value(schema: Mapping[str, Any], rng: np.random.Generator) -> Any:
    """A random JSON value valid for ``schema`` (the subset tool schemas use: enum, anyOf, scalar types, arrays,
    objects); small numbers and short strings, so that they sometimes name real ids of small test domains."""
    if "enum" in schema:
        return schema["enum"][int(rng.integers(len(schema["enum"])))]
    if "anyOf" in schema:
        return random_value(schema["anyOf"][int(rng.integers(len(schema["anyOf"])))], rng)
    kind = schema.get("type")
    if kind == "integer":
        return int(rng.integers(0, 4))
    if kind == "number":
        return float(rng.integers(0, 5000))
    if kind == "boolean":
        return bool(rng.integers(2))
    if kind == "null":
        return None
    if kind == "array":
        items = schema.get("items", {})
        return [random_value(items if isinstance(items, Mapping) else {}, rng) for _ in range(int(rng.integers(1, 3)))]
    if kind == "object":
        properties = schema.get("properties", {})
        return (
            {name: random_value(sub, rng) for name, sub in properties.items()} if isinstance(properties, dict) else {}
        )
    return _random_string(rng)


def _random_string(rng: np.random.Generator) -> str:
    return f"x{int(rng.integers(1000))}"


# -- shared memory (gymnasium's vector envs) ----------------------------------------------------------------
# Layout: a length per sub-env (int64) and max_bytes bytes per sub-env.
SharedTextMemory = tuple[Any, Any]


class SharedTexts(Sequence[str]):
    """The observations of every sub-env, decoded from shared memory on access.

    gymnasium reads shared memory once, when the vector env is built, and hands out that object (deep-copied
    unless ``copy=False``) after every step; for text this object must therefore be a live view, and its deep
    copy a snapshot (a tuple of str).
    """

    def __init__(self, space: JsonText, memory: SharedTextMemory, n: int) -> None:
        self._space, self._n = space, n
        self._lengths = np.frombuffer(memory[0].get_obj(), dtype=np.int64)
        self._data = np.frombuffer(memory[1].get_obj(), dtype=np.uint8)

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(self._n)))
        if not -self._n <= index < self._n:
            raise IndexError(f"sub-env index {index} out of range for {self._n} sub-envs")
        index %= self._n
        start = index * self._space.max_bytes
        return self._data[start : start + int(self._lengths[index])].tobytes().decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(self._n))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __repr__(self) -> str:
        return f"SharedTexts({tuple(self)!r})"


@create_shared_memory.register(JsonText)
def _create_json_text_memory(space: JsonText, n: int = 1, ctx: ModuleType = mp) -> SharedTextMemory:
    return ctx.Array(c_int64, n), ctx.Array(c_uint8, n * space.max_bytes)


@read_from_shared_memory.register(JsonText)
def _read_json_text_memory(space: JsonText, shared_memory: SharedTextMemory, n: int = 1) -> SharedTexts:
    return SharedTexts(space, shared_memory, n)


@write_to_shared_memory.register(JsonText)
def _write_json_text_memory(space: JsonText, index: int, value: str, shared_memory: SharedTextMemory) -> None:
    encoded = value.encode("utf-8")
    if len(encoded) > space.max_bytes:
        raise ObservationTooLargeError(
            f"an observation of {len(encoded)} bytes does not fit {space!r}; the env bounds its observations, "
            "so this text did not come from it"
        )
    start = index * space.max_bytes
    np.frombuffer(shared_memory[1].get_obj(), dtype=np.uint8)[start : start + len(encoded)] = np.frombuffer(
        encoded, dtype=np.uint8
    )
    shared_memory[0][index] = len(encoded)
