"""ANSWER checks (issue 33 item 3): facts from a read's result, matched by typed parsing in the final answer."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mantra_env.case import CaseCheck
from mantra_env.checks import (
    Answer,
    Call,
    FailureCategory,
    check_from_json,
    check_to_json,
    evaluate,
    format_check,
    parse_check,
)
from mantra_env.checks.facts import canonical_fact, human_fact, resolve_path, stated
from mantra_env.errors import CheckSyntaxError, CheckValueError
from mantra_env.grading import grade
from mantra_env.rewards import obligations, reward
from mantra_env.trace import Trace

FLIGHTS = (
    'ANSWER CALL get_reservation_details(reservation_id="ZFA04Y").flights[*].date AS date '
    '= ["2024-05-20", "2024-05-22"]'
)


def holds(check: str, answer: str | None) -> bool:
    return evaluate(parse_check(check), Trace.of(final_answer=answer).index()).passed


# --- text and JSON forms -----------------------------------------------------------------------------------------


def test_text_form_round_trips_and_the_json_form_is_the_same_ast() -> None:
    check = parse_check(FLIGHTS)
    assert isinstance(check, Answer)
    assert check.read == Call(tool="get_reservation_details", args={"reservation_id": "ZFA04Y"})
    assert (check.path, check.kind, check.expected) == ("flights[*].date", "date", ("2024-05-20", "2024-05-22"))
    assert format_check(check) == FLIGHTS
    assert check_from_json(check_to_json(check)) == check
    assert check_to_json(check)["op"] == "answer"


def test_canonical_form_bare_tool_single_fact_and_unresolved() -> None:
    one = parse_check('ANSWER get_order(order_id="W1").total AS money = [57]')
    assert one.text == 'ANSWER CALL get_order(order_id="W1").total AS money = "57.00"'
    unresolved = parse_check('ANSWER get_order(order_id="W1") . total AS money')
    assert isinstance(unresolved, Answer) and unresolved.expected is None
    assert unresolved.text == 'ANSWER CALL get_order(order_id="W1").total AS money'


def test_expected_facts_are_canonical_so_equal_checks_have_equal_asts() -> None:
    def facts(kind: str, *values: object) -> tuple[str, ...] | None:
        return Answer(read=Call(tool="r"), path="a[*]", kind=kind, expected=values).expected  # type: ignore[arg-type]

    assert facts("time", "8:15", "2024-05-01T20:05:00", "08:15:00") == ("08:15", "20:05", "08:15")
    assert facts("money", 57, "$57", "USD 1,234.5") == ("57.00", "57.00", "1234.50")
    assert facts("number", 3.0, "2.50") == ("3", "2.5")
    assert facts("date", "2024-05-01T08:15:00") == ("2024-05-01",)
    assert facts("enum", "In_Transit") == ("in transit",)
    assert facts("identifier", " HAT001 ") == ("HAT001",)
    assert parse_check('ANSWER r().a AS time = "8:15"') == parse_check('ANSWER r().a AS time = "08:15:00"')


kinds = st.sampled_from(
    [
        ("time", ["08:15", "20:05", "2024-05-01T06:45:00"]),
        ("date", ["2024-05-20", "2026-12-01"]),
        ("money", [57, 12.5, "$1,234.50"]),
        ("number", [3, 2.25]),
        ("identifier", ["HAT001", "credit_card_4975481"]),
        ("enum", ["in_transit", "Basic Economy"]),
    ]
)


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_any_answer_check_round_trips_through_text_and_json(data: st.DataObject) -> None:
    kind, pool = data.draw(kinds)
    star = data.draw(st.booleans())
    values = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=3 if star else 1))
    args = data.draw(st.dictionaries(st.sampled_from(["id", "day"]), st.sampled_from(["X1", 7, True]), max_size=2))
    check = Answer(
        read=Call(tool="read_it", args=args), path="a[*].b" if star else "a[0].b", kind=kind, expected=values
    )
    assert parse_check(format_check(check)) == check
    assert check_from_json(check_to_json(check)) == check
    assert check_from_json(format_check(check)) == check


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('ANSWER get_order(order_id="W1").total AS words = 5', "fact kind"),
        ('ANSWER get_order(order_id="W1").total = 5', "AS"),
        ('ANSWER get_order(order_id="W1") AS money', "path"),
        ('ANSWER NO-CALL get_order(order_id="W1").total AS money', "CALL atom"),
        ("CALL a() OR ANSWER get_order().total AS money = 5", "stands alone"),
        ("ANSWER get_order().total AS money = [5, 6]", "one fact"),
        ('ANSWER get_order().when AS date = "next week"', "ISO date"),
        ('ANSWER get_order().status AS enum = " _ "', "no letters or digits"),
    ],
)
def test_malformed_answer_checks_get_a_clear_syntax_error(text: str, message: str) -> None:
    with pytest.raises(CheckSyntaxError, match=message):
        parse_check(text)


def test_an_answer_cannot_be_an_or_operand_in_json_either() -> None:
    with pytest.raises(CheckValueError, match="stands alone"):
        check_from_json({"op": "or", "left": {"op": "call", "tool": "a"}, "right": check_to_json(parse_check(FLIGHTS))})


# --- typed matching ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "value", "answer", "expected"),
    [
        ("time", "08:15", "It leaves at 08:15.", True),
        ("time", "08:15", "It leaves at 8:15 am.", True),
        ("time", "08:15", "It leaves at 8.15", True),
        ("time", "08:15", "It leaves at 8:15:00", True),
        ("time", "08:15", "It leaves at 8:15 AM", True),
        ("time", "2024-05-01T20:05:00", "departure 8:05 p.m.", True),
        ("time", "20:00", "at 8 pm", True),
        ("time", "08:15", "It leaves at 8:15 pm.", False),
        ("time", "08:15", "It leaves at 8:16.", False),
        ("time", "08:15", "It costs $8.15 in fees", True),  # a number that reads as a time: lenient by design
        ("time", "12:30", "12:30 pm", True),
        ("time", "00:30", "12:30 am", True),
        ("money", 57, "That is $57.", True),
        ("money", 57, "That is 57 dollars.", True),
        ("money", 57, "That is USD 57.00", True),
        ("money", "$57.00", "57", True),
        ("money", 1234.5, "a total of $1,234.50", True),
        ("money", 57, "That is $75.", False),
        ("money", 57, "That is $57.50.", False),
        ("money", 57, "item 157", False),
        ("number", 3, "You have 3 bags.", True),
        ("number", 3, "You have 3.0 bags.", True),
        ("number", 3, "You have three bags.", False),
        ("date", "2024-05-20", "on 2024-05-20", True),
        ("date", "2024-05-20", "on May 20, 2024", True),
        ("date", "2024-05-20", "on May 20th", True),
        ("date", "2024-05-20", "on 20 May 2024", True),
        ("date", "2024-05-20", "on the 20th of May", True),
        ("date", "2024-05-20", "on 05/20/2024", True),
        ("date", "2024-05-20", "on Monday, Jan 20, 2024", False),
        ("date", "2024-05-20", "on May 20, 2025", False),
        ("date", "2024-05-20T06:45:00", "booked 20 may", True),
        ("identifier", "HAT001", "order HAT001 shipped", True),
        ("identifier", "HAT001", "order hat001 shipped", False),
        ("identifier", "HAT001", "order HAT0012 shipped", False),
        ("identifier", "7948", "your Visa x7948", True),  # digits only: a card number's mask may precede them
        ("identifier", "7948", "Visa card XXXX-XXXX-XXXX-7948", True),
        ("identifier", "7948", "card ****7948 and •••• 7948", True),
        ("identifier", "7673", "Visa (x7673)", True),
        ("identifier", "7948", "order #W7948", False),
        ("identifier", "7948", "ticket ORD-7948", False),
        ("identifier", "7948", "card 17948 or x79481", False),
        ("identifier", "X7948", "card XX7948", False),  # a mask only before digits-only identifiers
        ("enum", "in_transit", "Your order is In Transit.", True),
        ("enum", "in_transit", "Your order is in-transit", True),
        ("enum", "in_transit", "Your order is transiting", False),
        ("enum", "basic_economy", "you fly basic economy", True),
        ("enum", "exchange requested", "An exchange has been requested for it.", True),  # two words between
        ("enum", "exchange requested", "exchange for the item was requested", False),  # three
        ("enum", "exchange requested", "requested an exchange", False),  # out of order
        ("enum", "exchange requested", "An exchange was not requested.", False),  # a negation between
        ("enum", "not_started", "The repair has not started yet.", True),  # a value that is a negation
        ("enum", "no_show", "You were marked a no-show.", True),
        ("enum", "pending (item modified)", "It is pending (items modified).", True),
        ("enum", "cancelled", "The order was canceled yesterday.", True),
        ("enum", "canceled", "The order was cancelled yesterday.", True),
        ("enum", "cancelled", "The order was cancel", False),
        ("enum", "amex", "your American Express card", True),
        ("enum", "American Express", "your Amex card", True),
        ("enum", "mastercard", "a Master Card ending 1234", True),
        ("enum", "pending", "The order is no longer pending.", False),
        ("enum", "pending", "It isn't pending any more.", False),
        ("enum", "delivered", "It hasn't been delivered yet.", False),
        ("enum", "delivered", "It has not yet been delivered.", False),
        ("enum", "delivered", "No, it's delivered.", True),  # the negation is in another clause
        ("enum", "delivered", "I can't cancel it: it was delivered.", True),
        ("enum", "pending", "It is not cancelled, it is pending.", True),
        ("enum", "pending", "Not shipped; pending.", True),
    ],
)
def test_typed_matching(kind: Any, value: Any, answer: str, expected: bool) -> None:
    assert stated(kind, canonical_fact(kind, value), answer) is expected


@pytest.mark.parametrize(
    ("kind", "value", "human"),
    [
        ("time", "20:05", "8:05 pm"),
        ("time", "00:30", "12:30 am"),
        ("date", "2024-05-20", "May 20, 2024"),
        ("money", 57, "$57.00"),
        ("enum", "basic_economy", "basic economy"),
    ],
)
def test_human_forms_are_stated_facts(kind: Any, value: Any, human: str) -> None:
    fact = canonical_fact(kind, value)
    assert human_fact(kind, fact) == human
    assert stated(kind, fact, f"It is {human}.")


NEGATIONS = {"not", "no", "never", "t", "cannot", "nor", "neither", "without"}


@settings(max_examples=200, deadline=None)
@given(words=st.lists(st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True), min_size=1, max_size=4))
def test_an_enum_value_is_stated_in_its_human_form_and_not_when_negated(words: list[str]) -> None:
    fact = canonical_fact("enum", "_".join(words))
    human = human_fact("enum", fact)
    answers = (
        "Here is what you asked for: status: {}.",
        "It is {}, as you asked.",
        "It is not {}.",
        "It is no longer {}.",
    )
    assume(not any(stated("enum", fact, answer.format("")) for answer in answers))  # a value the words state ("is")
    assume(not set(fact.split()) & NEGATIONS)  # a value that is a negation itself ("no no"): rows of its own
    assert stated("enum", fact, f"Here is what you asked for: status: {human}.")
    assert stated("enum", fact, f"It is {human.upper()}, as you asked.")
    assert not stated("enum", fact, f"It is not {human}.")
    assert not stated("enum", fact, f"It is no longer {human}.")


def test_done_fails_a_wrong_answer_fails_and_the_right_facts_in_other_words_pass() -> None:
    assert not holds(FLIGHTS, "done")
    assert not holds(FLIGHTS, None)
    assert not holds(FLIGHTS, "Your flights are on May 20 and May 23, 2024.")
    assert not holds(FLIGHTS, "Your first flight is on May 20, 2024.")  # every fact, not some
    assert holds(FLIGHTS, "You fly out on 5/20/2024 and come back on the 22nd of May.")
    assert holds(FLIGHTS, "Dates: 2024-05-22 and 2024-05-20.")


def test_a_failure_is_missing_answer_fact_naming_what_is_missing() -> None:
    outcome = evaluate(parse_check(FLIGHTS), Trace.of(final_answer="Out on May 20, 2024.").index())
    assert outcome.category is FailureCategory.MISSING_ANSWER_FACT
    assert "2024-05-22" in outcome.explanation and "2024-05-20" not in outcome.explanation
    unresolved = evaluate(parse_check("ANSWER get_order().total AS money"), Trace.of(final_answer="$5").index())
    assert unresolved.category is FailureCategory.MISSING_ANSWER_FACT and "never resolved" in unresolved.explanation


def test_the_grader_reads_the_final_answer_and_passes_whichever_reads_were_made() -> None:
    checks = [CaseCheck(id="dates", check=FLIGHTS)]
    no_read = Trace.of(final_answer="May 20, 2024 and May 22, 2024")
    assert grade(no_read, checks).passed
    assert not grade(Trace.of(("get_reservation_details", {"reservation_id": "ZFA04Y"})), checks).passed


def test_paths_resolve_fields_indexes_and_every_element() -> None:
    result = {"flights": [{"date": "2024-05-20", "price": 196}, {"date": "2024-05-22", "price": 80}], "n": 2}
    assert resolve_path(result, "flights[*].date") == ["2024-05-20", "2024-05-22"]
    assert resolve_path(result, "flights[1].price") == [80]
    assert resolve_path(result, "n") == [2]
    for path, message in [
        ("flights[2].date", "2 elements"),
        ("flights[*].gate", "no field 'gate'"),
        ("n[0]", "not a list or a mapping"),
        ("flights", "not a fact"),
    ]:
        with pytest.raises(CheckValueError, match=message):
            resolve_path(result, path)
    with pytest.raises(CheckValueError, match="selects no value"):
        resolve_path({"flights": []}, "flights[*].date")


def test_paths_look_up_mappings_keyed_by_ids() -> None:
    # A product's variants are keyed by item id (digits), a user's payment methods by method id.
    product = {"variants": {"1001": {"price": 10.5, "available": True}, "2002": {"price": 12, "available": False}}}
    assert resolve_path(product, "variants[2002].price") == [12]
    assert resolve_path(product, "variants[*].price") == [10.5, 12]  # every value, in the mapping's order
    assert (
        Answer.model_validate(
            {
                "read": {"op": "call", "tool": "get_product_details", "args": {}},
                "path": "variants[1001].price",
                "kind": "money",
            }
        ).path
        == "variants[1001].price"
    )
    with pytest.raises(CheckValueError, match="has no key '3003'"):
        resolve_path(product, "variants[3003].price")
    with pytest.raises(CheckValueError, match="not a list or a mapping"):
        resolve_path({"n": 2}, "n[0]")


# --- rewards ---------------------------------------------------------------------------------------------------------


def test_an_answer_check_is_one_obligation_in_fraction_and_shaped_rewards() -> None:
    checks = [CaseCheck(id="read", check='CALL get_reservation_details(reservation_id="ZFA04Y")'),
              CaseCheck(id="dates", check=FLIGHTS)]  # fmt: skip
    owed = obligations(checks)
    assert owed == (True, True)
    call = ("get_reservation_details", {"reservation_id": "ZFA04Y"})
    silent = grade(Trace.of(call, final_answer="done"), checks)
    told = grade(Trace.of(call, final_answer="May 20, 2024; May 22, 2024"), checks)
    assert reward("fraction", silent, owed, 0) == 0.5
    assert reward("fraction", told, owed, 0) == 1.0
    assert reward("shaped", silent, owed, 1) == pytest.approx(0.48)
    assert reward("binary", silent, owed, 0) == 0.0


def test_the_analysis_charges_a_missing_fact_to_the_read_it_comes_from() -> None:
    from mantra_env.graders.analysis import failed_tool

    assert failed_tool(FLIGHTS, "missing_answer_fact") == "get_reservation_details"


def test_an_answer_check_is_never_counted_as_implied_by_the_others() -> None:
    from mantra_env.smt import implied_checks

    checks = [CaseCheck(id="read", check='CALL get_reservation_details(reservation_id="ZFA04Y")'),
              CaseCheck(id="dates", check=FLIGHTS)]  # fmt: skip
    assert implied_checks(checks) == []
    assert implied_checks([*checks, CaseCheck(id="again", check="CALL get_reservation_details()")]) == ["again"]


def test_the_failure_figure_has_a_bar_and_a_label_for_every_category() -> None:
    from mantra_env.graders.figures import CATEGORY_LABELS, CATEGORY_ORDER

    assert set(CATEGORY_ORDER) == set(CATEGORY_LABELS) == {category.value for category in FailureCategory}


def test_an_answer_holding_any_digit_run_is_graded_and_oversized_facts_are_refused() -> None:
    """An agent's answer may hold a tracking code of thirty digits: it is no amount, and grading must not raise
    (rounding it to cents overflowed the decimal context); a fact no amount can be is refused when parsed."""
    total = 'ANSWER get_order(order_id="A1").total AS money = 57'
    long_code = "123456789012345678901234567890"
    assert holds(total, f"The total is $57.00; tracking {long_code}.")
    assert not holds(total, f"tracking {long_code}")
    assert not stated("number", "57", "1e30 NaN Infinity")
    for fact in ("1e30", "NaN", "Infinity", long_code):
        with pytest.raises(CheckSyntaxError, match="is not a money"):
            parse_check(f'ANSWER get_order(order_id="A1").total AS money = "{fact}"')
