"""Spec tests from the paper's running example (Fig. 1, Case 1 and Case 2)."""

import pytest

from mantra_env.checks import parse_check
from mantra_env.graders import FailureCategory, grade
from mantra_env.trace import ToolCall, ToolError, Trace

CASE1 = [
    parse_check('CALL check_inventory(item_name="Dell UltraSharp U2723QE")'),
    parse_check('CALL assign_warehouse_picker(item_id="HWM2741", quantity=1)'),
    parse_check(
        'CALL check_inventory(item_name="Dell UltraSharp U2723QE") '
        'PRECEDES CALL assign_warehouse_picker(item_id="HWM2741", quantity=1)'
    ),
    parse_check("NO-CALL create_purchase_order()"),
]
CASE2 = [
    parse_check('CALL check_inventory(item_name="Cisco Catalyst 9300")'),
    parse_check('CALL check_legacy_portal(item_id="HWC9305")'),
    parse_check('check_inventory(item_name="Cisco Catalyst 9300") PRECEDES check_legacy_portal(item_id="HWC9305")'),
    parse_check('CALL create_purchase_order(item_id="HWC9305", quantity=1)'),
    parse_check(
        'CALL create_purchase_order(item_id="HWC9305", quantity=1) FOLLOWS CALL check_legacy_portal(item_id="HWC9305")'
    ),
    parse_check('CALL set_delivery_options(item_id="HWC9305")'),
]
INVENTORY = ("check_inventory", {"item_name": "Dell UltraSharp U2723QE"})
PICKER = ("assign_warehouse_picker", {"item_id": "HWM2741", "quantity": 1})


def outcomes(trace: Trace, checks: list) -> list[tuple[bool, FailureCategory | None]]:  # type: ignore[type-arg]
    return [(v.passed, v.category) for v in grade(trace, checks).checks]


def test_case1_compliant_trace_passes() -> None:
    verdict = grade(Trace.of(INVENTORY, PICKER), CASE1)
    assert verdict.passed
    assert verdict.checks[2].evidence.matched == {"call": (0,), "anchor": (1,)}


def test_case1_compliant_with_extra_reads_and_extra_args_passes() -> None:
    trace = Trace.of(
        ("get_request", {"request_id": "HW-2841"}),
        ("check_inventory", {"item_name": "Dell UltraSharp U2723QE", "warehouse": "SEA-1"}),
        ("assign_warehouse_picker", {"item_id": "HWM2741", "quantity": 1.0, "note": "Maya Torres"}),
    )
    assert grade(trace, CASE1).passed


def test_case1_skipping_check_inventory_fails_with_missing_call() -> None:
    verdict = grade(Trace.of(PICKER), CASE1)
    assert not verdict.passed
    assert outcomes(Trace.of(PICKER), CASE1) == [
        (False, FailureCategory.MISSING_REQUIRED_CALL),
        (True, None),
        (False, FailureCategory.MISSING_REQUIRED_CALL),
        (True, None),
    ]
    assert verdict.checks[0].evidence.violating_step is None
    assert verdict.checks[2].evidence.matched == {"call": (), "anchor": (0,)}


def test_case1_purchase_order_for_in_stock_item_is_forbidden() -> None:
    trace = Trace.of(INVENTORY, ("create_purchase_order", {"item_id": "HWM2741", "quantity": 1}), PICKER)
    verdict = grade(trace, CASE1)
    assert not verdict.passed
    failed = verdict.failures()
    assert [f.check_id for f in failed] == ["c3"]
    assert failed[0].category is FailureCategory.FORBIDDEN_CALL
    assert failed[0].evidence.violating_step == 1
    assert failed[0].evidence.matched == {"call": (1,)}


def test_case1_picker_before_inventory_is_an_ordering_violation() -> None:
    verdict = grade(Trace.of(PICKER, INVENTORY), CASE1)
    failed = verdict.failures()
    assert [(f.check_id, f.category) for f in failed] == [("c2", FailureCategory.ORDERING_VIOLATION)]
    assert failed[0].evidence.violating_step == 0
    assert failed[0].evidence.matched == {"call": (1,), "anchor": (0,)}


