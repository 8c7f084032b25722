"""The variable layout of a bounded encoding: which tools get which index, which argument slot each tool
parameter uses, how state variables flatten into leaves, and how strings are interned.

Decisions (each measured against the straightforward encoding, see ``benchmarks/smt.py``):

* **Tool index** ``t_i`` is an Int in ``0..n``; ``n`` is the no-op. Tools are the model's transitions in order,
  then tools that only checks mention (sorted), which get an identity transition (no pre, no post).
* **One shared argument vector per step.** A tool parameter that the world model binds or a check pins gets
  a *slot* of its sort: ``Int``, ``Real``, ``Bool``, or ``Id``. Slots are numbered per sort within a tool, so
  step ``i`` has ``max over tools`` slots of each sort instead of one variable per tool parameter.
* **Interning.** Strings, and argument values the world model never computes with, only need equality, so
  they live in the ``Id`` sort: an Int per distinct canonical JSON value (``"HWM2741"``, ``null``,
  ``[1, 2]``), numbered in sorted order. Equality of canonical JSON text is exactly the grader's argument
  equality. A value outside the table (a free string in a witness) is any other integer.
* **Enums** lower to their 0-based declaration index (an Int slot plus a range constraint).
* **Records** flatten into one leaf per scalar field; **arrays** are membership sets ``(Array E Bool)``.
* **Lists** (list-valued parameters the world model binds) are bounded sequences: a length (an Int slot of
  the ``List`` sort, ``0 <= n <= list_bound``) and ``list_bound`` element slots per column (one column for a
  list of scalars, one per field for a list of records); duplicates are allowed. The list bound is the longest
  list any check, constant, literal or schema default names, at least :data:`MIN_LIST_BOUND`, plus one more
  than any integer a ``length`` is compared with; a query that needs longer lists says so (``unknown``). A
  list parameter only checks pin stays one ``Id`` value: its canonical JSON, with the elements sorted when
  the atoms compare it up to permutation, so that interned equality is the grader's list matching.
* A parameter that is not required by the tool schema (or whose tool has no schema) has a presence flag, so
  that a pinned argument the call omits does not match, as in the grader; one with a schema default takes the
  default when omitted (the grader compares the default too).
* **Free text.** A string parameter the tool schema marks ``"x-free-text": true`` keeps its exact interned
  value (world-model equalities stay exact; a witness replays the pinned text as written), and a pin on it is
  the disjunction of the interned strings equal to the pinned one after
  :func:`~mantra_env.checks.semantics.normalise_text` (:meth:`Layout.text_ids`): the grader's normalised
  matching. Traces pinned to the formula (``pinned.py``) intern their free-text values, so each is in the table.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mantra_env.checks import Check, atoms, tools_mentioned
from mantra_env.checks.ast import canonical_value
from mantra_env.checks.semantics import normalise_text
from mantra_env.errors import CheckValueError
from mantra_env.tools import ToolSpec
from mantra_env.worldmodel.ast import (
    ArrayType,
    CollectionOp,
    Contains,
    DslType,
    EnumType,
    FieldAccess,
    ListLit,
    ListType,
    Lit,
    NextRef,
    OpApp,
    RecordType,
    ScalarType,
    subexpressions,
)
from mantra_env.worldmodel.typecheck import CheckedModel

SORT_CODES = {"Int": "I", "Real": "R", "Bool": "B", "Id": "S", "List": "L"}
DECLARED_SORT = {"Int": "Int", "Real": "Real", "Bool": "Bool", "Id": "Int", "List": "Int"}  # a list slot: its length
MIN_LIST_BOUND = 3
MAX_LIST_BOUND = 32
"""Element slots per list argument at most: the inputs' longest list sets the slots (a constant of 1,440 values
gave every list argument 1,440 slots and an encoding past 20 GB), so a longer one is refused with the reason."""


@dataclass(frozen=True, slots=True)
class Column:
    """One component of a list's elements: ``width`` consecutive slots of one sort (the element itself, or one
    field of a record element)."""

    field: str | None  # None: the element of a list of scalars
    sort: str  # Int, Real, Bool or Id
    index: int
    enum: tuple[str, ...] | None = None

    def var(self, step: int | str, k: int) -> str:
        return f"a_{step}_{SORT_CODES[self.sort]}{self.index + k}"


@dataclass(frozen=True, slots=True)
class Slot:
    """Where one tool parameter lives in the step's argument vector."""

    sort: str  # Int, Real, Bool, Id, or List (then ``var`` is the length and ``columns`` hold the elements)
    index: int
    enum: tuple[str, ...] | None = None  # an enum parameter: Int slot holding the value's index
    optional: bool = True
    has_default: bool = False  # an omitted optional argument takes the schema's default (the tool's behaviour)
    default: Any = None
    bound: bool = False  # the world model reads it (then a call must supply it, or have a default)
    free_text: bool = False  # a string pins compare after normalise_text (an Id slot of an x-free-text parameter)
    ordered: bool = False  # a list the checks pair with others (compared row by row; else up to permutation)
    columns: tuple[Column, ...] = ()
    width: int = 0  # a list slot's element slots per column (the list bound)

    def var(self, step: int | str) -> str:
        return f"a_{step}_{SORT_CODES[self.sort]}{self.index}"

    def flag(self, step: int | str) -> str:
        return f"h_{step}_{SORT_CODES[self.sort]}{self.index}"


