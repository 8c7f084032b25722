"""Tool specifications: the JSON-schema view of a domain's tools that agents, checks and world models see.

A :class:`ToolSpec` is derived from the tool's Python signature and docstring (see the domain toolkit), never
written by hand. ``parameters`` is a JSON Schema object: ``{"type": "object", "properties": {...},
"required": [...], "additionalProperties": false}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from mantra_env.checks.ast import Call, Check, NoCall, canonical_value, map_atoms
from mantra_env.checks.semantics import ArgRules, ToolArgRules
from mantra_env.errors import did_you_mean
from mantra_env.trace import ToolKind

# The JSON-schema key marking a list parameter whose order matters (the one source of truth for argument matching).
ORDERED_KEY = "x-ordered"
# The JSON-schema key marking a string parameter as free text (an address, a reason, a note): checks compare it
# after normalisation (:func:`mantra_env.checks.semantics.normalise_text`); every other string compares exactly.
FREE_TEXT_KEY = "x-free-text"
# The JSON-schema key marking whether a write's parameter names the record the write acts on (its *target*); see
# :meth:`ToolSpec.targets`. Without it, a parameter named ``id`` or ``*_id`` is a target.
TARGET_KEY = "x-target"
_SCHEMA_MARKS = (ORDERED_KEY, FREE_TEXT_KEY, TARGET_KEY)  # mantra's own keys, not sent to providers
_NO_PARAMETERS: dict[str, JsonValue] = {
    "type": "object",
    "properties": {},
    "required": [],
    "additionalProperties": False,
}

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


class ToolSpec(BaseModel):
    """One tool as the agent sees it: name, description, read/write kind and JSON-schema parameters."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    description: str = ""
    kind: ToolKind
    parameters: dict[str, JsonValue] = Field(default_factory=lambda: dict(_NO_PARAMETERS))

    @property
    def properties(self) -> dict[str, Any]:
        props = self.parameters.get("properties", {})
        return props if isinstance(props, dict) else {}

    @property
    def required(self) -> list[str]:
        required = self.parameters.get("required", [])
        return [str(name) for name in required] if isinstance(required, list) else []

    def param_schema(self, name: str) -> dict[str, Any] | None:
        """The JSON schema of parameter ``name``, or None if the tool has no such parameter."""
        schema = self.properties.get(name)
        return schema if isinstance(schema, dict) else None

    def ordered(self, name: str) -> bool:
        """Whether list parameter ``name`` is paired by position with the tool's other such lists (schema key
        ``"x-ordered": true``): checks compare paired lists together, up to one common permutation; other
        lists match any permutation (see :mod:`mantra_env.checks.semantics`)."""
        schema = self.param_schema(name)
        return schema is not None and schema.get("type") == "array" and schema.get(ORDERED_KEY) is True

    def free_text(self, name: str) -> bool:
        """Whether string parameter ``name`` is free text (schema key ``"x-free-text": true``): checks compare it
        after normalisation (see :mod:`mantra_env.checks.semantics`)."""
        schema = self.param_schema(name)
        return schema is not None and _allows_string(schema) and schema.get(FREE_TEXT_KEY) is True

    def defaults(self) -> dict[str, Any]:
        """The schema default of each optional parameter that has one (what the tool uses when a call omits it)."""
        required = set(self.required)
        return {
            name: schema["default"]
            for name, schema in self.properties.items()
            if isinstance(schema, dict) and "default" in schema and name not in required
        }

    def targets(self) -> tuple[str, ...]:
        """The parameters that name the record a call of this tool acts on (an order, a line, a request), in
        schema order: those marked ``"x-target": true``, and, by default, those named ``id`` or ending in
        ``_id`` unless marked ``"x-target": false`` (a payment method pays for the write, it is not what the
        write changes). Two writes of one tool with equal targets are the same write in other words
        (:mod:`mantra_env.unrequested`)."""
        found = []
        for name, schema in self.properties.items():
            mark = schema.get(TARGET_KEY) if isinstance(schema, dict) else None
            if mark is True or (mark is None and (name == "id" or name.endswith("_id"))):
                found.append(name)
        return tuple(found)

    def openai_schema(self) -> dict[str, Any]:
        """The tool in OpenAI function-calling format (what litellm sends; without mantra's own schema keys,
        which some providers refuse)."""
        properties = {
            name: {key: value for key, value in schema.items() if key not in _SCHEMA_MARKS}
            if isinstance(schema, dict)
            else schema
            for name, schema in self.properties.items()
        }
        parameters = {**self.parameters, "properties": properties} if self.properties else self.parameters
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": parameters},
        }


def _allows_string(schema: Mapping[str, Any]) -> bool:
    """Whether a parameter schema admits a string (``"type": "string"``, or an ``anyOf`` option that does)."""
    if schema.get("type") == "string" and "enum" not in schema:
        return True
    options = schema.get("anyOf")
    return isinstance(options, list) and any(isinstance(o, dict) and _allows_string(o) for o in options)


