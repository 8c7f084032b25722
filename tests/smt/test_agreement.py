"""The Z3 check encoding agrees with the Python grader (the normative semantics) on random checks and traces."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mantra_env.checks import Check, TraceIndex, evaluate, parse_check
from mantra_env.smt.pinned import evaluate_checks
from mantra_env.trace import Trace
from mantra_env.worldmodel import parse_model
from tests.checks.strategies import checks, traces
from tests.worldmodel.paper import PAPER_TOOLS


def grader_verdicts(check_list: list[Check], trace: Trace) -> list[bool]:
    index = TraceIndex(trace.calls)
    return [evaluate(check, index).passed for check in check_list]


@settings(max_examples=300, deadline=None)
@given(st.lists(checks(), min_size=1, max_size=4), traces(max_size=7))
def test_z3_encoding_agrees_with_the_grader(check_list: list[Check], trace: Trace) -> None:
    assert evaluate_checks(check_list, trace.calls) == grader_verdicts(check_list, trace)


# Parameters the world model binds get typed slots (Int, Real, enum, String) instead of interned ids.
TYPED_MODEL = parse_model("""
(model
  (var n Int)
  (transition assign_warehouse_picker
    (params (item item) (quantity qty))
    (pre (> (param qty) 0))
    (post (= (next n) (+ n (param qty))))))
""")
typed_calls = st.lists(
    st.one_of(
        st.tuples(
            st.just("assign_warehouse_picker"),
            st.fixed_dictionaries(
                {"item": st.sampled_from(["HWM2741", " HWM2741", "HWC9305"]), "quantity": st.integers(-2, 3)}
            ),
        ),
        st.tuples(st.just("check_inventory"), st.fixed_dictionaries({"item": st.sampled_from(["a", "b"])})),
    ),
    max_size=6,
)
typed_checks = st.lists(
    st.sampled_from(
        [
            "CALL assign_warehouse_picker(quantity=1)",
            'CALL assign_warehouse_picker(quantity=1.0, item="HWM2741")',
            "NO-CALL assign_warehouse_picker(quantity=2.5)",
            'CALL assign_warehouse_picker(quantity="1")',
            'CALL check_inventory(item="a") PRECEDES CALL assign_warehouse_picker(item="HWM2741")',
            "CALL assign_warehouse_picker(quantity=0) AFTER CALL check_inventory()",
            'NO-CALL assign_warehouse_picker() BEFORE CALL check_inventory(item="b")',
            'CALL check_inventory(item="b") FOLLOWS CALL assign_warehouse_picker(quantity=3)',
        ]
    ).map(parse_check),
    min_size=1,
    max_size=4,
)


@settings(max_examples=150, deadline=None)
@given(typed_checks, typed_calls)
def test_agreement_with_typed_parameter_slots(
    check_list: list[Check], calls: list[tuple[str, dict[str, object]]]
) -> None:
    trace = Trace.of(*calls)
    verdicts = evaluate_checks(check_list, trace.calls, TYPED_MODEL, PAPER_TOOLS)
    assert verdicts == grader_verdicts(check_list, trace)
