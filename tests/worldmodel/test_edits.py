"""Typed edits: deterministic application, atomic rejection, and human locks."""

from __future__ import annotations

import pytest

from mantra_env.case import CaseCheck
from mantra_env.checks import parse_check
from mantra_env.worldmodel import format_model, parse_model
from mantra_env.worldmodel.edits import (
    EDIT_ADAPTER,
    AddCheck,
    AddCondition,
    AddConstant,
    AddGoal,
    AddTransition,
    AddVariable,
    ChangeConstant,
    ChangeVariable,
    Draft,
    Edit,
    EditRejected,
    RemoveCheck,
    RemoveCondition,
    RemoveGoal,
    RemoveTransition,
    RemoveVariable,
    ReplaceCheck,
    ReplaceCondition,
    ReplaceGoal,
    apply_edit,
    apply_edits,
)
from tests.worldmodel.paper import PAPER_MODEL, PAPER_TOOLS

CHECKS = (
    CaseCheck(id="inv", check="CALL check_inventory()"),
    CaseCheck(id="pick", check="CALL assign_warehouse_picker()", author="human"),
)


@pytest.fixture
def draft() -> Draft:
    return Draft(parse_model(PAPER_MODEL), CHECKS)


def test_each_edit_kind_applies_deterministically(draft: Draft) -> None:
    edits: list[Edit] = [
        AddVariable(name="inventory_checked", type="Bool"),
        ReplaceCondition(tool="check_inventory", section="post", index=0, expr="(= (next inventory_checked) true)"),
        AddCondition(tool="assign_warehouse_picker", section="pre", expr="(= inventory_checked true)"),
        RemoveCondition(tool="create_purchase_order", section="pre", index=1),
        AddConstant(name="threshold", type="Int", value="2000"),
        ChangeConstant(name="threshold", type="Real", value="2000.5"),
        ChangeVariable(name="po_created", type='(Enum "NONE" "CREATED")'),
        ReplaceCondition(tool="create_purchase_order", section="post", index=0, expr='(= (next po_created) "CREATED")'),
    ]
    edited = apply_edits(draft, edits, PAPER_TOOLS)
    again = apply_edits(draft, edits, PAPER_TOOLS)
    assert edited == again
    text = format_model(edited.model)
    assert "(var inventory_checked Bool)" in text.replace("  ", " ")
    assert "(pre  (= in_stock true)\n          (= inventory_checked true))" in text
    assert "(pre  (= in_stock false))" in text
    assert "(const threshold Real 2000.5)" in text
    assert '(post (= (next po_created) "CREATED"))' in text
    assert edited.locks == frozenset()  # automated edits lock nothing


def test_transition_edits(draft: Draft) -> None:
    removed = apply_edit(draft, RemoveTransition(tool="check_legacy_portal"), PAPER_TOOLS)
    assert removed.model.transition("check_legacy_portal") is None
    added = apply_edit(
        removed,
        AddTransition(
            transition="(transition check_legacy_portal (params (item itm)) (pre) "
            "(post (= (next legacy_checked) true)))"
        ),
        PAPER_TOOLS,
    )
    assert added.model.transition("check_legacy_portal") == draft.model.transition("check_legacy_portal")
    with pytest.raises(EditRejected, match="already has a transition"):
        apply_edit(added, AddTransition(transition="(transition check_inventory)"), PAPER_TOOLS)


