"""Property tests: round-trips of the three forms, and semantic laws of the check language."""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from mantra_env.checks import (
    After,
    Answer,
    Before,
    Call,
    Check,
    Follows,
    NoCall,
    Or,
    Precedes,
    check_from_json,
    check_to_json,
    evaluate,
    format_check,
    parse_check,
    values_equal,
)
from mantra_env.checks.semantics import call_matches
from mantra_env.graders import grade
from mantra_env.tools import FREE_TEXT_KEY, ToolSpec, argument_rules
from mantra_env.trace import Trace

from .strategies import ARG_NAMES, atoms, call_atoms, checks, json_values, traces

settings.register_profile("mantra", max_examples=300, deadline=None)
settings.load_profile("mantra")


def holds(check: Check, trace: Trace) -> bool:
    return evaluate(check, trace.index()).passed


# -- an independent evaluator written straight from the docstring's quantifiers (O(n^2)) ----------------
def _matches(atom: Call | NoCall, tool: str, args: dict[str, Any]) -> bool:
    if tool != atom.tool:
        return False
    alone = all(
        name in args and _equal(value, args[name]) for name, value in atom.args.items() if name not in atom.ordered
    )
    return alone and _paired([atom.args[n] for n in atom.ordered], [args.get(n) for n in atom.ordered])


def _equal(pinned: Any, actual: Any) -> bool:
    """The docstring's argument equality, written independently: a top-level list matches iff some
    permutation of the actual list equals it element-wise."""
    if not isinstance(pinned, list):
        return values_equal(pinned, actual)
    if not isinstance(actual, list) or len(actual) != len(pinned):
        return False
    return any(values_equal(pinned, list(order)) for order in itertools.permutations(actual))


def _paired(pinned: list[Any], actual: list[Any]) -> bool:
    """Paired lists, independently: one permutation of positions maps every actual list onto its pinned list
    (pinned lists of different lengths: position by position)."""
    if any(not isinstance(a, list) or len(a) != len(p) for p, a in zip(pinned, actual, strict=True)):
        return False
    lengths = {len(p) for p in pinned}
    if len(lengths) > 1:
        return all(values_equal(p, a) for p, a in zip(pinned, actual, strict=True))
    n = lengths.pop() if lengths else 0
    return any(
        all(values_equal(p, [a[k] for k in order]) for p, a in zip(pinned, actual, strict=True))
        for order in itertools.permutations(range(n))
    )


def brute(check: Check, trace: Trace) -> bool:
    steps = [(c.tool, c.args) for c in trace.calls]
    m = lambda atom: [i for i, (t, a) in enumerate(steps) if _matches(atom, t, a)]  # noqa: E731
    if isinstance(check, Call):
        return bool(m(check))
    if isinstance(check, NoCall):
        return not m(check)
    if isinstance(check, Or):
        return brute(check.left, trace) or brute(check.right, trace)
    if isinstance(check, After | Before):
        target, anchor = m(check.target), m(check.anchor)
        side = (lambda i, j: i < j) if isinstance(check, After) else (lambda i, j: i > j)
        if isinstance(check.target, Call):
            return all(any(side(i, j) for i in anchor) for j in target)
        return not any(any(side(i, j) for i in anchor) for j in target)
    if isinstance(check, Follows):
        call, anchor = m(check.call), m(check.anchor)
        return bool(call) and bool(anchor) and all(any(i < j for i in anchor) for j in call)
    assert isinstance(check, Precedes)
    call, anchor = m(check.call), m(check.anchor)
    return bool(call) and bool(anchor) and all(any(j < i for j in call) for i in anchor)


@given(checks(), traces())
def test_evaluator_agrees_with_brute_force_definition(check: Check, trace: Trace) -> None:
    assert holds(check, trace) == brute(check, trace)


