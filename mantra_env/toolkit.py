"""Domain toolkits: tools are methods declared with ``@tool(kind=...)``; their schema is derived, never written.

The JSON schema of a tool comes from its signature (types, defaults) and its Google-style docstring (summary
and ``Args:`` descriptions) through a pydantic model built once per tool, which also validates the arguments an
agent sends. :meth:`Toolkit.execute` never raises for bad input: unknown tools, invalid arguments and domain
failures come back as a :class:`~mantra_env.trace.ToolError`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar, TypeVar, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from mantra_env.errors import MantraError, error_path
from mantra_env.limits import MAX_STRING_CHARS, bounded, json_problem
from mantra_env.tools import FREE_TEXT_KEY, ORDERED_KEY, TARGET_KEY, ToolSpec
from mantra_env.trace import ToolError, ToolKind

F = TypeVar("F", bound=Callable[..., Any])


class ToolDefinitionError(MantraError, TypeError):
    """A toolkit method is declared in a way its schema cannot be derived from (fix the method)."""


class ToolFailure(MantraError, RuntimeError):
    """Raised by a tool for a domain error (unknown id, illegal state); the agent sees it as a tool error."""

    def __init__(self, message: str, code: str = "domain_error") -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class _ToolMark:
    kind: ToolKind


def tool(*, kind: ToolKind) -> Callable[[F], F]:
    """Declare a toolkit method as a tool of the given kind (``read`` or ``write``)."""
    if kind not in ("read", "write"):
        raise ToolDefinitionError(f"tool kind must be 'read' or 'write', not {kind!r}")

    def mark(function: F) -> F:
        function.__mantra_tool__ = _ToolMark(kind)  # type: ignore[attr-defined]
        return function

    return mark


# ``new_item_ids: Annotated[list[str], ORDERED]``: a list parameter whose order pairs it with the tool's other
# ORDERED lists (``item_ids``): checks compare them together, up to one common permutation of their rows; every
# other list parameter is matched up to permutation on its own.
ORDERED = Field(json_schema_extra={ORDERED_KEY: True})

# ``address: Annotated[str, FREE_TEXT]``: a string the tool stores or compares leniently (an address, a reason, a
# note): checks compare it after normalisation (case, spacing, punctuation, Unicode forms). Lookup keys, ids,
# emails, codes and enums stay unmarked: they compare exactly.
FREE_TEXT = Field(json_schema_extra={FREE_TEXT_KEY: True})

# ``payment_method_id: Annotated[str, NOT_TARGET]``: an ``*_id`` parameter that does not name the record a write
# acts on (it pays for it); ``TARGET`` marks one that does without the ``*_id`` name. A write matching no check is
# still requested when a write of the case's oracle plan has the same tool and targets (ToolSpec.targets).
TARGET = Field(json_schema_extra={TARGET_KEY: True})
NOT_TARGET = Field(json_schema_extra={TARGET_KEY: False})

_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters):\s*$")
_SECTION = re.compile(r"^\s*(Returns|Raises|Yields|Examples?|Notes?):\s*$")
_ARG_LINE = re.compile(r"^\s*(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The summary (text before the first section) and the per-argument descriptions of a Google docstring."""
    lines = inspect.cleandoc(doc or "").splitlines()
    summary: list[str] = []
    args: dict[str, str] = {}
    in_args = False
    current: str | None = None
    for line in lines:
        if _ARGS_HEADER.match(line):
            in_args, current = True, None
            continue
        if _SECTION.match(line):
            in_args, current = False, None
            continue
        if not in_args:
            if not args:
                summary.append(line)
            continue
        match = _ARG_LINE.match(line)
        indent = len(line) - len(line.lstrip())
        if match and indent <= 4:
            current = match.group(1)
            args[current] = match.group(2).strip()
        elif current and line.strip():
            args[current] = f"{args[current]} {line.strip()}".strip()
    return " ".join(part.strip() for part in summary if part.strip()), args


@dataclass(frozen=True)
class ToolDefinition:
    """A tool's derived spec and argument model, and the method implementing it."""

    spec: ToolSpec
    arguments: type[BaseModel]
    method_name: str


def _strip_titles(schema: Any, names: bool = False) -> Any:
    """The schema without pydantic's ``title`` annotations; ``names``: ``schema`` maps names to schemas
    (``properties``, ``$defs``), where a parameter called ``title`` is kept."""
    if isinstance(schema, dict):
        return {
            k: _strip_titles(v, names=not names and k in ("properties", "$defs"))
            for k, v in schema.items()
            if names or k != "title"
        }
    if isinstance(schema, list):
        return [_strip_titles(item) for item in schema]
    return schema


