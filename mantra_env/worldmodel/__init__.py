"""The world-model DSL: typed AST, parser, printer, type checker, JSON form and typed edits.

Nothing here imports Z3 (the compiler is :mod:`mantra_env.smt`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import TypeAdapter, ValidationError

from mantra_env.errors import error_path
from mantra_env.limits import is_unicode, lone_surrogate_text
from mantra_env.worldmodel.ast import (
    ArrayType,
    CollectionOp,
    ConstDecl,
    Contains,
    DslType,
    EnumType,
    Expr,
    FieldAccess,
    FieldDecl,
    ListLit,
    ListType,
    Lit,
    NextRef,
    OpApp,
    ParamBind,
    ParamRef,
    RecordType,
    ScalarType,
    Span,
    Transition,
    VarDecl,
    VarRef,
    WorldModel,
)
from mantra_env.worldmodel.diagnostics import Diagnostic, DslError, DslSyntaxError, DslTypeError
from mantra_env.worldmodel.parser import parse_expr, parse_model
from mantra_env.worldmodel.printer import format_expr, format_model
from mantra_env.worldmodel.typecheck import BoundParam, CheckedModel, check_model, schema_type

MODEL_ADAPTER: TypeAdapter[WorldModel] = TypeAdapter(WorldModel)
EXPR_ADAPTER: TypeAdapter[Expr] = TypeAdapter(Expr)


def model_to_json(model: WorldModel) -> dict[str, Any]:
    """The JSON form of a model (spans are not part of it)."""
    data: dict[str, Any] = MODEL_ADAPTER.dump_python(model, mode="json")
    return data


def model_from_json(data: Any, origin: str = "world model JSON") -> WorldModel:
    """A model from its JSON form (a dict or a JSON string).

    Raises:
        DslSyntaxError: naming the JSON path of every problem (code ``bad_json``), or code ``bad_string`` for
            a string with a lone surrogate (refused in the text form too).
    """
    # A string with a lone surrogate is refused with the same code as in the text form (bad_string): such
    # text cannot be stored or sent as UTF-8. JSON text carries it as an escape that validate_json refuses.
    bad = _lone_surrogate(data)
    if bad is not None:
        shown = bad.encode("utf-8", "backslashreplace").decode("utf-8")[:60]
        raise DslSyntaxError([_surrogate_problem(repr(shown))], None, origin)
    try:
        if isinstance(data, str | bytes):
            return MODEL_ADAPTER.validate_json(data)
        return MODEL_ADAPTER.validate_python(data)
    except ValidationError as error:
        problems = [
            Diagnostic("bad_json", f"{error_path(e['loc'], '(root)')}: {e['msg']}") for e in error.errors()[:20]
        ]
        raise DslSyntaxError(problems, None, origin) from None


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _lone_surrogate(data: Any) -> str | None:
    """The first string of the JSON form (Python or text) that holds a lone surrogate, if any."""
    if isinstance(data, str | bytes):
        try:
            text = data.decode("utf-8") if isinstance(data, bytes) else data
        except UnicodeDecodeError:
            return None  # validate_json reports it
        if not _SURROGATE_ESCAPE.search(text) and is_unicode(text):
            return None  # the common case: no need to read the text twice
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return None  # validate_json reports it
    return lone_surrogate_text(data)


def _surrogate_problem(what: str) -> Diagnostic:
    return Diagnostic("bad_string", f"a string holds a lone surrogate ({what}); use real characters")


def model_json_schema() -> dict[str, Any]:
    """The JSON schema of the model's JSON form (for schema-constrained LLM output)."""
    return MODEL_ADAPTER.json_schema()


__all__ = [
    "EXPR_ADAPTER",
    "MODEL_ADAPTER",
    "ArrayType",
    "BoundParam",
    "CheckedModel",
    "CollectionOp",
    "ConstDecl",
    "Contains",
    "Diagnostic",
    "DslError",
    "DslSyntaxError",
    "DslType",
    "DslTypeError",
    "EnumType",
    "Expr",
    "FieldAccess",
    "FieldDecl",
    "ListLit",
    "ListType",
    "Lit",
    "NextRef",
    "OpApp",
    "ParamBind",
    "ParamRef",
    "RecordType",
    "ScalarType",
    "Span",
    "Transition",
    "VarDecl",
    "VarRef",
    "WorldModel",
    "check_model",
    "format_expr",
    "format_model",
    "model_from_json",
    "model_json_schema",
    "model_to_json",
    "parse_expr",
    "parse_model",
    "schema_type",
]
