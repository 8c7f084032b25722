"""Mutants of a case's compliant witness: plausible wrong traces and correct variants (the mutation audit).

The checks and the world model of a generated case are written from the same sample and cross-validated against
each other, so what both leave out (a read nobody pinned, an order nobody stated) passes unnoticed. A mutation
audit asks the opposite question: derived from the stored oracle plan, which plausible traces does the verdict
pass or fail, and should it? This module only *derives* the traces (pure, no env, no solver); replaying and
classifying them is :mod:`mantra_env.generators.mutation`.

Wrong-trace candidates (each one change of the plan):

* ``drop_read``: one read of the plan left out.
* ``write_first``: one write of the plan moved before the plan's first read.
* ``swap_argument``: one *stated* argument of a call (its value in the plan is a scenario value or a literal of a
  check) swapped for another stated value of its type: stated under a name of the parameter's family (an order
  id for an order id, a date for a date), of the same JSON type, fitting the parameter's schema.
* ``insert_write``: one call of a write tool of the domain the plan does not call, appended once (after the plan
  is done), its arguments taken from the case's argument bindings and the scenario's values by parameter name (a
  tool whose required parameters the scenario does not fill is left out: no agent would send that call; a second
  call of a tool the plan writes is the plan's own write again, which the env mostly refuses).

Correct-variant candidates:

* ``permute_reads``: two adjacent reads swapped where the second reads only stated values (it does not need the
  first one's result).
* ``extra_read``: one read of a stated record the plan does not make (as :func:`stated_reads` binds it), before
  the plan's first write.
* ``other_branch``: for a check ``A OR B`` over two ``CALL`` atoms whose one side the plan matches and whose other
  it does not, the plan's matching call replaced by a call of the other side (its pinned arguments, then the
  plan call's arguments the tool takes, the bindings and the scenario's values).

A candidate is not a verdict: :mod:`mantra_env.generators.mutation` replays each and classifies it (env, unrequested
writes, world model), since a dropped read may be one the manual never required, and a permutation one it forbids.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from mantra_env.case import Case, PlannedCall
from mantra_env.checks import Call, Check, args_match
from mantra_env.checks.ast import Or
from mantra_env.tools import ToolSpec, argument_rules, fits_schema

MutantKind = Literal[
    "drop_read", "write_first", "swap_argument", "insert_write", "permute_reads", "extra_read", "other_branch"
]
WRONG_KINDS: tuple[MutantKind, ...] = ("drop_read", "write_first", "swap_argument", "insert_write")
"""The kinds derived as plausible wrong traces."""
VARIANT_KINDS: tuple[MutantKind, ...] = ("permute_reads", "extra_read", "other_branch")
"""The kinds derived as plausible correct variants."""
MAX_SWAPS_PER_ARGUMENT = 2
"""Other stated values tried per argument (in a fixed order): enough to show a pin is missing, not a blow-up on
airline cases that state a dozen ids."""


class Mutant(BaseModel):
    """One trace derived from a case's oracle plan: its kind, what changed, the calls, and the step of a call it
    adds (``insert_write``, ``extra_read``, ``other_branch``: the env refusing that call means the mutant does
    not count)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: MutantKind
    detail: str
    calls: tuple[PlannedCall, ...]
    added: int | None = Field(default=None, description="The step of the call the mutant adds, if any.")
    swapped: tuple[str, str] | None = Field(
        default=None, description="The tool and parameter whose value a swap_argument mutant changes."
    )


def derive_mutants(case: Case, tools: Sequence[ToolSpec]) -> list[Mutant]:
    """Every wrong-trace and variant candidate of ``case`` (see the module), wrong kinds first, in plan order.

    A case without a stored oracle plan has no witness to mutate: the list is empty.
    """
    plan = tuple(case.oracle_plan or ())
    if not plan:
        return []
    specs = {spec.name: spec for spec in tools}
    kinds = {spec.name: spec.kind for spec in tools}
    stated = _stated_values(case)
    found: list[Mutant] = []
    found += _drop_reads(plan, kinds)
    found += _writes_first(plan, kinds)
    found += _swaps(plan, specs, stated)
    found += _inserted_writes(case, plan, tools)
    found += _permuted_reads(plan, kinds, stated)
    found += _extra_read(case, plan, tools, kinds)
    found += _other_branches(case, plan, specs)
    return found


