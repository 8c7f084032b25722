"""Arguments as users mean them: schema defaults and free-text normalisation in the grader and in Z3, on a
user-style toolkit (defaults from its signature, free text marked ``FREE_TEXT``)."""

from __future__ import annotations

from typing import Annotated

import pytest

from mantra_env.checks import Check, normalise_text, parse_check
from mantra_env.grading import grade
from mantra_env.smt.pinned import evaluate_checks
from mantra_env.toolkit import FREE_TEXT, Toolkit, tool
from mantra_env.trace import ToolCall, Trace
from mantra_env.unrequested import RequestedWrites


class ShopToolkit(Toolkit):
    """A user's own domain: a write whose speed has a default, and a delivery address that is free text."""

    domain = "shop"

    @tool(kind="write")
    def ship_order(
        self,
        order_id: str,
        address: Annotated[str, FREE_TEXT],
        speed: str = "standard",
        gift_note: Annotated[str | None, FREE_TEXT] = None,
    ) -> str:
        """Ship an order.

        Args:
            order_id: The order id, e.g. "OR-17".
            address: The delivery address, one line.
            speed: "standard" or "express".
            gift_note: A note printed on the packing slip, if any.
        """
        return "shipped"


TOOLS = ShopToolkit.tool_specs()
ADDRESS = "Acme Corp, 12 Main St., Apt 4, Springfield, USA"


def passes(check: str, **arguments: object) -> bool:
    """Whether one call of ship_order passes ``check``, graded with the schemas; Z3 must agree."""
    checks: list[Check] = [parse_check(check)]
    trace = Trace.of(("ship_order", {"order_id": "OR-17", "address": ADDRESS, **arguments}))
    verdict = grade(trace, checks, tools=TOOLS).passed
    assert evaluate_checks(checks, trace.calls, tools=TOOLS) == [verdict]
    return verdict


def test_the_toolkit_marks_free_text_and_keeps_defaults_and_providers_see_neither_mark() -> None:
    (spec,) = TOOLS
    assert spec.free_text("address") and spec.free_text("gift_note")
    assert not spec.free_text("order_id") and not spec.free_text("speed")
    assert spec.defaults() == {"speed": "standard", "gift_note": None}
    sent = spec.openai_schema()["function"]["parameters"]["properties"]
    assert all("x-free-text" not in schema for schema in sent.values())


def test_an_omitted_argument_matches_a_pin_equal_to_its_default() -> None:
    assert passes('CALL ship_order(order_id="OR-17", speed="standard")')  # the call omits speed
    assert passes("CALL ship_order(gift_note=null)")
    # Without the schemas (the checks alone) an omitted argument matches no pin, as before.
    trace = Trace.of(("ship_order", {"order_id": "OR-17", "address": ADDRESS}))
    assert not grade(trace, [parse_check('CALL ship_order(speed="standard")')]).passed


def test_an_omitted_argument_does_not_match_a_pin_other_than_its_default() -> None:
    assert not passes('CALL ship_order(order_id="OR-17", speed="express")')
    assert passes('NO-CALL ship_order(speed="express")')
    assert not passes('CALL ship_order(speed="standard")', speed="express")  # passed explicitly: its own value


def test_a_free_text_address_written_another_way_matches() -> None:
    check = f"CALL ship_order(address={ADDRESS!r})".replace("'", '"')
    assert passes(check, address="acme corp 12 main st apt 4 springfield usa")
    assert passes(check, address="  ACME CORP,12 Main St. Apt 4 ,Springfield, USA ")
    assert passes(check, address="Ａｃｍｅ Corp — 12 Main St; Apt 4; Springfield; USA")  # fullwidth, a dash
    assert passes('CALL ship_order(gift_note="Happy birthday, Ann!")', gift_note="happy birthday ann")


def test_an_address_missing_a_component_does_not_match() -> None:
    check = f"CALL ship_order(address={ADDRESS!r})".replace("'", '"')
    assert not passes(check, address="Acme Corp, 12 Main St., Apt 4, Springfield")  # no country
    assert not passes(check, address="12 Main St., Apt 4, Springfield, USA")  # no company line
    assert not passes(check, address="Acme Corp, 12 Main St., Apt 45, Springfield, USA")  # another flat


def test_an_identifier_in_another_case_does_not_match() -> None:
    assert not passes('CALL ship_order(order_id="OR-17")', order_id="or-17")
    assert not passes('CALL ship_order(order_id="OR-17")', order_id="OR 17")
    assert not passes('CALL ship_order(speed="standard")', speed="Standard")  # not free text either


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("12 Main St., Apt 4", "12 main st apt 4"),
        ("  Straße\u00a0\u00a0Nr.\t5 ", "strasse nr 5"),
        ("ＡＢＣ－１２", "abc 12"),
        ("4.5", "4 5"),
        ("O'Brien & Sons", "o brien sons"),  # & and ' are punctuation
        ("$5 + tax", "$5 + tax"),  # symbols stay
        ("Café", "café"),  # accents stay
        ("", ""),
    ],
)
def test_normalise_text(text: str, normal: str) -> None:
    assert normalise_text(text) == normal
    assert normalise_text(normal) == normal  # idempotent


def test_the_unrequested_write_rule_matches_as_the_grader_does() -> None:
    """A write the checks ask for, written with the address another way or its default omitted, is requested."""
    checks: list[Check] = [parse_check(f'CALL ship_order(address="{ADDRESS}", speed="standard")')]
    requested = RequestedWrites(checks, [], TOOLS)
    same_in_other_words = ToolCall(step=0, tool="ship_order", args={"order_id": "OR-17", "address": ADDRESS.upper()})
    assert grade(Trace(calls=(same_in_other_words,)), checks, tools=TOOLS).passed
    assert not requested.is_unrequested(same_in_other_words)
    elsewhere = same_in_other_words.model_copy(update={"args": {"order_id": "OR-17", "address": "Acme Corp, USA"}})
    assert requested.is_unrequested(elsewhere)