@dataclass(frozen=True, slots=True)
class Leaf:
    """One scalar (or array) component of a state variable: ``var`` and the record field path below it."""

    var: str
    path: tuple[str, ...]
    type: DslType


def value_key(value: Any) -> str | None:
    """The interning key of a JSON value (its canonical JSON text), or None if it is not a JSON value."""
    try:
        return json.dumps(canonical_value(value), sort_keys=True, ensure_ascii=False)
    except (CheckValueError, TypeError, ValueError):
        return None


def z3_sort(dsl_type: DslType) -> str:
    if isinstance(dsl_type, ScalarType):
        return {"Int": "Int", "Real": "Real", "Bool": "Bool", "String": "Int"}[dsl_type.type]
    if isinstance(dsl_type, EnumType):
        return "Int"
    if isinstance(dsl_type, ArrayType):
        return f"(Array {z3_sort(dsl_type.element)} Bool)"
    raise TypeError("records are flattened into leaves")  # pragma: no cover


def slot_sort(dsl_type: DslType) -> str:
    if isinstance(dsl_type, ListType):
        return "List"
    if isinstance(dsl_type, ScalarType):
        return {"Int": "Int", "Real": "Real", "Bool": "Bool", "String": "Id"}[dsl_type.type]
    return "Int"  # enums


def flatten(var: str, dsl_type: DslType, path: tuple[str, ...] = ()) -> list[Leaf]:
    if isinstance(dsl_type, RecordType):
        return [leaf for f in dsl_type.fields for leaf in flatten(var, f.field_type, (*path, f.name))]
    return [Leaf(var, path, dsl_type)]


