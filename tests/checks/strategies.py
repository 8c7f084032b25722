"""Hypothesis strategies for checks and traces over a small tool alphabet (shared by the check and SMT tests)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from mantra_env.checks import After, Answer, Before, Call, Check, Follows, NoCall, Or, Precedes
from mantra_env.trace import Trace

TOOLS = ("check_inventory", "assign_picker", "create_po", "get_request")
ARG_NAMES = ("item", "qty", "flag")

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([1.0, 2.5, -0.0, 2150.0]),
    st.sampled_from(["a", "b", " a ", "HWM2741", 'quo"te', "back\\slash", "new\nline", "ünï"]),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=2), st.dictionaries(st.sampled_from(["k", "v"]), inner, max_size=2)
    ),
    max_leaves=4,
)
arg_maps = st.dictionaries(st.sampled_from(ARG_NAMES), json_values, max_size=2)


# Lists pinned for "flag" and "qty" are paired (as if the tool schema marked them x-ordered), every other list
# is compared up to permutation on its own: one convention for every atom, as stamping from a schema gives.
PAIRED_ARGS = ("flag", "qty")


def _ordered(args: dict[str, Any]) -> tuple[str, ...]:
    return tuple(name for name in PAIRED_ARGS if isinstance(args.get(name), list))


def call_atoms(args: st.SearchStrategy[dict[str, Any]] = arg_maps) -> st.SearchStrategy[Call]:
    return st.tuples(st.sampled_from(TOOLS), args).map(lambda p: Call(tool=p[0], args=p[1], ordered=_ordered(p[1])))


def atoms(args: st.SearchStrategy[dict[str, Any]] = arg_maps) -> st.SearchStrategy[Call | NoCall]:
    no_calls = st.tuples(st.sampled_from(TOOLS), args).map(
        lambda p: NoCall(tool=p[0], args=p[1], ordered=_ordered(p[1]))
    )
    return st.one_of(call_atoms(args), no_calls)


def checks(args: st.SearchStrategy[dict[str, Any]] = arg_maps) -> st.SearchStrategy[Check]:
    base = st.one_of(
        atoms(args),
        st.builds(After, target=atoms(args), anchor=call_atoms(args)),
        st.builds(Before, target=atoms(args), anchor=call_atoms(args)),
        st.builds(Follows, call=call_atoms(args), anchor=call_atoms(args)),
        st.builds(Precedes, call=call_atoms(args), anchor=call_atoms(args)),
    )
    return st.recursive(base, lambda inner: st.builds(Or, left=inner, right=inner), max_leaves=4)


def answers() -> st.SearchStrategy[Answer]:
    """ANSWER checks (outside the trace formula: the agreement tests skip them by their operator's mark)."""
    facts = st.lists(st.sampled_from(["08:15", "20:05", "9:30"]), min_size=1, max_size=2)
    return st.builds(Answer, read=call_atoms(), path=st.just("flights[*].time"), kind=st.just("time"), expected=facts)


def traces(max_size: int = 6) -> st.SearchStrategy[Trace]:
    call = st.tuples(st.sampled_from(TOOLS), arg_maps)
    return st.lists(call, max_size=max_size).map(lambda calls: Trace.of(*calls))
