"""The check AST: frozen pydantic nodes whose JSON form is the check's JSON form.

The meaning of every node is defined in :mod:`mantra_env.checks.semantics`; this module only says what a
well-formed check looks like. Argument values are canonicalised on construction (see
:func:`canonical_value`) so that equal checks have equal ASTs.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Annotated, Any, Literal, Self, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationInfo, field_validator, model_validator

from mantra_env.errors import CheckValueError
from mantra_env.limits import MAX_CHECK_ATOMS, MAX_DEPTH, json_depth

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def canonical_value(value: Any, where: str = "value") -> JsonValue:
    """Return the canonical JSON form of an argument value.

    Strings are trimmed; a float with an integral value becomes an int (``2150.0`` -> ``2150``) and ``-0.0``
    becomes ``0``; lists and objects are canonicalised element-wise. NaN, infinities, and anything that is
    not a JSON value (tuples, sets, bytes, objects) raise :class:`CheckValueError` naming ``where``.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CheckValueError(f"{where}: {value!r} is not a JSON number; use a finite number or a string")
        return int(value) if value.is_integer() else value
    if isinstance(value, list):
        return [canonical_value(item, f"{where}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, dict):
        out: dict[str, JsonValue] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise CheckValueError(f"{where}: object key {key!r} is not a string")
            out[key] = canonical_value(item, f"{where}.{key}")
        return out
    raise CheckValueError(
        f"{where}: {value!r} (a {type(value).__name__}) is not a JSON value; "
        "use a string, number, true/false, null, list or object"
    )


class _Node(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy without the cached properties: pydantic copies ``__dict__``, where ``cached_property`` keeps
        its values, so a copy with updated fields would otherwise answer ``atoms``, ``text`` or ``match_key``
        from the original (an atom stamped PAIRED by ``with_list_order`` kept its unpaired atoms and key)."""
        copy = super().model_copy(update=update, deep=deep)
        for name in _cached_names(type(copy)):
            copy.__dict__.pop(name, None)
        return copy

    @cached_property
    def text(self) -> str:
        """The canonical text form (computed once per node: the grader prints every check it grades)."""
        from mantra_env.checks.text import format_check  # text.py imports this module

        return format_check(self)  # type: ignore[arg-type]

    @cached_property
    def atom_count(self) -> int:
        """The number of atoms (anchors included); cached, so an OR chain counts its atoms in linear time."""
        if isinstance(self, Or):
            return self.left.atom_count + self.right.atom_count
        if isinstance(self, Answer):
            return 0  # its read names where the facts come from; it is no trace atom
        return 1 if isinstance(self, _AtomBase) else 2

    @cached_property
    def atoms(self) -> tuple[Call | NoCall, ...]:
        """Every atom of this check, anchors included, left to right."""
        return tuple(atoms(self))  # type: ignore[arg-type]


class _AtomBase(_Node):
    tool: str = Field(description="Tool name.")
    args: dict[str, JsonValue] = Field(
        default_factory=dict,
        description="Partial argument map: only these arguments are compared; missing ones are wildcards.",
    )

    ordered: tuple[str, ...] = Field(
        default=(),
        exclude_if=lambda names: not names,
        description="Paired list arguments (the tool schema marks them x-ordered: their order pairs them with "
        "each other): compared together, up to one common permutation of their rows; every other pinned list "
        "matches any permutation of itself.",
    )

    @cached_property
    def pinned(self) -> tuple[tuple[str, JsonValue], ...]:
        """The pinned arguments as a tuple, so matching iterates a tuple instead of a dict view."""
        return tuple(self.args.items())

    @cached_property
    def match_key(self) -> str:
        """Identifies the set of calls this atom matches (the same for CALL and NO-CALL of one tool and args)."""
        key = self.tool + json.dumps(self.args, sort_keys=True, ensure_ascii=False)
        return key + "~" + ",".join(self.ordered) if self.ordered else key

    @model_validator(mode="after")
    def _ordered_lists(self) -> _AtomBase:
        for name in self.ordered:
            if not isinstance(self.args.get(name), list):
                raise CheckValueError(f"{self.tool}: {name!r} is marked PAIRED but is not a pinned list argument")
        return self

    @field_validator("ordered")
    @classmethod
    def _sorted(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(sorted(set(names)))  # canonical: equal checks have equal ASTs

    @field_validator("tool")
    @classmethod
    def _tool_is_identifier(cls, tool: str) -> str:
        if not IDENTIFIER.match(tool):
            raise CheckValueError(f"tool name {tool!r} is not an identifier (letters, digits, underscore)")
        return tool

    @field_validator("args", mode="before")
    @classmethod
    def _canonical_args(cls, args: Any) -> dict[str, JsonValue]:
        if not isinstance(args, dict):
            raise CheckValueError(f"args must be an object mapping argument names to values, not {args!r}")
        out: dict[str, JsonValue] = {}
        for name, value in args.items():
            if not isinstance(name, str) or not IDENTIFIER.match(name):
                raise CheckValueError(f"argument name {name!r} is not an identifier")
            if json_depth(value) > MAX_DEPTH:  # canonical_value and everything after it recurse
                raise CheckValueError(f"argument {name!r}: its value nests more than {MAX_DEPTH} levels deep")
            out[name] = canonical_value(value, f"argument {name!r}")
        return out


class Call(_AtomBase):
    """``CALL t(a)``: some step calls ``t`` with arguments matching ``a``."""

    op: Literal["call"] = "call"


class NoCall(_AtomBase):
    """``NO-CALL t(a)``: no step calls ``t`` with arguments matching ``a``."""

    op: Literal["no_call"] = "no_call"


Atom: TypeAlias = Annotated[Call | NoCall, Field(discriminator="op")]


class Or(_Node):
    """``A OR B``: at least one operand holds."""

    op: Literal["or"] = "or"
    left: Check
    right: Check

    @model_validator(mode="after")
    def _bounded(self) -> Or:
        # Every walk over a check (grading, printing, the Z3 encoding) recurses on OR; bounding the atoms
        # bounds the depth. The operands' counts are cached, so a chain is checked without recursion.
        if isinstance(self.left, Answer) or isinstance(self.right, Answer):
            raise CheckValueError("an ANSWER check stands alone: it cannot be an operand of OR")
        count = self.left.atom_count + self.right.atom_count
        if count > MAX_CHECK_ATOMS:
            raise CheckValueError(f"a check may have at most {MAX_CHECK_ATOMS} atoms; this OR has {count}")
        return self


class After(_Node):
    """``A AFTER anchor``: every step matching ``A`` comes after an anchor (NO-CALL: none comes after one)."""

    op: Literal["after"] = "after"
    target: Atom
    anchor: Call


class Before(_Node):
    """``A BEFORE anchor``: every step matching ``A`` comes before an anchor (NO-CALL: none comes before one)."""

    op: Literal["before"] = "before"
    target: Atom
    anchor: Call


class Follows(_Node):
    """``call FOLLOWS anchor``: both occur and every ``call`` step has an anchor step before it."""

    op: Literal["follows"] = "follows"
    call: Call
    anchor: Call


class Precedes(_Node):
    """``call PRECEDES anchor``: both occur and every anchor step has a ``call`` step before it."""

    op: Literal["precedes"] = "precedes"
    call: Call
    anchor: Call


FactKind = Literal["date", "time", "money", "identifier", "enum", "number"]
FACT_KINDS: tuple[FactKind, ...] = ("date", "time", "money", "identifier", "enum", "number")
_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[(?:\d+|\*)\])*(?:\.[A-Za-z_][A-Za-z0-9_]*(?:\[(?:\d+|\*)\])*)*\Z")


class Answer(_Node):
    """``ANSWER t(a).path AS kind = value``: the final answer states the fact(s) at ``path`` of the result of the
    read ``t(a)``, as typed values of ``kind`` (see "Answer facts" in :mod:`mantra_env.checks.semantics`).

    ``expected`` holds the values the path resolved to on the case's database when the check was written (one
    per element a ``[*]`` path selects), each in its kind's canonical form (:func:`~mantra_env.checks.facts.
    canonical_fact`: ``"8:15"`` and ``"2024-05-01T08:15:00"`` as times are both ``"08:15"``, ``57`` as money is
    ``"57.00"``), so equal checks have equal ASTs; ``None`` until the generation pipeline resolves it.
    """

    op: Literal["answer"] = "answer"
    read: Call = Field(description="The read whose result holds the facts (tool and pinned arguments).")
    path: str = Field(description="Path into the read's JSON result: fields, [k] elements, [*] every element.")
    kind: FactKind = Field(description="How the facts are parsed and compared in the final answer.")
    expected: tuple[str, ...] | None = Field(
        default=None, description="The facts at the path on the case's database (resolved at generation)."
    )

    @field_validator("path")
    @classmethod
    def _path_syntax(cls, path: str) -> str:
        path = path.strip().removeprefix(".")
        if not _PATH.match(path):
            raise CheckValueError(
                f"answer path {path!r} is not a path: write fields and indexes, e.g. flights[0].date or flights[*].date"
            )
        return path

    @field_validator("expected", mode="before")
    @classmethod
    def _canonical_expected(cls, values: Any, info: ValidationInfo) -> Any:
        from mantra_env.checks.facts import canonical_fact  # facts.py imports this module

        if values is None or "kind" not in info.data:  # no kind: pydantic reports the kind's own error
            return values
        if not isinstance(values, list | tuple) or not values:
            raise CheckValueError(f"expected must be a non-empty list of the facts at the path, not {values!r}")
        out = []
        for k, value in enumerate(values):
            if not isinstance(value, str | int | float) or isinstance(value, bool):
                raise CheckValueError(f"expected[{k}]: a fact is a string or a number, not {value!r}")
            out.append(canonical_fact(info.data["kind"], canonical_value(value, f"expected[{k}]")))
        return tuple(out)

    @model_validator(mode="after")
    def _one_fact_without_star(self) -> Answer:
        if self.expected is not None and "[*]" not in self.path and len(self.expected) != 1:
            raise CheckValueError(f"answer path {self.path!r} selects one fact; expected has {len(self.expected)}")
        return self


Check: TypeAlias = Annotated[
    Call | NoCall | Or | After | Before | Follows | Precedes | Answer, Field(discriminator="op")
]
NODE_TYPES: tuple[type[_Node], ...] = (Call, NoCall, Or, After, Before, Follows, Precedes, Answer)

Or.model_rebuild()


@functools.cache
def _cached_names(cls: type) -> tuple[str, ...]:
    return tuple(
        name for klass in cls.__mro__ for name, value in vars(klass).items() if isinstance(value, cached_property)
    )


def atoms(check: Check) -> list[Call | NoCall]:
    """All atoms of ``check`` in left-to-right order (anchors included)."""
    if isinstance(check, Call | NoCall):
        return [check]
    if isinstance(check, Answer):
        return []  # an agent that states the facts passes whichever reads it made
    if isinstance(check, Or):
        return atoms(check.left) + atoms(check.right)
    if isinstance(check, After | Before):
        return [check.target, check.anchor]
    return [check.call, check.anchor]


def tools_mentioned(check: Check) -> set[str]:
    """Names of the tools a check talks about."""
    return {atom.tool for atom in atoms(check)}


def map_atoms(check: Check, change: Callable[[Call | NoCall], Call | NoCall]) -> Check:
    """``check`` with every atom replaced by ``change(atom)`` (same structure; unchanged nodes are reused)."""
    if isinstance(check, Call | NoCall):
        return change(check)
    if isinstance(check, Answer):
        return check
    if isinstance(check, Or):
        left, right = map_atoms(check.left, change), map_atoms(check.right, change)
        return check if (left, right) == (check.left, check.right) else Or(left=left, right=right)
    if isinstance(check, After | Before):
        target, anchor = change(check.target), change(check.anchor)
        assert isinstance(anchor, Call)
        return type(check)(target=target, anchor=anchor)
    call, anchor = change(check.call), change(check.anchor)
    assert isinstance(call, Call) and isinstance(anchor, Call)
    return type(check)(call=call, anchor=anchor)