# -- round-trips --------------------------------------------------------------------------------------
@given(checks())
def test_ast_text_ast_round_trip(check: Check) -> None:
    text = format_check(check)
    assert parse_check(text) == check
    assert format_check(parse_check(text)) == text


@given(checks())
def test_ast_json_ast_round_trip(check: Check) -> None:
    data = check_to_json(check)
    assert check_from_json(json.loads(json.dumps(data))) == check
    assert check_from_json(format_check(check)) == check


@given(json_values)
def test_canonical_values_equal_themselves(value: Any) -> None:
    pinned = Call(tool="t", args={"x": value}).args["x"]
    assert values_equal(pinned, pinned)


# -- semantic laws ------------------------------------------------------------------------------------
@given(atoms(), traces())
def test_no_call_is_negation_of_call(atom: Call | NoCall, trace: Trace) -> None:
    call, no_call = Call(tool=atom.tool, args=atom.args), NoCall(tool=atom.tool, args=atom.args)
    assert holds(no_call, trace) is not holds(call, trace)


@given(checks(), checks(), checks(), traces())
def test_or_is_commutative_associative_idempotent(a: Check, b: Check, c: Check, trace: Trace) -> None:
    assert holds(Or(left=a, right=b), trace) == holds(Or(left=b, right=a), trace)
    assert holds(Or(left=Or(left=a, right=b), right=c), trace) == holds(Or(left=a, right=Or(left=b, right=c)), trace)
    assert holds(Or(left=a, right=a), trace) == holds(a, trace)


@given(call_atoms(), call_atoms(), traces())
def test_positive_obligations_imply_both_calls(a: Call, n: Call, trace: Trace) -> None:
    for check in (Follows(call=a, anchor=n), Precedes(call=a, anchor=n)):
        if holds(check, trace):
            assert holds(a, trace) and holds(n, trace)


@given(call_atoms(), call_atoms(), traces())
def test_precedes_is_follows_flipped_and_follows_is_call_and_after(a: Call, n: Call, trace: Trace) -> None:
    assert holds(Precedes(call=a, anchor=n), trace) == holds(Follows(call=n, anchor=a), trace)
    assert holds(Follows(call=a, anchor=n), trace) == (holds(a, trace) and holds(After(target=a, anchor=n), trace))


@given(atoms(), call_atoms(), traces())
def test_conditionals_are_vacuous_when_target_absent(target: Call | NoCall, anchor: Call, trace: Trace) -> None:
    if not holds(Call(tool=target.tool, args=target.args), trace):
        assert holds(After(target=target, anchor=anchor), trace)
        assert holds(Before(target=target, anchor=anchor), trace)
    if not holds(anchor, trace) and isinstance(target, NoCall):
        assert holds(After(target=target, anchor=anchor), trace)
        assert holds(Before(target=target, anchor=anchor), trace)


@given(atoms(), traces(), st.integers(0, 6))
def test_passing_no_call_stays_passing_on_prefixes(atom: Call | NoCall, trace: Trace, cut: int) -> None:
    no_call = NoCall(tool=atom.tool, args=atom.args)
    prefix = Trace(calls=trace.calls[:cut])
    if holds(no_call, trace):
        assert holds(no_call, prefix)
    if holds(Call(tool=atom.tool, args=atom.args), prefix):
        assert holds(Call(tool=atom.tool, args=atom.args), trace)


@given(st.lists(checks(), min_size=1, max_size=5), traces())
def test_grade_is_deterministic_and_all_checks_decide(check_list: list[Check], trace: Trace) -> None:
    first, second = grade(trace, check_list), grade(trace, check_list)
    assert first == second and first.to_json() == second.to_json()
    assert first.passed == all(v.passed for v in first.checks)
    for verdict in first.checks:
        assert (verdict.category is None) == verdict.passed


@given(st.lists(atoms(), min_size=1, max_size=6), traces(8))
def test_compiled_one_pass_matching_agrees_with_lazy_matching(atom_list: list[Call | NoCall], trace: Trace) -> None:
    compiled, lazy = trace.index(atom_list), trace.index()
    for atom in atom_list:
        assert compiled.matches(atom) == lazy.matches(atom)