def _inline_refs(schema: Any, defs: dict[str, Any]) -> Any:
    """``schema`` with every ``{"$ref": "#/$defs/X"}`` replaced by X itself: a list of flat records (pydantic
    models as list items) is described inline, as the tool specs' readers (agents, the world-model DSL) expect."""
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return _inline_refs(defs[ref.removeprefix("#/$defs/")], defs)
        return {k: _inline_refs(v, defs) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_inline_refs(item, defs) for item in schema]
    return schema


def derive_tool(owner: type, name: str, method: Callable[..., Any], kind: ToolKind) -> ToolDefinition:
    """Build the spec and argument model of one tool from its signature and docstring."""
    where = f"{owner.__name__}.{name}"
    summary, descriptions = parse_docstring(method.__doc__)
    if not summary:
        raise ToolDefinitionError(f"{where}: a tool needs a docstring; its first paragraph is the tool description")
    try:
        hints = get_type_hints(method, include_extras=True)  # keeps Annotated[list[str], ORDERED]
    except NameError as exc:
        raise ToolDefinitionError(f"{where}: cannot resolve a type hint ({exc})") from None
    fields: dict[str, Any] = {}
    for parameter in list(inspect.signature(method).parameters.values())[1:]:  # skip self
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise ToolDefinitionError(f"{where}: *args/**kwargs cannot be described to an agent; name each argument")
        if parameter.name not in hints:
            raise ToolDefinitionError(f"{where}: argument {parameter.name!r} has no type hint")
        if parameter.name not in descriptions:
            raise ToolDefinitionError(f"{where}: argument {parameter.name!r} is not described under 'Args:'")
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        fields[parameter.name] = (hints[parameter.name], Field(default, description=descriptions[parameter.name]))
    unknown = sorted(set(descriptions) - set(fields))
    if unknown:
        raise ToolDefinitionError(f"{where}: 'Args:' describes {', '.join(unknown)}, which the method does not take")
    model = create_model(f"{name}_arguments", __config__=ConfigDict(extra="forbid", strict=True), **fields)
    schema = _strip_titles(model.model_json_schema())
    schema = _inline_refs(schema, schema.pop("$defs", {}))
    schema.setdefault("properties", {})
    schema.setdefault("required", [])
    schema["additionalProperties"] = False
    spec = ToolSpec(name=name, description=summary, kind=kind, parameters=schema)
    return ToolDefinition(spec=spec, arguments=model, method_name=name)


class Toolkit:
    """Base class of a domain's tools. Subclasses define ``@tool`` methods over ``self.db``."""

    domain: ClassVar[str] = ""

    @classmethod
    @cache
    def definitions(cls) -> dict[str, ToolDefinition]:
        """Every tool of this toolkit, by name, in definition order (derived once per class)."""
        found: dict[str, ToolDefinition] = {}
        for klass in reversed(cls.__mro__):
            for name, member in vars(klass).items():
                mark = getattr(member, "__mantra_tool__", None)
                if isinstance(mark, _ToolMark):
                    found[name] = derive_tool(cls, name, member, mark.kind)
        return found

    @classmethod
    def tool_specs(cls) -> list[ToolSpec]:
        return [definition.spec for definition in cls.definitions().values()]

    def execute(self, name: str, arguments: Mapping[str, Any]) -> tuple[Any, ToolError | None]:
        """Run one tool call; returns ``(result, None)`` or ``(None, error)`` and never raises for bad input."""
        definition = self.definitions().get(name)
        if definition is None:
            known = ", ".join(self.definitions())
            return None, ToolError(
                code="unknown_tool", message=f"there is no tool {bounded(name)!r}; the tools are: {known}"
            )
        problem = json_problem(dict(arguments), strings=MAX_STRING_CHARS)
        if problem is not None:  # checked first: pydantic's validation and error messages recurse into values
            return None, ToolError(code="invalid_arguments", message=f"{name}: the arguments {problem}")
        try:
            parsed = definition.arguments.model_validate(dict(arguments))
        except ValidationError as exc:
            problems = "; ".join(f"{error_path(err['loc'], 'arguments')}: {err['msg']}" for err in exc.errors())
            return None, ToolError(code="invalid_arguments", message=f"{name}: {problems}")
        try:
            result = getattr(self, definition.method_name)(**parsed.__dict__)  # dict(model) costs a failed lookup
        except ToolFailure as failure:
            return None, ToolError(code=failure.code, message=str(failure))
        return result, None