class Layout:
    """Tool indices, argument slots, state leaves and the intern table of one encoding."""

    def __init__(
        self,
        checked: CheckedModel,
        checks: Sequence[Check],
        tools: Mapping[str, ToolSpec] | None,
        extra_tools: Iterable[str] = (),
        extra_values: Iterable[Any] = (),
        list_bound: int | None = None,
    ) -> None:
        model = checked.model
        mentioned = sorted(
            ({tool for check in checks for tool in tools_mentioned(check)} | set(extra_tools))
            - {t.tool for t in model.transitions}
        )
        self.tools: tuple[str, ...] = tuple(t.tool for t in model.transitions) + tuple(mentioned)
        self.index = {tool: k for k, tool in enumerate(self.tools)}
        self.noop = len(self.tools)

        # Argument slots: bound parameters take their DSL type, pinned-only parameters the Id sort.
        wanted: dict[str, dict[str, tuple[str, tuple[str, ...] | None]]] = {tool: {} for tool in self.tools}
        list_types: dict[tuple[str, str], ListType] = {}
        for tool, bound in checked.params.items():
            for bind in bound.values():
                enum = bind.type.values if isinstance(bind.type, EnumType) else None
                wanted[tool][bind.tool_param] = (slot_sort(bind.type), enum)
                if isinstance(bind.type, ListType):
                    list_types[tool, bind.tool_param] = bind.type
        order: dict[tuple[str, str], bool] = {}  # (tool, list parameter) -> the checks compare it in order
        for check in checks:
            for atom in atoms(check):
                for name, value in atom.args.items():
                    wanted[atom.tool].setdefault(name, ("Id", None))
                    if isinstance(value, list):
                        in_order = name in atom.ordered
                        if order.setdefault((atom.tool, name), in_order) != in_order:
                            raise CheckValueError(
                                f"the checks compare {atom.tool}'s list {name} both in order and up to permutation;"
                                " mark it IN ORDER in every atom or in none (the tool schema decides: x-ordered)"
                            )
        self.order = order
        # A paired list is compared row by row with its partners, so it needs its elements: a list slot (of
        # interned values) even where the world model does not bind it.
        for (tool, name), paired in order.items():
            if paired and wanted[tool][name] == ("Id", None):
                wanted[tool][name] = ("List", None)
                list_types[tool, name] = ListType(element=ScalarType(type="String"))
        self.list_bound = list_bound if list_bound is not None else _list_bound(checked, checks, tools)
        if self.list_bound > MAX_LIST_BOUND:
            raise CheckValueError(
                f"a list argument would need {self.list_bound} element slots (the longest list the world model, "
                f"the checks or the tools name), more than the {MAX_LIST_BOUND} the encoding allows: state the fact "
                "a rule needs instead of listing every value (a Bool or Int variable the scenario sets), or split "
                "the list"
            )
        bound_params = {tool: {b.tool_param for b in binds.values()} for tool, binds in checked.params.items()}
        self.slots: dict[str, dict[str, Slot]] = {}
        self.slot_counts: dict[str, int] = dict.fromkeys(SORT_CODES, 0)
        for tool, params in wanted.items():
            spec = tools.get(tool) if tools is not None else None
            required = set(spec.required) if spec is not None else set()
            used: dict[str, int] = dict.fromkeys(SORT_CODES, 0)
            self.slots[tool] = {}
            for name in sorted(params):
                sort, enum = params[name]
                schema = (spec.param_schema(name) if spec is not None else None) or {}
                columns: tuple[Column, ...] = ()
                if sort == "List":
                    columns = self._columns(list_types[tool, name].element, used)
                self.slots[tool][name] = Slot(
                    sort,
                    used[sort],
                    enum,
                    optional=name not in required,
                    has_default="default" in schema and name not in required,
                    default=schema.get("default"),
                    bound=name in bound_params.get(tool, set()),
                    free_text=sort == "Id" and enum is None and spec is not None and spec.free_text(name),
                    ordered=order.get((tool, name), False),
                    columns=columns,
                    width=self.list_bound if sort == "List" else 0,
                )
                used[sort] += 1
            for sort, count in used.items():
                self.slot_counts[sort] = max(self.slot_counts[sort], count)

        self.leaves: list[Leaf] = [leaf for var in model.vars for leaf in flatten(var.name, var.var_type)]
        self.leaf_index = {(leaf.var, leaf.path): n for n, leaf in enumerate(self.leaves)}
        # A variable no postcondition writes never changes: one SMT variable serves every boundary, and if the
        # initial state pins it, its value is inlined (scenario facts such as "in stock" are like that).
        # The frame axiom works per leaf: a postcondition writing (field (next r) f) frees only r.f.
        self.writers: dict[int, list[str]] = {n: [] for n in range(len(self.leaves))}
        for transition in model.transitions:
            paths = {path for post in transition.post for path in written_paths(post)}
            for n, leaf in enumerate(self.leaves):
                if any(var == leaf.var and leaf.path[: len(prefix)] == prefix for var, prefix in paths):
                    self.writers[n].append(transition.tool)
        self.static = {n for n in range(len(self.leaves)) if not self.writers[n]}
        self.dynamic = [n for n in range(len(self.leaves)) if n not in self.static]
        self.fixed: dict[int, str] = {}  # static leaf -> its pinned value's term

        keys: set[str] = set()
        for slots in self.slots.values():
            for slot in slots.values():
                if slot.has_default and slot.sort == "Id" and slot.enum is None:
                    keys.update(_keys(slot.default))
                elif slot.has_default and slot.sort == "List":
                    keys.update(_string_keys(slot.default))
        for check in checks:
            for atom in atoms(check):
                for name, value in atom.args.items():
                    slot = self.slots[atom.tool][name]
                    if slot.sort == "Id":
                        keys.update(_keys(id_value(value, slot)))
                    elif slot.sort == "List" and isinstance(value, list):
                        keys.update(_string_keys(value))
                        if not slot.bound:  # elements of any JSON type, interned
                            keys.update(key for item in value for key in _keys(item))
                    elif slot.sort == "List" and not slot.bound:  # a non-list pinned where others pair lists
                        keys.update(_keys(value))
        for expr in _all_exprs(checked):
            if isinstance(expr, Lit) and isinstance(expr.value, str):
                keys.update(_keys(expr.value))
        for const in model.consts:
            keys.update(_string_keys(const.value))
        for value in extra_values:
            keys.update(_string_keys(value))
        self.interned: dict[str, int] = {key: n for n, key in enumerate(sorted(keys))}
        self.by_id = {n: key for key, n in self.interned.items()}
        # Interned strings that are enum values of the model (a status, not a record): no identifier names one.
        statuses = {key for value in enum_values(checked) if (key := value_key(value)) is not None}
        self.status_ids: tuple[int, ...] = tuple(n for key, n in self.interned.items() if key in statuses)
        self._texts: dict[str, list[int]] = {}  # normalised text -> the interned strings that normalise to it
        for key, n in self.interned.items():
            if key.startswith('"'):
                self._texts.setdefault(normalise_text(json.loads(key)), []).append(n)

    def _columns(self, element: DslType, used: dict[str, int]) -> tuple[Column, ...]:
        """Allocate ``list_bound`` element slots per column of a list's element type."""
        parts = element.fields if isinstance(element, RecordType) else (None,)
        columns = []
        for part in parts:
            part_type = part.field_type if part is not None else element
            sort = slot_sort(part_type)
            enum = part_type.values if isinstance(part_type, EnumType) else None
            columns.append(Column(part.name if part is not None else None, sort, used[sort], enum))
            used[sort] += self.list_bound
        return tuple(columns)

    def state(self, boundary: int | str, leaf: int) -> str:
        """The term of state leaf ``leaf`` at ``boundary`` (a number or a ``{i}``/``{j}`` placeholder)."""
        if leaf in self.static:
            return self.fixed.get(leaf, f"s_0_{leaf}")
        return f"s_{boundary}_{leaf}"

    def id_of(self, value: Any) -> int:
        """The interned integer of a JSON value (a string, or any argument value a check pins)."""
        key = value_key(value)
        assert key is not None, "checks, literals and schema defaults are JSON values"
        return self.interned[key]

    def text_ids(self, text: str) -> tuple[int, ...]:
        """The interned strings equal to ``text`` after normalisation (what a free-text pin of it matches)."""
        return tuple(self._texts.get(normalise_text(text), ()))

    def leaves_of(self, var: str, prefix: tuple[str, ...] = ()) -> list[int]:
        """Leaf indices of ``var`` (under the record path ``prefix``), in declaration order."""
        return [n for n, leaf in enumerate(self.leaves) if leaf.var == var and leaf.path[: len(prefix)] == prefix]