def _show(call: PlannedCall) -> str:
    return f"{call.tool}({', '.join(f'{k}={json.dumps(v)}' for k, v in call.arguments.items())})"


def _key(value: JsonValue) -> str:
    return json.dumps(value, sort_keys=True)


def _family(name: str) -> str:
    """What a value's name says it is: ``order_id`` and ``exchange_order_id`` name orders, ``depart_date`` and
    ``return_date`` dates (the last word; the last two where the last is as generic as ``id`` or ``name``: a
    first name is no last name)."""
    words = name.lower().split("_")
    return "_".join(words[-2:]) if words[-1] in _GENERIC_WORDS and len(words) > 1 else words[-1]


_GENERIC_WORDS = frozenset({"id", "name", "number", "code"})


def _stated_values(case: Case) -> list[tuple[str, JsonValue]]:
    """The scalar values the case states, each with the family of the name it is stated under (see
    :func:`_family`): its scenario's values, then the literals its checks pin (in order, each pair once; an empty
    string states nothing)."""
    named: list[tuple[str, JsonValue]] = [*case.scenario.external.items(), *case.scenario.internal.items()]
    for entry in case.checks:
        for atom in entry.check.atoms:
            named.extend(atom.args.items())
    seen: set[tuple[str, str]] = set()
    found: list[tuple[str, JsonValue]] = []
    for name, value in named:
        key = (_family(name), _key(value))
        if isinstance(value, list | dict) or value is None or value == "" or key in seen:
            continue
        seen.add(key)
        found.append((key[0], value))
    return found


def _drop_reads(plan: tuple[PlannedCall, ...], kinds: Mapping[str, str]) -> Iterable[Mutant]:
    for i, call in enumerate(plan):
        if kinds.get(call.tool) == "read":
            yield Mutant(kind="drop_read", detail=f"step {i} {_show(call)} left out", calls=plan[:i] + plan[i + 1 :])


def _writes_first(plan: tuple[PlannedCall, ...], kinds: Mapping[str, str]) -> Iterable[Mutant]:
    first_read = next((i for i, call in enumerate(plan) if kinds.get(call.tool) == "read"), None)
    if first_read is None:
        return
    for i, call in enumerate(plan):
        if kinds.get(call.tool) == "write" and i > first_read:
            rest = plan[:i] + plan[i + 1 :]
            moved = (*rest[:first_read], call, *rest[first_read:])
            yield Mutant(kind="write_first", detail=f"step {i} {_show(call)} moved before the reads", calls=moved)


def _swaps(
    plan: tuple[PlannedCall, ...], specs: Mapping[str, ToolSpec], stated: Sequence[tuple[str, JsonValue]]
) -> Iterable[Mutant]:
    stated_keys = {_key(value) for _, value in stated}
    for i, call in enumerate(plan):
        spec = specs.get(call.tool)
        if spec is None:
            continue
        defs = spec.parameters.get("$defs")
        for name, value in call.arguments.items():
            schema = spec.param_schema(name)
            if schema is None or _key(value) not in stated_keys:
                continue
            family = _family(name)
            others = [
                other
                for kind, other in stated
                if kind == family
                and type(other) is type(value)
                and _key(other) != _key(value)
                and fits_schema(other, schema, defs if isinstance(defs, dict) else {})
            ]
            for other in others[:MAX_SWAPS_PER_ARGUMENT]:
                swapped = call.model_copy(update={"arguments": {**call.arguments, name: other}})
                yield Mutant(
                    kind="swap_argument",
                    detail=f"step {i} {call.tool}: {name}={json.dumps(value)} swapped for {json.dumps(other)}",
                    calls=(*plan[:i], swapped, *plan[i + 1 :]),
                    swapped=(call.tool, name),
                )


def _filled(case: Case, spec: ToolSpec, given: Mapping[str, JsonValue]) -> dict[str, JsonValue] | None:
    """Arguments for a call of ``spec``: ``given``, then the case's bindings, then the scenario's values by
    parameter name, each where it fits the schema; None if a required parameter stays unfilled."""
    defs = spec.parameters.get("$defs")
    valuation = case.scenario.valuation
    arguments: dict[str, JsonValue] = {}
    for source in (given, case.argument_bindings.get(spec.name, {}), valuation):
        for name, value in source.items():
            schema = spec.param_schema(name)
            if name in arguments or schema is None:
                continue
            if fits_schema(value, schema, defs if isinstance(defs, dict) else {}):
                arguments[name] = value
    if not all(name in arguments for name in spec.required):
        return None
    return arguments