def test_case1_picker_before_and_after_inventory_still_violates_precedes() -> None:
    # Every occurrence of the anchor must be preceded: the first picker call is premature.
    verdict = grade(Trace.of(PICKER, INVENTORY, PICKER), CASE1)
    assert verdict.checks[2].category is FailureCategory.ORDERING_VIOLATION
    assert verdict.checks[2].evidence.violating_step == 0


def test_case2_compliant_trace_passes() -> None:
    trace = Trace.of(
        ("check_inventory", {"item_name": "Cisco Catalyst 9300"}),
        ("check_legacy_portal", {"item_id": "HWC9305"}),
        ("create_purchase_order", {"item_id": "HWC9305", "quantity": 1, "priority": "standard"}),
        ("set_delivery_options", {"item_id": "HWC9305", "address": "4100 Blake Street, Denver, CO 80216"}),
    )
    assert grade(trace, CASE2).passed


def test_case2_purchase_order_before_legacy_portal_is_an_ordering_violation() -> None:
    trace = Trace.of(
        ("check_inventory", {"item_name": "Cisco Catalyst 9300"}),
        ("create_purchase_order", {"item_id": "HWC9305", "quantity": 1}),
        ("check_legacy_portal", {"item_id": "HWC9305"}),
        ("set_delivery_options", {"item_id": "HWC9305"}),
    )
    failed = grade(trace, CASE2).failures()
    assert [(f.check_id, f.category, f.evidence.violating_step) for f in failed] == [
        ("c4", FailureCategory.ORDERING_VIOLATION, 1)
    ]


def test_case2_without_legacy_portal_misses_call_and_anchor() -> None:
    trace = Trace.of(
        ("check_inventory", {"item_name": "Cisco Catalyst 9300"}),
        ("create_purchase_order", {"item_id": "HWC9305", "quantity": 1}),
        ("set_delivery_options", {"item_id": "HWC9305"}),
    )
    assert [(f.check_id, f.category) for f in grade(trace, CASE2).failures()] == [
        ("c1", FailureCategory.MISSING_REQUIRED_CALL),
        ("c2", FailureCategory.MISSING_ANCHOR),
        ("c4", FailureCategory.MISSING_ANCHOR),
    ]


def test_wrong_item_does_not_match_pinned_arguments() -> None:
    trace = Trace.of(("check_inventory", {"item_name": "Dell UltraSharp U2723Q"}), PICKER)
    assert grade(trace, CASE1).checks[0].category is FailureCategory.MISSING_REQUIRED_CALL


@pytest.mark.parametrize(
    ("value", "matches"),
    [(1, True), (1.0, True), ("1", False), (True, False), (None, False), ([1], False), (2, False)],
)
def test_argument_canonicalisation(value: object, matches: bool) -> None:
    trace = Trace.of(INVENTORY, ("assign_warehouse_picker", {"item_id": "HWM2741", "quantity": value}))
    assert grade(trace, CASE1).checks[1].passed is matches


@pytest.mark.parametrize(
    ("name", "matches"),
    [("  Dell UltraSharp U2723QE ", True), ("dell ultrasharp u2723qe", False), ("Dell  UltraSharp U2723QE", False)],
)
def test_strings_are_trimmed_and_otherwise_exact(name: str, matches: bool) -> None:
    trace = Trace.of(("check_inventory", {"item_name": name}), PICKER)
    assert grade(trace, CASE1).checks[0].passed is matches


def test_failed_calls_still_count_as_calls() -> None:
    """A call whose arguments failed validation, or that returned a tool error, is still a call."""
    trace = Trace(
        calls=(
            ToolCall(step=0, tool="check_inventory", args={"item_name": "Dell UltraSharp U2723QE", "bogus": []},
                     error=ToolError(code="invalid_arguments", message="unexpected argument 'bogus'")),
            ToolCall(step=1, tool="create_purchase_order", args={"item_id": 7},
                     error=ToolError(code="invalid_arguments", message="item_id must be a string")),
            ToolCall(step=2, tool="assign_warehouse_picker", args={"item_id": "HWM2741", "quantity": 1}),
        )
    )  # fmt: skip
    verdict = grade(trace, CASE1)
    assert [v.passed for v in verdict.checks] == [True, True, True, False]
    assert verdict.checks[3].evidence.violating_step == 1