@pytest.mark.parametrize(
    ("edit", "code", "fragment"),
    [
        (AddCondition(tool="nope", section="pre", expr="true"), "not_applicable", "no transition for nope"),
        (RemoveCondition(tool="check_inventory", section="pre", index=0), "not_applicable", "out of range"),
        (
            AddCondition(tool="check_inventory", section="pre", expr="(= in_stok true)"),
            "invalid",
            "did you mean in_stock",
        ),
        (AddCondition(tool="check_inventory", section="pre", expr="in_stock)"), "invalid", "unbalanced_paren"),
        (AddCondition(tool="check_inventory", section="pre", expr="(next in_stock)"), "invalid", "next_outside_post"),
        (RemoveVariable(name="in_stock"), "invalid", "in_stock is not a declared"),
        (AddVariable(name="in_stock", type="Bool"), "not_applicable", "already exists"),
        (AddVariable(name="x", type="Integer"), "invalid", "bad_type"),
        (AddConstant(name="limit", type="Int", value='"ten"'), "invalid", "not a Int"),
        (AddCheck(check="CALL check_inventory("), "bad_check", "check text"),
        (AddCheck(check="CALL check_inventory()", id="inv"), "not_applicable", "taken"),
        (RemoveCheck(id="zzz"), "not_applicable", "no check zzz"),
        (AddTransition(transition="(transition teleport (params) (pre) (post))"), "invalid", "no tool named teleport"),
        (AddCheck(check="CALL check_inventori()"), "bad_check", "not a tool; did you mean 'check_inventory'"),
        (
            ReplaceCheck(id="inv", check='CALL check_inventory(itm="x")'),
            "bad_check",
            "itm, which check_inventory does not take",
        ),
    ],
)
def test_bad_edits_are_rejected_atomically(draft: Draft, edit: Edit, code: str, fragment: str) -> None:
    before = format_model(draft.model)
    with pytest.raises(EditRejected) as raised:
        apply_edit(draft, edit, PAPER_TOOLS)
    assert raised.value.code == code
    assert fragment in str(raised.value)
    assert format_model(draft.model) == before  # the draft is untouched


def test_a_failing_edit_in_a_batch_leaves_the_draft_untouched(draft: Draft) -> None:
    with pytest.raises(EditRejected, match="edit 2 of 2"):
        apply_edits(draft, [AddVariable(name="flag", type="Bool"), RemoveVariable(name="flag_x")], PAPER_TOOLS)
    with pytest.raises(EditRejected, match="does not type-check"):
        apply_edits(draft, [AddVariable(name="flag", type="Bool"), RemoveVariable(name="in_stock")], PAPER_TOOLS)
    assert draft.model.var("flag") is None


def test_one_edit_alone_must_type_check() -> None:
    draft = Draft(parse_model(PAPER_MODEL), CHECKS)
    with pytest.raises(EditRejected, match="cannot compare"):
        apply_edit(draft, ChangeVariable(name="po_created", type='(Enum "NONE" "CREATED")'), PAPER_TOOLS)


def test_human_edits_lock_their_part_against_automated_edits(draft: Draft) -> None:
    human = apply_edit(
        draft,
        AddCondition(tool="assign_warehouse_picker", section="pre", expr="(= po_created false)", author="human"),
        PAPER_TOOLS,
    )
    assert human.locks == {"pre:assign_warehouse_picker"}
    with pytest.raises(EditRejected) as raised:
        apply_edit(human, RemoveCondition(tool="assign_warehouse_picker", section="pre", index=1))
    assert raised.value.code == "locked"
    # Other parts stay open to automated edits; a human may edit the locked part again.
    apply_edit(human, RemoveCondition(tool="create_purchase_order", section="pre", index=1), PAPER_TOOLS)
    apply_edit(human, RemoveCondition(tool="assign_warehouse_picker", section="pre", index=1, author="human"))


def test_human_authored_checks_are_locked(draft: Draft) -> None:
    with pytest.raises(EditRejected, match="locked"):
        apply_edit(draft, ReplaceCheck(id="pick", check="CALL create_purchase_order()"))
    with pytest.raises(EditRejected, match="locked"):
        apply_edit(draft, RemoveCheck(id="pick"))
    replaced = apply_edit(
        draft, ReplaceCheck(id="inv", check="CALL check_inventory() PRECEDES CALL assign_warehouse_picker()")
    )
    assert replaced.checks[0].check == parse_check("CALL check_inventory() PRECEDES CALL assign_warehouse_picker()")
    added = apply_edit(draft, AddCheck(check="NO-CALL create_purchase_order()", author="human"))
    assert added.checks[-1].id == "c0" and added.locked("check:c0")


