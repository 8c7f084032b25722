"""Free text as users write it, on shipped cases through the env: an address written another way passes, one that
lacks a component (a country, a company line) or names another record (an id in another case) fails."""

from __future__ import annotations

from typing import Any

import pytest

from tests.env.test_unrequested_writes import plan, verdict

RETAIL = ("retail", "generated-s001-1")  # the customer's new default address: 880 Birch Avenue, Apt 3B, St. Paul
LAB = ("operations/generated", "generated-s001-3")  # delivery to "Denver Integration Lab, 4100 Blake Street, ..."


def with_arguments(suite: str, case_id: str, tool: str, **changes: Any) -> list[dict[str, Any]]:
    """The case's oracle plan with ``changes`` made to the arguments of its ``tool`` call."""
    actions = plan(suite, case_id)
    (write,) = [action for action in actions if action["tool"] == tool]
    write["arguments"] = {**write["arguments"], **changes}
    return actions


def test_the_plans_pass_as_stored() -> None:
    assert verdict(*RETAIL, plan(*RETAIL)).passed and verdict(*LAB, plan(*LAB)).passed


@pytest.mark.parametrize(
    ("case", "tool", "changes"),
    [
        (RETAIL, "modify_user_address", {"address1": "880 birch avenue", "address2": "APT 3B", "city": "St Paul"}),
        (RETAIL, "modify_user_address", {"address1": " 880  Birch Avenue. ", "city": "ST. PAUL", "country": "usa"}),
        (LAB, "set_delivery_options", {"address": "denver integration lab 4100 blake street denver co 80216"}),
        (LAB, "set_delivery_options", {"address": "Denver Integration Lab; 4100 Blake Street; Denver, CO 80216."}),
    ],
)
def test_a_normalised_address_passes(case: tuple[str, str], tool: str, changes: dict[str, Any]) -> None:
    result = verdict(*case, with_arguments(*case, tool, **changes))
    assert result.passed, [check.evidence.explanation for check in result.checks if not check.passed]


@pytest.mark.parametrize(
    ("case", "tool", "changes"),
    [
        (RETAIL, "modify_user_address", {"country": ""}),  # the country left out
        (RETAIL, "modify_user_address", {"address2": ""}),  # the flat left out
        (LAB, "set_delivery_options", {"address": "4100 Blake Street, Denver, CO 80216"}),  # no company line
        (LAB, "set_delivery_options", {"address": "Denver Integration Lab, 4100 Blake Street, Denver, CO"}),  # no zip
        (LAB, "set_delivery_options", {"item_id": "hws4410"}),  # an identifier in another case: another record
    ],
)
def test_a_missing_component_or_another_identifier_fails(
    case: tuple[str, str], tool: str, changes: dict[str, Any]
) -> None:
    assert not verdict(*case, with_arguments(*case, tool, **changes)).checks_passed