def id_value(value: Any, slot: Slot) -> Any:
    """What an ``Id`` slot holds for an argument value: the value, or for a list compared up to permutation
    its elements in canonical order (so that equal ids mean the grader's permutation matching)."""
    if isinstance(value, list) and not slot.ordered:
        keyed = [(value_key(item), item) for item in value]
        if all(key is not None for key, _ in keyed):
            return [item for _, item in sorted(keyed, key=lambda pair: str(pair[0]))]
    return value


def enum_values(checked: CheckedModel) -> set[str]:
    """Every value of every enum type the model declares (state variables, constants, bound parameters, record
    fields and collection elements)."""
    model = checked.model
    stack: list[DslType] = [var.var_type for var in model.vars] + [const.const_type for const in model.consts]
    stack += [bind.type for binds in checked.params.values() for bind in binds.values()]
    found: set[str] = set()
    while stack:
        dsl_type = stack.pop()
        if isinstance(dsl_type, EnumType):
            found.update(dsl_type.values)
        elif isinstance(dsl_type, RecordType):
            stack.extend(f.field_type for f in dsl_type.fields)
        elif isinstance(dsl_type, ArrayType | ListType):
            stack.append(dsl_type.element)
    return found


def _list_bound(checked: CheckedModel, checks: Sequence[Check], tools: Mapping[str, ToolSpec] | None) -> int:
    """Long enough for every list the inputs name, and for every length a ``length`` comparison names."""
    longest = MIN_LIST_BOUND
    for check in checks:
        for atom in atoms(check):
            longest = max([longest, *(len(v) for v in atom.args.values() if isinstance(v, list))])
    for const in checked.model.consts:
        if isinstance(const.value, list):
            longest = max(longest, len(const.value))
    for spec in (tools or {}).values():
        for schema in spec.properties.values():
            if isinstance(schema, dict) and isinstance(schema.get("default"), list):
                longest = max(longest, len(schema["default"]))
    for expr in _all_exprs(checked):
        if isinstance(expr, ListLit):
            longest = max(longest, len(expr.items))
        elif isinstance(expr, OpApp) and any(isinstance(a, CollectionOp) and a.symbol == "length" for a in expr.args):
            numbers = [a.value for a in expr.args if isinstance(a, Lit) and type(a.value) is int]
            longest = max([longest, *(n + 1 for n in numbers if n < 10_000)])
    return longest