def test_edits_have_a_json_form_and_schema() -> None:
    edit = EDIT_ADAPTER.validate_json('{"op": "add_condition", "tool": "t", "section": "pre", "expr": "true"}')
    assert isinstance(edit, AddCondition) and edit.author == "llm"
    schema = EDIT_ADAPTER.json_schema()
    assert schema["discriminator"]["propertyName"] == "op"
    assert len(schema["oneOf"]) == 17


def test_checks_an_edit_writes_are_stamped_with_the_schemas_list_pairing() -> None:
    from tests.list_tools import ORDERED_IDS, list_tool

    tools = [list_tool("exchange_items", item_ids=ORDERED_IDS, new_item_ids=ORDERED_IDS)]
    draft = Draft(parse_model("(model (var done Bool))"), (), frozenset())
    edited = apply_edit(draft, AddCheck(check='CALL exchange_items(item_ids=["a"], new_item_ids=["b"])'), tools)
    assert edited.checks[-1].check.ordered == ("item_ids", "new_item_ids")  # type: ignore[union-attr]
    unstamped = apply_edit(draft, AddCheck(check='CALL exchange_items(item_ids=["a"], new_item_ids=["b"])'))
    assert unstamped.checks[-1].check.ordered == ()  # type: ignore[union-attr]  # no tools, nothing to stamp from


def test_goal_edits_change_the_scenarios_goal_and_a_human_one_locks_it(draft: Draft) -> None:
    scenario = Draft(draft.model, draft.checks, scenario="s-1")
    edited = apply_edits(
        scenario,
        [AddGoal(expr="po_created"), AddGoal(expr="in_stock"), ReplaceGoal(index=1, expr="(not in_stock)")],
        PAPER_TOOLS,
    )
    assert "(goal po_created\n        (not in_stock))" in format_model(edited.model)
    assert apply_edit(edited, RemoveGoal(index=0)).model.goal == edited.model.goal[1:]
    with pytest.raises(EditRejected, match="the goal has 2 conjunct"):
        apply_edit(edited, RemoveGoal(index=2))
    with pytest.raises(EditRejected) as not_bool:
        apply_edit(edited, AddGoal(expr="(+ 1 2)"))
    assert not_bool.value.code == "invalid"
    human = apply_edit(edited, AddGoal(expr="true", author="human"))
    assert "goal:s-1" in human.locks
    with pytest.raises(EditRejected, match="goal:s-1 was edited by a human"):
        apply_edit(human, RemoveGoal(index=0))


@pytest.mark.parametrize(
    ("var_type", "initial", "problem"),
    [
        ("Bool", False, None),
        ("Int", 0, None),
        ("Real", 0, None),
        ("String", "", None),
        ('(Enum "NONE" "SENT")', "NONE", None),
        ("Bool", 0, "not a Bool value"),
        ("Int", True, "not a Int value"),
        ("Int", 1.5, "not a Int value"),
        ('(Enum "NONE" "SENT")', "LATE", "not one of the options NONE, SENT"),
        ("(Array Int)", 0, "for a Bool, Int, Real, String or Enum variable only"),
    ],
)
def test_an_added_variable_gets_its_start_value_when_it_fits(
    draft: Draft, var_type: str, initial: bool | int | float | str, problem: str | None
) -> None:
    edit = AddVariable(name="asked", type=var_type, initial=initial)
    if problem is None:
        assert apply_edits(draft, [edit], PAPER_TOOLS).initial == {"asked": initial}
    else:
        with pytest.raises(EditRejected, match=problem):
            apply_edits(draft, [edit], PAPER_TOOLS)


def test_removing_an_added_variable_drops_its_start_value(draft: Draft) -> None:
    added = AddVariable(name="asked", type="Bool", initial=False)
    assert apply_edits(draft, [added, RemoveVariable(name="asked")], PAPER_TOOLS).initial == {}
    assert apply_edits(draft, [AddVariable(name="asked", type="Bool")], PAPER_TOOLS).initial == {}
    assert "initial" not in AddVariable(name="asked", type="Bool").model_dump(mode="json")
