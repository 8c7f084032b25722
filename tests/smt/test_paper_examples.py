"""The paper's examples: App. "Example DSL for World Model" compiles at h=4 and h=16, and App.
"Cross-Validation and Repair" is reproduced on the operations domain's real tools."""

from __future__ import annotations

import pytest

from mantra_env.case import CaseCheck
from mantra_env.checks import parse_check
from mantra_env.domains import load_domain
from mantra_env.smt import CaseSolver
from mantra_env.worldmodel import check_model, format_model, parse_model
from tests.worldmodel.paper import PAPER_MODEL, PAPER_TOOLS

OPERATIONS_TOOLS = load_domain("operations").tool_specs()

# The in-stock hardware case of Fig. 1: picker assignment needs the inventory to have been checked.
CV_MODEL = """\
(model
  (var inventory_checked Bool)
  (var in_stock          Bool)
  (var picker_assigned   Bool)

  (transition check_inventory
    (params (item_name name))
    (pre)
    (post (= (next inventory_checked) true)))

  (transition assign_warehouse_picker
    (params (item_id item) (quantity qty))
    (pre  (= inventory_checked true)
          (= in_stock true))
    (post (= (next picker_assigned) true))))
"""
# The same, made scenario-specific enough for the backward audit: only checking the requested item counts,
# and the scenario's goal is a picker assigned to one unit of that item.
GOAL_MODEL = CV_MODEL.replace(
    "(post (= (next inventory_checked) true)))",
    '(post (= (next inventory_checked) (or inventory_checked (= (param name) "Dell UltraSharp U2723QE")))))',
).replace(
    "(post (= (next picker_assigned) true))))",
    '(post (= (next picker_assigned) (or picker_assigned (and (= (param item) "HWM2741") (= (param qty) 1))))))'
    "\n\n  (goal (= picker_assigned true)))",
)
INITIAL = {"inventory_checked": False, "in_stock": True, "picker_assigned": False, "requester": "Maya Torres"}
EARLY_CHECKS = [
    CaseCheck(id="inventory", check='CALL check_inventory(item_name="Dell UltraSharp U2723QE")'),
    CaseCheck(id="picker", check='CALL assign_warehouse_picker(item_id="HWM2741", quantity=1)'),
]
ORDERING = CaseCheck(id="order", check="CALL check_inventory() PRECEDES CALL assign_warehouse_picker()")


def test_paper_model_parses_checks_and_prints_back_identically() -> None:
    model = parse_model(PAPER_MODEL)
    assert format_model(model) == PAPER_MODEL
    checked = check_model(model, PAPER_TOOLS)
    assert [t.tool for t in model.transitions] == [
        "check_inventory",
        "check_legacy_portal",
        "assign_warehouse_picker",
        "create_purchase_order",
    ]
    assert checked.params["create_purchase_order"]["itm"].tool_param == "item"


@pytest.mark.parametrize("bound", [4, 16])
def test_paper_model_compiles_with_the_appendix_layout(bound: int) -> None:
    solver = CaseSolver(
        PAPER_MODEL, [parse_check("CALL assign_warehouse_picker()")], bound, tools=PAPER_TOOLS, mode="paper"
    )
    text = solver.smtlib()
    # Tool indices 0..3 and the no-op 4; boundary states 0..h over the four variables.
    assert f"(assert (and (<= 0 t_{bound - 1}) (<= t_{bound - 1} 4)))" in text
    assert f"(declare-const s_{bound}_3 Bool)" in text and f"(declare-const s_{bound + 1}_0 Bool)" not in text
    # assign_warehouse_picker (index 2) at step 0: pre in_stock, post picker_assigned; the frame axiom is one
    # clause per leaf and step: picker_assigned (leaf 2) keeps its value unless the step assigns a picker.
    assert "(=> (= t_0 2) (= s_0_0 true))" in text
    assert "(=> (= t_0 2) (= s_1_2 true))" in text
    assert "(assert (or (= t_0 2) (= s_1_2 s_0_2)))" in text
    assert "(assert (or (= t_0 0) (= s_1_0 s_0_0)))" in text  # in_stock: only check_inventory writes it
    assert "(assert (=> (= t_0 4) (= t_1 4)))" in text  # contiguous prefix
    # The same inputs give the same formula.
    again = CaseSolver(
        PAPER_MODEL, [parse_check("CALL assign_warehouse_picker()")], bound, tools=PAPER_TOOLS, mode="paper"
    )
    assert again.smtlib() == text
    witness = solver.compliant_witness()
    assert witness.status == "found" and witness.witness is not None
    assert [c.tool for c in witness.witness.calls] == ["assign_warehouse_picker"]
    assert witness.witness.initial_state["in_stock"] is True


def test_refusal_mode_conditions_effects_on_acceptance() -> None:
    """Under refusal semantics a step is accepted iff its tool's precondition holds; only an accepted step
    writes (postconditions and frame), and the forward query's focus is the checks on accepted calls."""
    solver = CaseSolver(PAPER_MODEL, [parse_check("CALL assign_warehouse_picker()")], 4, tools=PAPER_TOOLS)
    assert solver.mode == "refusal"
    text = solver.smtlib()
    assert "(=> (= t_0 4) (not A_0)) (=> (= t_0 0) (= A_0 true))" in text
    assert "(=> (= t_0 2) (= A_0 (= s_0_0 true)))" in text
    assert "(=> (and A_0 (= t_0 2)) (= s_1_2 true))" in text
    assert "(assert (or (= t_0 2) (= s_1_2 s_0_2)))" in text  # the frame axiom, and the stutter:
    assert "(assert (or A_0 (= s_1_2 s_0_2)))" in text
    assert "(assert (= ma_0_0 (and m_0_0 A_0)))" in text
    assert "(assert (= FOCUS (and ca_0 G)))" in text
    assert "P_2" not in text  # no precondition selectors: nothing restricts which calls a trace makes


