"""What the generation stages show and do for list parameters: typed, paired parameters in the tool block, the
list syntax in both language descriptions, and generated checks stamped with the schema's pairing."""

from __future__ import annotations

from mantra_env.generators import prompts
from mantra_env.generators.artifacts import CheckDraft, CheckSet
from mantra_env.generators.checkgen import parse_check_set
from mantra_env.worldmodel import parse_expr
from tests.list_tools import ORDERED_IDS, list_tool

TOOLS = [
    list_tool(
        "exchange_items",
        optional=("payments",),
        item_ids=ORDERED_IDS,
        new_item_ids=ORDERED_IDS,
        payments={
            "type": "array",
            "items": {"type": "object", "properties": {"id": {"type": "string"}, "amount": {"type": "number"}}},
        },
    )
]


def test_the_tool_block_shows_element_types_and_order() -> None:
    block = prompts.tool_block(TOOLS)
    assert "item_ids: array[string] paired by position, new_item_ids: array[string] paired by position" in block
    assert "payments: array[{id: string, amount: number}]?" in block


def test_both_language_descriptions_explain_lists() -> None:
    assert "(List TYPE)" in prompts.DSL_LANGUAGE and "(union A L)" in prompts.DSL_LANGUAGE
    assert "in any order" in prompts.CHECK_LANGUAGE and '"paired by position"' in prompts.CHECK_LANGUAGE
    # every list example in the DSL description parses
    for example in ('(list "a" "b")', "(sum (field (param pays) amount))", "(union returned (param items))"):
        parse_expr(example)


def test_generated_checks_take_the_order_from_the_schema() -> None:
    answer = CheckSet(
        checks=[CheckDraft(id="pairs", check='CALL exchange_items(item_ids=["a", "b"], new_item_ids=["x", "y"])')]
    )
    (entry,) = parse_check_set(answer, TOOLS)
    assert entry.text == 'CALL exchange_items(item_ids=["a", "b"] PAIRED, new_item_ids=["x", "y"] PAIRED)'


def test_the_checks_prompt_states_the_rules_first_drafts_missed() -> None:
    # In the retail run most first-round conflicts were checks that let an order be read before the customer was
    # identified, or let a partial return use up the order's one return: the prompt now says both.
    system = prompts.checks("(excerpt)", TOOLS, "(scenario)")[0]["content"]
    assert "before the first call that depends on it, reads included" in system
    assert "NO-CALL x() BEFORE CALL x(...the confirmed call...)" in system
