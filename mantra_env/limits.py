"""Size limits on untrusted input, defined once for checks, the world-model DSL and agent actions.

Agents, generated suites and hand-edited files are untrusted: every recursive walk below a limit here stays
far from Python's recursion limit, and every echo of user text is bounded. The limits are generous for real
use (a real check has a handful of atoms and arguments nested two or three levels; a real world model nests
expressions about ten levels deep) and small enough that nothing downstream (grading, printing, the Z3
encoding, JSON serialisation of a trace) can overflow the stack.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

MAX_DEPTH = 64
"""Nesting depth of JSON values (action arguments, check argument values), of parentheses in a check's text,
and of DSL expressions."""

MAX_CHECK_ATOMS = 64
"""Atoms in one check (an ``A OR B OR ...`` chain of more is refused: it bounds the depth of the check tree)."""

MAX_JSON_NODES = 100_000
"""Values (scalars, lists, objects) in one JSON value an agent sends as tool arguments."""

MAX_STRING_CHARS = 10_000
"""Characters in one string argument of a tool call."""

MAX_NAME_CHARS = 200
"""Characters of a tool name that are stored and echoed; a longer name is cut and marked as truncated."""

MAX_INT_DIGITS = 4000
"""Decimal digits of an integer (Python refuses to print integers of more than 4300 digits)."""

MAX_TEXT = 1_000_000
"""Characters of an action text, and of any observation."""

MAX_RESULT_BYTES = 1_000_000
"""UTF-8 bytes of a tool result's observation; a larger result is the structured error ``result_too_large``. The
env's observation space holds the larger of this and the domain's longest opening observation."""

TRUNCATED = "…[truncated]"


def json_depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """The nesting depth of a JSON-like value (a scalar is 0, ``[]`` is 1), measured without recursion.

    Stops early and returns ``limit + 1`` once the depth exceeds ``limit``, so the cost is bounded by the
    part of the value within the limit.
    """
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        depth += 1
        if depth > limit:
            return limit + 1
        deepest = max(deepest, depth)
        stack.extend((child, depth) for child in children)
    return deepest


def json_problem(
    value: Any, *, depth: int = MAX_DEPTH, nodes: int = MAX_JSON_NODES, strings: int | None = None
) -> str | None:
    """Why ``value`` is not a JSON value within the limits (``None`` if it is), measured without recursion.

    JSON values are ``None``, booleans, ints (of at most :data:`MAX_INT_DIGITS` digits), floats, strings
    (valid Unicode: no lone surrogates, which cannot be stored or sent to a model), lists and dicts with
    string keys. With ``strings``, a string longer than that many characters is a problem too.
    """
    count = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        count += 1
        if count > nodes:
            return f"has more than {nodes} values"
        if isinstance(item, str):
            if strings is not None and len(item) > strings:
                return f"holds a string longer than {strings} characters"
            if not is_unicode(item):
                return "holds a string with a lone surrogate (not valid Unicode text)"
            continue
        if isinstance(item, int) and not isinstance(item, bool) and item.bit_length() > _MAX_INT_BITS:
            return f"holds an integer of more than {MAX_INT_DIGITS} digits"
        if item is None or isinstance(item, bool | int | float):
            continue
        if isinstance(item, dict):
            if not all(isinstance(key, str) for key in item):
                return "has an object key that is not a string"
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            return f"holds a value of type {type(item).__name__}, which is not JSON"
        if level + 1 > depth:
            return f"nests more than {depth} levels deep"
        stack.extend((child, level + 1) for child in children)
    return None


_MAX_INT_BITS = int(MAX_INT_DIGITS * 3.3219)  # log2(10): an integer of this many bits has < MAX_INT_DIGITS digits


def is_unicode(text: str) -> bool:
    """Whether ``text`` is valid Unicode: no lone surrogate code points, which UTF-8 cannot encode (a
    ``json.loads`` of ``"\\ud800"`` makes one), so it can be stored, printed and sent to a model."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def lone_surrogate_text(value: Any) -> str | None:
    """The first string (key or value) in a JSON-like value that is not valid Unicode, found without
    recursion; ``None`` if there is none."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not is_unicode(item):
                return item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return None


def bounded(text: str, limit: int = MAX_NAME_CHARS) -> str:
    """``text`` if it is at most ``limit`` characters, else its prefix marked with :data:`TRUNCATED`."""
    return text if len(text) <= limit else text[:limit] + TRUNCATED


def json_text_too_deep(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether a JSON text nests arrays and objects more than ``limit`` levels deep, found on the text without
    parsing it (``json.loads`` recurses, and a text thousands of levels deep makes it raise ``RecursionError``).

    Brackets inside strings do not count; the scan stops at the first bracket beyond the limit.
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    return any(depth > limit for depth in bracket_depths(text))


def bracket_depths(text: str) -> Iterator[int]:
    """The nesting depth after each array or object bracket of the JSON text ``text``, in order, brackets inside
    strings left out (a scan of the text, no parse: it also reads a text cut short or nested too deep)."""
    depth = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            yield depth
        elif char in "]}":
            depth -= 1
            yield depth