def test_cross_validation_example_conflict_then_repair() -> None:
    early = CaseSolver(CV_MODEL, EARLY_CHECKS, 16, INITIAL, OPERATIONS_TOOLS)
    result = early.forward(shortest=True)
    assert result.status == "conflict" and result.witness is not None
    calls = result.witness.calls
    assert [c.tool for c in calls] == ["assign_warehouse_picker", "check_inventory"]
    assert calls[0].args == {"item_id": "HWM2741", "quantity": 1}
    assert calls[1].args == {"item_name": "Dell UltraSharp U2723QE"}
    assert result.witness.initial_state["inventory_checked"] is False
    # The only assign was refused, so the check that asks for it holds only through a refused call.
    assert result.witness.violations == [
        "step 0: assign_warehouse_picker precondition (= inventory_checked true) is false (the call is refused)",
        'check picker holds only through refused calls: CALL assign_warehouse_picker(item_id="HWM2741", quantity=1)',
    ]
    paper = CaseSolver(CV_MODEL, EARLY_CHECKS, 16, INITIAL, OPERATIONS_TOOLS, mode="paper").forward(shortest=True)
    assert paper.witness is not None and paper.witness.violations == [
        "step 0: assign_warehouse_picker precondition (= inventory_checked true) is false"
    ]

    repaired = CaseSolver(CV_MODEL, [*EARLY_CHECKS, ORDERING], 16, INITIAL, OPERATIONS_TOOLS)
    assert repaired.forward().status == "consistent"
    assert repaired.forward().status == "consistent"  # push/pop leaves the base formula as it was
    solvable = repaired.compliant_witness()
    assert solvable.status == "found" and solvable.witness is not None
    assert [c.tool for c in solvable.witness.calls] == ["check_inventory", "assign_warehouse_picker"]


def test_an_ordering_check_pinned_to_arguments_leaves_other_calls_free() -> None:
    # PRECEDES with pinned arguments only orders the matching calls: a picker assignment for another item
    # before any inventory check still satisfies the checks and breaks the precondition. The paper's query
    # calls that a conflict; under refusal semantics the early assignment is refused and harmless.
    pinned = CaseCheck(
        id="order",
        check='CALL check_inventory(item_name="Dell UltraSharp U2723QE") PRECEDES '
        'CALL assign_warehouse_picker(item_id="HWM2741", quantity=1)',
    )
    checks = [*EARLY_CHECKS, pinned]
    result = CaseSolver(CV_MODEL, checks, 16, INITIAL, OPERATIONS_TOOLS, mode="paper").forward(shortest=True)
    assert result.status == "conflict" and result.witness is not None
    first = result.witness.calls[0]
    assert first.tool == "assign_warehouse_picker" and first.args != {"item_id": "HWM2741", "quantity": 1}
    assert CaseSolver(CV_MODEL, checks, 16, INITIAL, OPERATIONS_TOOLS).forward().status == "consistent"


def test_backward_audit_flags_an_over_restrictive_check() -> None:
    needless = CaseCheck(id="legacy", check='CALL check_legacy_portal(item_id="HWM2741")')
    # Only checking the requested item enables the picker, so the ordering must name it.
    order = CaseCheck(
        id="order",
        check='CALL check_inventory(item_name="Dell UltraSharp U2723QE") PRECEDES CALL assign_warehouse_picker()',
    )
    solver = CaseSolver(GOAL_MODEL, [*EARLY_CHECKS, order, needless], 16, INITIAL, OPERATIONS_TOOLS)
    assert solver.forward().status == "consistent"
    results = {r.check_id: r for r in solver.backward_all(shortest=True)}
    assert results["legacy"].status == "conflict"
    assert results["legacy"].witness is not None
    assert "check_legacy_portal" not in [c.tool for c in results["legacy"].witness.calls]
    # The goal and the preconditions make every other check necessary.
    assert {cid: r.status for cid, r in results.items() if cid != "legacy"} == {
        "inventory": "consistent",
        "picker": "consistent",
        "order": "consistent",
    }


def test_forward_query_finds_checks_too_weak_for_the_goal() -> None:
    result = CaseSolver(GOAL_MODEL, EARLY_CHECKS[:1], 16, INITIAL, OPERATIONS_TOOLS).forward(shortest=True)
    assert result.status == "conflict" and result.witness is not None
    assert result.witness.violations == ["goal (= picker_assigned true) is not reached"]


def test_the_compliant_witness_is_canonical_reads_first() -> None:
    """Shortest, then reads as early as the model allows, then tool-index order: the checks order nothing here,
    so the read comes first and repeated solvers agree."""
    checks = [
        parse_check('CALL create_purchase_order(item="HWC9305")'),
        parse_check('CALL check_legacy_portal(item="HWC9305")'),
    ]
    initial = {"in_stock": False, "legacy_checked": False, "picker_assigned": False, "po_created": False}
    witnesses = [
        CaseSolver(PAPER_MODEL, checks, 8, initial, PAPER_TOOLS, mode=mode).compliant_witness().witness
        for mode in ("paper", "refusal", "refusal")
    ]
    assert all(w is not None and w == witnesses[0] for w in witnesses)
    assert witnesses[0] is not None
    assert [c.tool for c in witnesses[0].calls] == ["check_legacy_portal", "create_purchase_order"]