_RULES_MEMO: dict[tuple[int, ...], tuple[tuple[ToolSpec, ...], ArgRules]] = {}
_LAST_RULES: tuple[object, ArgRules | None] = (None, None)  # the last tuple of specs asked for (kept alive), its rules


def argument_rules(specs: Iterable[ToolSpec]) -> ArgRules:
    """What the tool schemas add to argument matching (schema defaults, free-text parameters), as the grader
    and every other matcher read it. Memoised per set of spec objects (the env grades after every step, with its
    domain's one tuple of specs: answered by identity)."""
    global _LAST_RULES
    last_specs, last_rules = _LAST_RULES  # one read of one immutable pair: step threads of two domains may race here
    if specs is last_specs and last_rules is not None:
        return last_rules
    given = tuple(specs)
    memo_key = tuple(id(spec) for spec in given)
    found = _RULES_MEMO.get(memo_key)
    if found is None:
        if len(_RULES_MEMO) >= 256:
            _RULES_MEMO.clear()
        found = _RULES_MEMO[memo_key] = (given, _build_rules(given))  # the specs kept alive: their ids stay theirs
    if isinstance(specs, tuple):
        _LAST_RULES = (specs, found[1])
    return found[1]


def _build_rules(specs: Sequence[ToolSpec]) -> ArgRules:
    tools: dict[str, ToolArgRules] = {}
    key: list[tuple[str, str, str]] = []
    for spec in specs:
        defaults: dict[str, Any] = {}
        for name, value in spec.defaults().items():
            try:
                defaults[name] = canonical_value(value)
            except (ValueError, TypeError):  # not a JSON value: an omitted argument matches no pin
                continue
            key.append((spec.name, name, "default:" + json.dumps(defaults[name], sort_keys=True)))
        free_text = frozenset(name for name in spec.properties if spec.free_text(name))
        key.extend((spec.name, name, "free-text") for name in sorted(free_text))
        if defaults or free_text:
            tools[spec.name] = ToolArgRules(MappingProxyType(defaults), free_text)
    return ArgRules(MappingProxyType(tools), tuple(sorted(key)))


def fits_schema(value: Any, schema: Mapping[str, Any], defs: Mapping[str, Any] = MappingProxyType({})) -> bool:
    """Whether a (canonical) JSON value has the type, and is one of the values, that ``schema`` allows."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        schema = defs.get(ref.removeprefix("#/$defs/"), {})
    if "anyOf" in schema:
        return any(fits_schema(value, option, defs) for option in schema["anyOf"])
    if "enum" in schema and value not in schema["enum"]:
        return False
    kinds = schema.get("type")
    if kinds is None:
        return True
    for kind in [kinds] if isinstance(kinds, str) else kinds:
        allowed = _JSON_TYPES.get(kind, (object,))
        if isinstance(value, allowed) and not (isinstance(value, bool) and bool not in allowed):
            return True
    return False


def call_problem(tool: str, arguments: Iterable[str], specs: Mapping[str, ToolSpec]) -> str | None:
    """Why a call of ``tool`` with these argument names cannot be made with ``specs`` (None if it can)."""
    spec = specs.get(tool)
    if spec is None:
        hint = did_you_mean(tool, specs)
        return f"calls {tool}, which is not a tool{'; ' + hint if hint else ''}"
    unknown = sorted(set(arguments) - set(spec.properties))
    if unknown:
        return (
            f"pins {', '.join(unknown)}, which {tool} does not take; "
            f"its parameters are: {', '.join(spec.properties) or '(none)'}"
        )
    return None


def list_order_problem(atom: Call | NoCall, specs: Mapping[str, ToolSpec]) -> str | None:
    """Why the atom's ``ordered`` disagrees with the tool schema (None if it agrees or the tool is unknown)."""
    spec = specs.get(atom.tool)
    if spec is None:
        return None
    wanted = tuple(sorted(n for n, v in atom.args.items() if isinstance(v, list) and spec.ordered(n)))
    if atom.ordered == wanted:
        return None
    return (
        f"{atom.tool}: pinned lists marked PAIRED are {list(atom.ordered)}, but the tool schema pairs "
        f"{list(wanted)}; write PAIRED after exactly those values (or apply with_list_order)"
    )


def with_list_order(check: Check, specs: Mapping[str, ToolSpec]) -> Check:
    """``check`` with every atom's ``ordered`` taken from the tool schema (tools not in ``specs`` unchanged)."""

    def stamp(atom: Call | NoCall) -> Call | NoCall:
        spec = specs.get(atom.tool)
        if spec is None:
            return atom
        ordered = tuple(sorted(n for n, v in atom.args.items() if isinstance(v, list) and spec.ordered(n)))
        return atom if ordered == atom.ordered else atom.model_copy(update={"ordered": ordered})

    return map_atoms(check, stamp)
