"""The check language: AST, canonical text form, JSON form and the normative semantics.

The semantics is defined once, in :mod:`mantra_env.checks.semantics`.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter, ValidationError

from mantra_env.checks.ast import (
    FACT_KINDS,
    NODE_TYPES,
    After,
    Answer,
    Atom,
    Before,
    Call,
    Check,
    Follows,
    NoCall,
    Or,
    Precedes,
    atoms,
    canonical_value,
    tools_mentioned,
)
from mantra_env.checks.semantics import (
    NO_RULES,
    ArgRules,
    CheckOutcome,
    FailureCategory,
    ToolArgRules,
    TraceIndex,
    arg_equal,
    args_match,
    bag_equal,
    call_matches,
    evaluate,
    normalise_text,
    paired_equal,
    values_equal,
)
from mantra_env.checks.text import format_check, parse_check
from mantra_env.errors import CheckValueError, error_path
from mantra_env.limits import MAX_CHECK_ATOMS, MAX_DEPTH, json_depth

CHECK_ADAPTER: TypeAdapter[Check] = TypeAdapter(Check)
MAX_CHECK_JSON_DEPTH = MAX_CHECK_ATOMS + MAX_DEPTH + 4
"""The deepest JSON form a check within the limits can have (an OR per atom, an atom, its args, a value)."""


def check_to_json(check: Check) -> dict[str, Any]:
    """The JSON form of a check (the AST as a JSON object with an ``op`` field)."""
    data: dict[str, Any] = CHECK_ADAPTER.dump_python(check, mode="json")
    return data


def check_from_json(data: Any) -> Check:
    """Build a check from its JSON form, or from its text form if ``data`` is a string.

    Raises:
        CheckValueError: naming the field that is wrong.
    """
    if isinstance(data, str):
        return parse_check(data)
    if json_depth(data, MAX_CHECK_JSON_DEPTH) > MAX_CHECK_JSON_DEPTH:  # validation recurses on nesting
        raise CheckValueError(
            f"invalid check JSON: it nests more than {MAX_CHECK_JSON_DEPTH} levels deep "
            f"(a check has at most {MAX_CHECK_ATOMS} atoms, argument values nest at most {MAX_DEPTH} levels)"
        )
    try:
        return CHECK_ADAPTER.validate_python(data)
    except ValidationError as exc:
        problems = "; ".join(f"{error_path(err['loc'], 'check')}: {err['msg']}" for err in exc.errors())
        raise CheckValueError(f"invalid check JSON: {problems}") from None


__all__ = [
    "CHECK_ADAPTER",
    "FACT_KINDS",
    "MAX_CHECK_JSON_DEPTH",
    "NODE_TYPES",
    "NO_RULES",
    "After",
    "Answer",
    "ArgRules",
    "Atom",
    "Before",
    "Call",
    "Check",
    "CheckOutcome",
    "FailureCategory",
    "Follows",
    "NoCall",
    "Or",
    "Precedes",
    "ToolArgRules",
    "TraceIndex",
    "arg_equal",
    "args_match",
    "atoms",
    "bag_equal",
    "call_matches",
    "canonical_value",
    "check_from_json",
    "check_to_json",
    "evaluate",
    "format_check",
    "normalise_text",
    "paired_equal",
    "parse_check",
    "tools_mentioned",
    "values_equal",
]