def written_paths(expr: Any) -> set[tuple[str, tuple[str, ...]]]:
    """The (variable, record path) pairs a postcondition writes: ``(next v)`` writes all of ``v``,
    ``(field (next v) f)`` only ``v.f``."""
    found: set[tuple[str, tuple[str, ...]]] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, FieldAccess):
            chain: list[str] = []
            inner: Any = node
            while isinstance(inner, FieldAccess):
                chain.append(inner.name)
                inner = inner.record
            if isinstance(inner, NextRef):
                found.add((inner.name, tuple(reversed(chain))))
            else:
                stack.append(inner)
        elif isinstance(node, NextRef):
            found.add((node.name, ()))
        elif isinstance(node, OpApp):
            stack.extend(node.args)
        elif isinstance(node, Contains):
            stack.extend((node.array, node.element))
        elif isinstance(node, ListLit):
            stack.extend(node.items)
        elif isinstance(node, CollectionOp):
            stack.extend(node.args)
    return found


def _keys(value: Any) -> set[str]:
    key = value_key(value)
    return {key} if key is not None else set()


def _string_keys(value: Any) -> set[str]:
    if isinstance(value, str):
        return _keys(value)
    if isinstance(value, list):
        return {key for item in value for key in _string_keys(item)}
    if isinstance(value, dict):
        return {key for item in value.values() for key in _string_keys(item)}
    return set()


def _all_exprs(checked: CheckedModel) -> list[Any]:
    model = checked.model
    roots = [*model.goal, *(e for t in model.transitions for e in (*t.pre, *t.post))]
    return [node for root in roots for node in subexpressions(root)]