def _inserted_writes(case: Case, plan: tuple[PlannedCall, ...], tools: Sequence[ToolSpec]) -> Iterable[Mutant]:
    planned = {call.tool for call in plan}
    for spec in tools:
        if spec.kind != "write" or spec.name in planned:
            continue
        arguments = _filled(case, spec, {})
        if arguments is None:
            continue
        call = PlannedCall(tool=spec.name, arguments=arguments)
        yield Mutant(
            kind="insert_write", detail=f"{_show(call)} added at the end", calls=(*plan, call), added=len(plan)
        )


def _permuted_reads(
    plan: tuple[PlannedCall, ...], kinds: Mapping[str, str], stated: Sequence[tuple[str, JsonValue]]
) -> Iterable[Mutant]:
    stated_keys = {_key(value) for _, value in stated}
    for i in range(len(plan) - 1):
        first, second = plan[i], plan[i + 1]
        if kinds.get(first.tool) != "read" or kinds.get(second.tool) != "read" or first == second:
            continue
        if all(_key(value) in stated_keys for value in second.arguments.values()):
            yield Mutant(
                kind="permute_reads",
                detail=f"steps {i} and {i + 1} swapped: {_show(second)} before {_show(first)}",
                calls=(*plan[:i], second, first, *plan[i + 2 :]),
            )


def _extra_read(
    case: Case, plan: tuple[PlannedCall, ...], tools: Sequence[ToolSpec], kinds: Mapping[str, str]
) -> Iterable[Mutant]:
    external = case.scenario.external
    made = {(call.tool, _key(call.arguments)) for call in plan}
    at = next((i for i, call in enumerate(plan) if kinds.get(call.tool) == "write"), len(plan))
    for spec in tools:
        if spec.kind != "read":
            continue
        defs = spec.parameters.get("$defs")
        arguments: dict[str, JsonValue] = {
            name: external[name]
            for name, schema in spec.properties.items()
            if name in external
            and isinstance(schema, dict)
            and fits_schema(external[name], schema, defs if isinstance(defs, dict) else {})
        }
        if not arguments or not all(name in arguments for name in spec.required):
            continue
        call = PlannedCall(tool=spec.name, arguments=arguments)
        if (call.tool, _key(call.arguments)) in made:
            continue
        yield Mutant(
            kind="extra_read",
            detail=f"{_show(call)} added at step {at}",
            calls=(*plan[:at], call, *plan[at:]),
            added=at,
        )
        return  # one extra read is the variant; more say nothing new


def _ors(check: Check) -> Iterable[Or]:
    if isinstance(check, Or):
        yield check
        yield from _ors(check.left)
        yield from _ors(check.right)


def _other_branches(case: Case, plan: tuple[PlannedCall, ...], specs: Mapping[str, ToolSpec]) -> Iterable[Mutant]:
    rules = argument_rules(specs.values())
    seen: set[str] = set()

    def matches(atom: Call, call: PlannedCall) -> bool:
        return atom.tool == call.tool and args_match(atom.args, call.arguments, atom.ordered, rules.of(call.tool))

    for entry in case.checks:
        for node in _ors(entry.check):
            for taken, other in ((node.left, node.right), (node.right, node.left)):
                if not isinstance(taken, Call) or not isinstance(other, Call) or other.tool not in specs:
                    continue
                steps = [i for i, call in enumerate(plan) if matches(taken, call)]
                if not steps or any(matches(other, call) for call in plan):
                    continue
                i = steps[0]
                arguments = _filled(case, specs[other.tool], {**plan[i].arguments, **other.args})
                if arguments is None:
                    continue
                call = PlannedCall(tool=other.tool, arguments=arguments)
                calls = (*plan[:i], call, *plan[i + 1 :])
                if _key([c.model_dump() for c in calls]) in seen:
                    continue
                seen.add(_key([c.model_dump() for c in calls]))
                yield Mutant(
                    kind="other_branch",
                    detail=f"check {entry.id}: step {i} {_show(plan[i])} replaced by {_show(call)}",
                    calls=calls,
                    added=i,
                )