# Schema rules over the strategies' alphabet: `item` is free text on two tools, `qty` and `flag` (paired when
# both are pinned lists) have defaults, so omitted arguments and normalised strings meet every code path.
_RULE_TOOLS = [
    ToolSpec(
        name=name,
        kind="write",
        parameters={
            "type": "object",
            "properties": {
                "item": {"type": "string", FREE_TEXT_KEY: True},
                "qty": {"default": qty_default},
                "flag": {"default": flag_default},
            },
            "required": [],
        },
    )
    for name, qty_default, flag_default in (("check_inventory", 1, ["a"]), ("assign_picker", ["b", "a"], None))
]
RULES = argument_rules(_RULE_TOOLS)
_texts = st.sampled_from(["12 Main St., Apt 4", "12 main st apt 4", "12 Main St", "A.", "a", "Ａ", "4.5", "45"])
_rule_args = st.dictionaries(
    st.sampled_from(ARG_NAMES),
    st.one_of(_texts, st.sampled_from([1, None, ["a"], ["b", "a"], ["x", "y"]]), json_values),
    max_size=2,
)
_rule_tools = st.sampled_from([spec.name for spec in _RULE_TOOLS] + ["create_po"])
_rule_atoms = st.tuples(_rule_tools, _rule_args, st.booleans()).map(
    lambda p: (Call if p[2] else NoCall)(tool=p[0], args=p[1], ordered=_rule_ordered(p[1]))
)


def _rule_ordered(args: dict[str, Any]) -> tuple[str, ...]:
    return tuple(name for name in ("flag", "qty") if isinstance(args.get(name), list))


@settings(max_examples=500)
@given(st.lists(_rule_atoms, min_size=1, max_size=6), st.lists(st.tuples(_rule_tools, _rule_args), max_size=6))
@example([Call(tool="check_inventory", args={"item": "A."})], [("check_inventory", {"item": "a"})])
@example([Call(tool="check_inventory", args={"qty": 1})], [("check_inventory", {})])
@example(
    [Call(tool="assign_picker", args={"qty": ["a", "b"], "flag": ["x", "y"]}, ordered=("flag", "qty"))],
    [("assign_picker", {"flag": ["y", "x"]})],
)
def test_compiled_matching_agrees_with_args_match_under_schema_rules(
    atom_list: list[Call | NoCall], calls: list[tuple[str, dict[str, Any]]]
) -> None:
    trace = Trace.of(*calls)
    compiled, lazy = trace.index(atom_list, RULES), trace.index(rules=RULES)
    for atom in atom_list:
        expected = tuple(step for step, call in enumerate(trace.calls) if call_matches(atom, call, RULES))
        assert compiled.matches(atom) == lazy.matches(atom) == expected


def test_every_node_class_has_an_evaluator_and_a_printer() -> None:
    from mantra_env.checks import NODE_TYPES
    from mantra_env.checks.semantics import _EVALUATORS

    assert set(_EVALUATORS) == set(NODE_TYPES)
    samples = {
        Call: Call(tool="a"),
        NoCall: NoCall(tool="a"),
        Or: Or(left=Call(tool="a"), right=Call(tool="b")),
        After: After(target=NoCall(tool="a"), anchor=Call(tool="b")),
        Before: Before(target=Call(tool="a"), anchor=Call(tool="b")),
        Follows: Follows(call=Call(tool="a"), anchor=Call(tool="b")),
        Precedes: Precedes(call=Call(tool="a"), anchor=Call(tool="b")),
        Answer: Answer(read=Call(tool="a"), path="x[*].y", kind="time", expected=("08:15", "20:05")),
    }
    assert set(samples) == set(NODE_TYPES)
    for node in samples.values():
        assert parse_check(format_check(node)) == node
