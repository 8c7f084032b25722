"""The airline domain: every tool (valid and invalid calls, the rules it enforces), resets that leave the base
database untouched (also over random tool sequences), the database generator, the manual, the domain wiring."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any

import gymnasium as gym
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mantra_env  # noqa: F401 - registers the gymnasium ids
from mantra_env.domains import domain_names, find_suite, load_domain
from mantra_env.domains.__main__ import main as export_main
from mantra_env.domains.airline import make_db
from mantra_env.domains.airline.database import FREE_BAGS, NOW, AirlineDatabase
from mantra_env.domains.airline.tools import AirlineToolkit
from mantra_env.domains.overlay import peek
from mantra_env.trace import ToolError

DOMAIN = load_domain("airline")
BASE: dict[str, Any] = DOMAIN.base_data
# the base as the database model dumps it (flight dates spell out their empty fields, db.json leaves them out)
BASE_TEXT = json.dumps(AirlineDatabase.model_validate(BASE).model_dump(mode="json"), sort_keys=True)


def fresh() -> AirlineToolkit:
    toolkit = DOMAIN.toolkit(DOMAIN.fresh_database())
    assert isinstance(toolkit, AirlineToolkit)
    return toolkit


def ok(toolkit: AirlineToolkit, tool: str, **args: Any) -> Any:
    result, error = toolkit.execute(tool, args)
    assert error is None, error
    return result


def changed_records(database: AirlineDatabase) -> dict[str, dict[str, Any]]:
    return {
        name: {
            key: peek(getattr(database, name), key).model_dump(mode="json") if key in getattr(database, name) else None
            for key in keys
        }
        for name, keys in database.changes().items()
    }


def refused(toolkit: AirlineToolkit, tool: str, **args: Any) -> ToolError:
    before = changed_records(toolkit.db)
    result, error = toolkit.execute(tool, args)
    assert error is not None and result is None, (tool, args, result)
    assert changed_records(toolkit.db) == before, f"a refused {tool} changed the database"
    return error


# -- records of the base database with the properties a test needs ------------------------------------------
def status(segment: dict[str, Any]) -> str:
    return str(BASE["flights"][segment["flight_number"]]["dates"][segment["date"]]["status"])


def reservations(where: Callable[[dict[str, Any]], bool]) -> Iterator[dict[str, Any]]:
    return (r for r in BASE["reservations"].values() if r["status"] == "confirmed" and where(r))


def first(found: Iterator[dict[str, Any]]) -> dict[str, Any]:
    record = next(found, None)
    assert record is not None, "the generated database has no such record: change make_db.py's seed or mix"
    return record


def user_of(reservation: dict[str, Any]) -> dict[str, Any]:
    return BASE["users"][reservation["user_id"]]  # type: ignore[no-any-return]


def method(user: dict[str, Any], source: str) -> dict[str, Any] | None:
    return next((m for m in user["payment_methods"].values() if m["source"] == source), None)


def open_seats(reservation: dict[str, Any], cabin: str) -> bool:
    return all(
        status(s) == "available"
        and BASE["flights"][s["flight_number"]]["dates"][s["date"]]["available_seats"][cabin]
        >= len(reservation["passengers"])
        for s in reservation["flights"]
    )


def booked_at(reservation: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(reservation["created_at"])


def old(reservation: dict[str, Any]) -> bool:
    return NOW - booked_at(reservation) > timedelta(hours=24)


RECENT = first(reservations(lambda r: not old(r) and open_seats(r, r["cabin"]) and r["cabin"] != "business"))
STUCK = first(
    reservations(
        lambda r: (
            old(r)
            and r["cabin"] == "economy"
            and not r["insurance"]
            and open_seats(r, "business")
            and r["flight_type"] == "one_way"
            and len(r["flights"]) == 1
            and method(user_of(r), "gift_card") is not None
        )
    )
)
BASIC = first(reservations(lambda r: r["cabin"] == "basic_economy" and open_seats(r, "economy")))
UNDER_WAY = first(reservations(lambda r: any(status(s) in ("landed", "flying") for s in r["flights"])))
INSURED = first(
    reservations(lambda r: old(r) and r["insurance"] and r["cabin"] != "business" and open_seats(r, r["cabin"]))
)
AIRLINE_CANCELLED = first(
    reservations(
        lambda r: (
            any(status(s) == "cancelled" for s in r["flights"])
            and not any(status(s) in ("landed", "flying") for s in r["flights"])
            and user_of(r)["membership"] != "regular"
        )
    )
)
DELAYED = first(
    reservations(
        lambda r: (
            any(status(s) == "delayed" for s in r["flights"])
            and not any(status(s) == "cancelled" for s in r["flights"])
            and (user_of(r)["membership"] != "regular" or r["insurance"] or r["cabin"] == "business")
        )
    )
)
UNINSURED_REGULAR = first(
    reservations(
        lambda r: (
            any(status(s) == "cancelled" for s in r["flights"])
            and user_of(r)["membership"] == "regular"
            and not r["insurance"]
            and r["cabin"] != "business"
        )
    )
)
BOOKER = first(
    u
    for u in BASE["users"].values()
    if u["membership"] == "gold" and method(u, "certificate") and method(u, "gift_card") and method(u, "credit_card")
)


def alternative(segment: dict[str, Any], cabin: str, seats: int) -> dict[str, Any]:
    """Another flight of the same route, or the same flight another day, open with seats in ``cabin``."""
    route = (segment["origin"], segment["destination"])
    for day in sorted({segment["date"], *(d for d in BASE["flights"][segment["flight_number"]]["dates"])}):
        if day <= NOW.date().isoformat():
            continue
        for flight in BASE["flights"].values():
            record = flight["dates"][day]
            same = (flight["flight_number"], day) == (segment["flight_number"], segment["date"])
            bookable = record["status"] == "available" and record["available_seats"][cabin] >= seats
            if (flight["origin"], flight["destination"]) == route and not same and bookable:
                return {"flight_number": flight["flight_number"], "date": day, "price": record["prices"][cabin]}
    raise AssertionError("no alternative flight")


def booking() -> tuple[dict[str, Any], int]:
    """A valid booking for BOOKER (two passengers, economy, direct, three bags, insured) and its total."""
    for flight in BASE["flights"].values():
        record = flight["dates"]["2026-05-20"]
        if record["status"] == "available" and record["available_seats"]["economy"] >= 2:
            break
    free = FREE_BAGS[BOOKER["membership"]]["economy"] * 2
    bags = free + 1
    total = record["prices"]["economy"] * 2 + 30 * 2 + 50
    args = {
        "user_id": BOOKER["user_id"],
        "origin": flight["origin"],
        "destination": flight["destination"],
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": [{"flight_number": flight["flight_number"], "date": "2026-05-20"}],
        "passengers": [
            {
                "first_name": BOOKER["name"]["first_name"],
                "last_name": BOOKER["name"]["last_name"],
                "dob": BOOKER["dob"],
            },
            {"first_name": "Ana", "last_name": "Costa", "dob": "1988-02-03"},
        ],
        "payment_methods": [],
        "total_baggages": bags,
        "nonfree_baggages": 1,
        "insurance": True,
    }
    return args, total


def paid_with(total: int, certificate: bool = True) -> list[dict[str, Any]]:
    """Payment parts for BOOKER: the certificate (if it fits), the gift card's balance, a credit card for the rest."""
    parts = []
    left = total
    cert, gift, card = method(BOOKER, "certificate"), method(BOOKER, "gift_card"), method(BOOKER, "credit_card")
    assert cert and gift and card
    for source in ([cert] if certificate else []) + [gift]:
        amount = min(source["amount"], left - 1)
        if amount > 0:
            parts.append({"payment_id": source["id"], "amount": amount})
            left -= amount
    return [*parts, {"payment_id": card["id"], "amount": left}]


def test_the_database_is_large_and_has_every_flight_status() -> None:
    assert len(BASE["users"]) >= 300 and len(BASE["reservations"]) >= 1000 and len(BASE["airports"]) == 20
    days = {day for flight in BASE["flights"].values() for day in flight["dates"]}
    assert len(days) >= 21
    statuses = {record["status"] for flight in BASE["flights"].values() for record in flight["dates"].values()}
    assert statuses == {"available", "on time", "delayed", "flying", "landed", "cancelled"}
    sources = {m["source"] for u in BASE["users"].values() for m in u["payment_methods"].values()}
    assert sources == {"credit_card", "gift_card", "certificate"}
    assert {r["cabin"] for r in BASE["reservations"].values()} == {"basic_economy", "economy", "business"}
    assert {r["flight_type"] for r in BASE["reservations"].values()} == {"one_way", "round_trip"}
    assert {u["membership"] for u in BASE["users"].values()} == {"regular", "silver", "gold"}
    assert all(r["reservation_id"] in user_of(r)["reservations"] for r in BASE["reservations"].values())
    for r in BASE["reservations"].values():  # the baggage counts follow the allowance
        free = FREE_BAGS[user_of(r)["membership"]][r["cabin"]] * len(r["passengers"])
        assert r["nonfree_baggages"] == max(0, r["total_baggages"] - free)


def test_the_generator_reproduces_the_committed_database_byte_for_byte() -> None:
    assert make_db.render() == make_db.PATH.read_text(encoding="utf-8")
    assert make_db.main(["--check"]) == 0


def test_the_manual_is_long_and_has_every_section() -> None:
    manual = DOMAIN.manual
    assert len(re.findall(r"\b[\w'-]+\b", manual)) >= 1_300
    headings = set(re.findall(r"^#{2,3} (.+)$", manual, flags=re.MULTILINE))
    assert {
        "Identity",
        "Booking a new reservation",
        "Baggage allowance",
        "Travel insurance",
        "Payment",
        "Changing flights",
        "Changing the cabin",
        "Changing passengers",
        "Adding baggage",
        "When a cancellation is allowed",
        "Compensation for delays and cancellations",
        "Confirmation and one change at a time",
        "Transfer to a human agent",
    } <= headings
    for name, kind in DOMAIN.episode_constants.kinds.items():
        if kind == "write" or name.startswith(("get_", "search_")):
            assert f"`{name}`" in manual, f"the manual never names {name}"


def test_tools_kinds_and_list_of_record_parameters() -> None:
    specs = {spec.name: spec for spec in DOMAIN.tool_specs()}
    assert len(specs) >= 14
    assert {name for name, spec in specs.items() if spec.kind == "write"} == {
        "book_reservation",
        "cancel_reservation",
        "update_reservation_flights",
        "update_reservation_passengers",
        "update_reservation_baggages",
        "send_certificate",
        "transfer_to_human_agents",
    }
    book = specs["book_reservation"].properties
    assert set(book["passengers"]["items"]["properties"]) == {"first_name", "last_name", "dob"}
    assert set(book["payment_methods"]["items"]["properties"]) == {"payment_id", "amount"}
    assert set(book["flights"]["items"]["properties"]) == {"flight_number", "date"}
    assert "$ref" not in json.dumps(book)
    assert book["cabin"]["enum"] == ["basic_economy", "economy", "business"]
    assert export_main(["--check"]) == 0


# -- read tools --------------------------------------------------------------------------------------------
def test_lookups_and_searches() -> None:
    toolkit = fresh()
    assert ok(toolkit, "get_user_details", user_id=BOOKER["user_id"]) == BOOKER
    assert ok(toolkit, "get_reservation_details", reservation_id=STUCK["reservation_id"]) == STUCK
    assert ok(toolkit, "list_all_airports")["JFK"] == "New York"
    segment = STUCK["flights"][0]
    direct = ok(
        toolkit,
        "search_direct_flight",
        origin=segment["origin"],
        destination=segment["destination"],
        date=segment["date"],
    )
    assert segment["flight_number"] in {offer["flight_number"] for offer in direct}
    assert all(offer["status"] == "available" and "prices" in offer for offer in direct)
    journeys = ok(toolkit, "search_onestop_flight", origin="JFK", destination="SEA", date="2026-05-22")
    assert journeys and all(a["destination"] == b["origin"] and b["destination"] == "SEA" for a, b in journeys)
    landed = UNDER_WAY["flights"][0]
    assert ok(toolkit, "get_flight_status", flight_number=landed["flight_number"], date=landed["date"])["status"] in (
        "landed",
        "flying",
    )
    assert ok(toolkit, "calculate", expression="(120 + 340) * 2 + 50") == 970
    assert ok(toolkit, "think", thought="plan") == ""
    assert refused(toolkit, "get_user_details", user_id="nobody_1").code == "not_found"
    assert refused(toolkit, "get_reservation_details", reservation_id="ZZZZZZ").code == "not_found"
    assert refused(toolkit, "search_direct_flight", origin="XXX", destination="JFK", date="2026-05-20").code == (
        "not_found"
    )
    error = refused(toolkit, "get_flight_status", flight_number=segment["flight_number"], date="2026-07-01")
    assert error.code == "not_found" and "the schedule covers 2026-05-08 to 2026-05-31" in error.message
    assert refused(toolkit, "calculate", expression="__import__('os')").code == "invalid_request"


# -- write tools: effects ------------------------------------------------------------------------------------
def test_booking_takes_seats_spends_the_certificate_and_the_gift_card() -> None:
    toolkit = fresh()
    args, total = booking()
    args["payment_methods"] = paid_with(total)
    result = ok(toolkit, "book_reservation", **args)
    assert result["created_at"] == NOW.isoformat() and result["status"] == "confirmed"
    assert sum(p["amount"] for p in result["payment_history"]) == total
    user = ok(toolkit, "get_user_details", user_id=BOOKER["user_id"])
    assert result["reservation_id"] in user["reservations"]
    certificate, gift = method(BOOKER, "certificate"), method(BOOKER, "gift_card")
    assert certificate is not None and gift is not None
    used = {p["payment_id"]: p["amount"] for p in args["payment_methods"]}
    assert (certificate["id"] in user["payment_methods"]) == (certificate["id"] not in used)
    if gift["id"] in used:
        assert user["payment_methods"][gift["id"]]["amount"] == gift["amount"] - used[gift["id"]]
    choice = args["flights"][0]
    seats = ok(toolkit, "get_flight_status", **choice)["available_seats"]["economy"]
    assert seats == BASE["flights"][choice["flight_number"]]["dates"][choice["date"]]["available_seats"]["economy"] - 2
    assert ok(toolkit, "get_reservation_details", reservation_id=result["reservation_id"]) == result
    # the same booking again is another reservation with another id
    args["payment_methods"] = [{"payment_id": method(BOOKER, "credit_card")["id"], "amount": total}]  # type: ignore[index]
    assert ok(toolkit, "book_reservation", **args)["reservation_id"] != result["reservation_id"]


def test_cancellation_refunds_every_payment_and_gives_seats_back() -> None:
    toolkit = fresh()
    result = ok(toolkit, "cancel_reservation", reservation_id=RECENT["reservation_id"], reason="change of plan")
    assert result["status"] == "cancelled" and sum(p["amount"] for p in result["payment_history"]) == 0
    segment = RECENT["flights"][0]
    seats = ok(toolkit, "get_flight_status", flight_number=segment["flight_number"], date=segment["date"])
    before = BASE["flights"][segment["flight_number"]]["dates"][segment["date"]]["available_seats"][RECENT["cabin"]]
    assert seats["available_seats"][RECENT["cabin"]] == before + len(RECENT["passengers"])
    assert ok(toolkit, "cancel_reservation", reservation_id=INSURED["reservation_id"], reason="health")["status"] == (
        "cancelled"
    )
    ok(
        toolkit,
        "cancel_reservation",
        reservation_id=AIRLINE_CANCELLED["reservation_id"],
        reason="airline cancelled flight",
    )
    assert refused(toolkit, "cancel_reservation", reservation_id=RECENT["reservation_id"], reason="other").code == (
        "illegal_state"
    )


def test_changing_flights_cabin_passengers_and_bags() -> None:
    toolkit = fresh()
    segment = STUCK["flights"][0]
    gift = method(user_of(STUCK), "gift_card")
    card = method(user_of(STUCK), "credit_card")
    assert gift is not None and card is not None
    other = alternative(segment, "economy", len(STUCK["passengers"]))
    difference = (other["price"] - segment["price"]) * len(STUCK["passengers"])
    result = ok(
        toolkit,
        "update_reservation_flights",
        reservation_id=STUCK["reservation_id"],
        cabin="economy",
        flights=[{"flight_number": other["flight_number"], "date": other["date"]}],
        payment_id=card["id"],
    )
    assert result["flights"][0]["price"] == other["price"]
    if difference:
        assert result["payment_history"][-1] == {"payment_id": card["id"], "amount": difference}
    upgraded = ok(
        toolkit,
        "update_reservation_flights",
        reservation_id=BASIC["reservation_id"],
        cabin="economy",
        flights=[{"flight_number": s["flight_number"], "date": s["date"]} for s in BASIC["flights"]],
        payment_id=method(user_of(BASIC), "credit_card")["id"],
    )  # type: ignore[index]
    assert (
        upgraded["cabin"] == "economy"
        and upgraded["flights"][0]["price"]
        == (
            BASE["flights"][BASIC["flights"][0]["flight_number"]]["dates"][BASIC["flights"][0]["date"]]["prices"][
                "economy"
            ]
        )
    )
    people = [{"first_name": "Lee", "last_name": "Kim", "dob": "2001-01-01"}] * len(STUCK["passengers"])
    assert (
        ok(toolkit, "update_reservation_passengers", reservation_id=STUCK["reservation_id"], passengers=people)[
            "passengers"
        ]
        == people
    )
    free = FREE_BAGS[user_of(STUCK)["membership"]]["economy"] * len(STUCK["passengers"])
    total = max(STUCK["total_baggages"], free) + 2
    bags = ok(
        toolkit,
        "update_reservation_baggages",
        reservation_id=STUCK["reservation_id"],
        total_baggages=total,
        nonfree_baggages=total - free,
        payment_id=card["id"],
    )
    assert bags["payment_history"][-1]["amount"] == 50 * (total - free - STUCK["nonfree_baggages"])


def test_certificates_follow_the_tier_and_the_flight_status() -> None:
    toolkit = fresh()
    user, reservation = AIRLINE_CANCELLED["user_id"], AIRLINE_CANCELLED["reservation_id"]
    due = 100 * len(AIRLINE_CANCELLED["passengers"])
    assert refused(toolkit, "send_certificate", user_id=user, reservation_id=reservation, amount=due + 50).code == (
        "invalid_request"
    )
    certificate = ok(toolkit, "send_certificate", user_id=user, reservation_id=reservation, amount=due)
    assert certificate == {
        "id": f"certificate_{reservation.lower()}",
        "source": "certificate",
        "amount": due,
        "brand": None,
        "last_four": None,
    }
    assert ok(toolkit, "get_user_details", user_id=user)["payment_methods"][certificate["id"]] == certificate
    assert refused(toolkit, "send_certificate", user_id=user, reservation_id=reservation, amount=due).code == (
        "illegal_state"
    )
    ok(
        toolkit,
        "send_certificate",
        user_id=DELAYED["user_id"],
        reservation_id=DELAYED["reservation_id"],
        amount=50 * len(DELAYED["passengers"]),
    )
    regular = refused(
        toolkit,
        "send_certificate",
        user_id=UNINSURED_REGULAR["user_id"],
        reservation_id=UNINSURED_REGULAR["reservation_id"],
        amount=100 * len(UNINSURED_REGULAR["passengers"]),
    )
    assert regular.code == "not_allowed"
    assert ok(toolkit, "transfer_to_human_agents", summary="trip under way") == "transfer successful"


# -- write tools: the rules they enforce ---------------------------------------------------------------------
def _booking(**override: Any) -> dict[str, Any]:
    args, total = booking()
    return {**args, "payment_methods": paid_with(total), **override}


def _six() -> list[dict[str, str]]:
    return [{"first_name": f"P{n}", "last_name": "Lee", "dob": "1990-01-01"} for n in range(6)]


def _two_gift_cards() -> list[dict[str, Any]]:
    _, total = booking()
    card = method(BOOKER, "credit_card")
    assert card is not None
    return [
        {"payment_id": card["id"], "amount": total - 2},
        {"payment_id": "gift_card_x", "amount": 1},
        {"payment_id": "gift_card_y", "amount": 1},
    ]


def _same_flights(reservation: dict[str, Any]) -> list[dict[str, str]]:
    return [{"flight_number": s["flight_number"], "date": s["date"]} for s in reservation["flights"]]


def flights_of(reservation_id: str) -> list[dict[str, Any]]:
    return BASE["reservations"][reservation_id]["flights"]  # type: ignore[no-any-return]


def _card(reservation: dict[str, Any]) -> str:
    found = method(user_of(reservation), "credit_card")
    assert found is not None
    return str(found["id"])


REFUSALS: list[tuple[str, str, Callable[[], dict[str, Any]], str]] = [
    ("book six passengers", "book_reservation", lambda: _booking(passengers=_six()), "invalid_request"),
    (
        "book with a wrong total",
        "book_reservation",
        lambda: _booking(payment_methods=paid_with(booking()[1] - 1)),
        "invalid_request",
    ),
    ("book with a wrong bag count", "book_reservation", lambda: _booking(nonfree_baggages=0), "invalid_request"),
    (
        "book a departed flight",
        "book_reservation",
        lambda: _booking(
            flights=_same_flights(UNDER_WAY)[:1],
            origin=UNDER_WAY["flights"][0]["origin"],
            destination=UNDER_WAY["flights"][0]["destination"],
        ),
        "unavailable",
    ),
    (
        "book flights that do not reach the destination",
        "book_reservation",
        lambda: _booking(destination="ZZZ"),
        "not_found",
    ),
    (
        "book a round trip that does not come back",
        "book_reservation",
        lambda: _booking(flight_type="round_trip"),
        "invalid_request",
    ),
    (
        "book with another user's card",
        "book_reservation",
        lambda: _booking(payment_methods=[{"payment_id": _card(STUCK), "amount": booking()[1]}]),
        "not_found",
    ),
    ("book with two gift cards", "book_reservation", lambda: _booking(payment_methods=_two_gift_cards()), "not_found"),
    (
        "book with a passenger missing a field",
        "book_reservation",
        lambda: _booking(passengers=[{"first_name": "A", "last_name": "B"}]),
        "invalid_arguments",
    ),
    (
        "cancel an old uninsured economy trip",
        "cancel_reservation",
        lambda: {"reservation_id": STUCK["reservation_id"], "reason": "change of plan"},
        "not_allowed",
    ),
    (
        "cancel an insured trip for a change of plan",
        "cancel_reservation",
        lambda: {"reservation_id": INSURED["reservation_id"], "reason": "change of plan"},
        "not_allowed",
    ),
    (
        "claim an airline cancellation that did not happen",
        "cancel_reservation",
        lambda: {"reservation_id": STUCK["reservation_id"], "reason": "airline cancelled flight"},
        "invalid_request",
    ),
    (
        "cancel a trip under way",
        "cancel_reservation",
        lambda: {"reservation_id": UNDER_WAY["reservation_id"], "reason": "health"},
        "illegal_state",
    ),
    (
        "change basic economy flights",
        "update_reservation_flights",
        lambda: {
            "reservation_id": BASIC["reservation_id"],
            "cabin": "basic_economy",
            "flights": [
                {k: v for k, v in alternative(BASIC["flights"][0], "basic_economy", 1).items() if k != "price"},
                *_same_flights(BASIC)[1:],
            ],
            "payment_id": _card(BASIC),
        },
        "not_allowed",
    ),
    (
        "change nothing",
        "update_reservation_flights",
        lambda: {
            "reservation_id": STUCK["reservation_id"],
            "cabin": "economy",
            "flights": _same_flights(STUCK),
            "payment_id": _card(STUCK),
        },
        "invalid_request",
    ),
    (
        "change to another destination",
        "update_reservation_flights",
        lambda: {
            "reservation_id": STUCK["reservation_id"],
            "cabin": "economy",
            "flights": _booking()["flights"],
            "payment_id": _card(STUCK),
        },
        "invalid_request",
    ),
    (
        "pay a change with a certificate",
        "update_reservation_flights",
        lambda: {
            "reservation_id": BOOKER["reservations"][0],
            "cabin": "business",
            "flights": _same_flights(BASE["reservations"][BOOKER["reservations"][0]]),
            "payment_id": method(BOOKER, "certificate")["id"],
        },
        "invalid_request",
    ),  # type: ignore[index]
    (
        "change the number of passengers",
        "update_reservation_passengers",
        lambda: {"reservation_id": STUCK["reservation_id"], "passengers": _six()},
        "not_allowed",
    ),
    (
        "remove bags",
        "update_reservation_baggages",
        lambda: {
            "reservation_id": STUCK["reservation_id"],
            "total_baggages": 0,
            "nonfree_baggages": 0,
            "payment_id": _card(STUCK),
        },
        "not_allowed",
    ),
    (
        "compensate a flight that flew on time",
        "send_certificate",
        lambda: {
            "user_id": BOOKER["user_id"],
            "reservation_id": next(
                r for r in BOOKER["reservations"] if all(status(s) in ("available", "landed") for s in flights_of(r))
            ),
            "amount": 50,
        },
        "not_allowed",
    ),
    (
        "compensate on another user's reservation",
        "send_certificate",
        lambda: {"user_id": BOOKER["user_id"], "reservation_id": AIRLINE_CANCELLED["reservation_id"], "amount": 100},
        "invalid_request",
    ),
    ("transfer with no summary", "transfer_to_human_agents", lambda: {"summary": " "}, "invalid_request"),
]


@pytest.mark.parametrize(("what", "tool", "args", "code"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_write_tools_refuse_what_the_rules_forbid(
    what: str, tool: str, args: Callable[[], dict[str, Any]], code: str
) -> None:
    assert refused(fresh(), tool, **args()).code == code, what


# -- resets ------------------------------------------------------------------------------------------------
def every_call() -> list[tuple[str, dict[str, Any]]]:
    """A valid call of every tool, then the refused ones."""
    args, total = booking()
    segment = STUCK["flights"][0]
    other = alternative(segment, "economy", len(STUCK["passengers"]))
    calls: list[tuple[str, dict[str, Any]]] = [
        ("get_user_details", {"user_id": BOOKER["user_id"]}),
        ("get_reservation_details", {"reservation_id": STUCK["reservation_id"]}),
        ("list_all_airports", {}),
        (
            "search_direct_flight",
            {"origin": segment["origin"], "destination": segment["destination"], "date": segment["date"]},
        ),
        ("search_onestop_flight", {"origin": "JFK", "destination": "SEA", "date": "2026-05-22"}),
        ("get_flight_status", {"flight_number": segment["flight_number"], "date": segment["date"]}),
        ("calculate", {"expression": "1 + 2"}),
        ("think", {"thought": "ok"}),
        ("book_reservation", {**args, "payment_methods": paid_with(total)}),
        ("cancel_reservation", {"reservation_id": RECENT["reservation_id"], "reason": "change of plan"}),
        (
            "update_reservation_flights",
            {
                "reservation_id": STUCK["reservation_id"],
                "cabin": "economy",
                "flights": [{"flight_number": other["flight_number"], "date": other["date"]}],
                "payment_id": _card(STUCK),
            },
        ),
        (
            "update_reservation_passengers",
            {
                "reservation_id": STUCK["reservation_id"],
                "passengers": [{"first_name": "Lee", "last_name": "Kim", "dob": "2001-01-01"}]
                * len(STUCK["passengers"]),
            },
        ),
        (
            "update_reservation_baggages",
            {
                "reservation_id": INSURED["reservation_id"],
                "total_baggages": INSURED["total_baggages"] + 1,
                "nonfree_baggages": max(
                    0,
                    INSURED["total_baggages"]
                    + 1
                    - FREE_BAGS[user_of(INSURED)["membership"]][INSURED["cabin"]] * len(INSURED["passengers"]),
                ),
                "payment_id": _card(INSURED),
            },
        ),
        (
            "send_certificate",
            {
                "user_id": AIRLINE_CANCELLED["user_id"],
                "reservation_id": AIRLINE_CANCELLED["reservation_id"],
                "amount": 100 * len(AIRLINE_CANCELLED["passengers"]),
            },
        ),
        ("transfer_to_human_agents", {"summary": "trip under way"}),
    ]
    return calls + [(tool, make()) for _, tool, make, _ in REFUSALS]


CALLS = every_call()
VALID_CALLS = 15
KINDS = DOMAIN.episode_constants.kinds


def test_every_tool_then_a_reset_gives_the_base_database_back() -> None:
    assert {tool for tool, _ in CALLS} >= set(KINDS)
    for position, (tool, args) in enumerate(CALLS):  # each alone: the first VALID_CALLS are accepted, then refused
        assert (fresh().execute(tool, args)[1] is None) == (position < VALID_CALLS), (tool, args)
    toolkit = fresh()
    for tool, args in CALLS:
        toolkit.execute(tool, args)
    assert set(toolkit.db.changes()) == {"users", "reservations", "flights"}
    after_reset = DOMAIN.fresh_database()
    assert isinstance(after_reset, AirlineDatabase) and after_reset.changes() == {}
    assert json.dumps(after_reset.dump(), sort_keys=True) == BASE_TEXT
    base = DOMAIN._overlay_base
    assert base is not None and json.dumps(base.dump(), sort_keys=True) == BASE_TEXT


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.integers(0, len(CALLS) - 1), max_size=10), min_size=1, max_size=3))
def test_random_tool_sequences_and_resets_never_change_the_base(episodes: list[list[int]]) -> None:
    for calls in episodes:
        toolkit = fresh()
        assert toolkit.db.changes() == {}
        for index in calls:
            tool, args = CALLS[index]
            toolkit.execute(tool, args)
        assert set(toolkit.db.changes()) <= {"users", "reservations", "flights"}
    view = DOMAIN.fresh_database()
    assert isinstance(view, AirlineDatabase)
    for record in (STUCK, RECENT, INSURED, AIRLINE_CANCELLED, BASIC):
        key = record["reservation_id"]
        assert view.reservations[key].model_dump(mode="json") == BASE["reservations"][key]
        assert view.users[record["user_id"]].model_dump(mode="json") == BASE["users"][record["user_id"]]


# -- the domain's wiring -------------------------------------------------------------------------------------
def test_the_airline_domain_runs_its_generated_suite_by_name() -> None:
    assert "airline" in domain_names() and load_domain("airline") is DOMAIN
    domain, suite = find_suite("airline")
    assert domain is DOMAIN and domain.default_suite == "generated" and suite.manifest.name == "generated"
    env = gym.make("mantra/airline-v3").unwrapped
    assert [case.id for case in env.suite.cases] == [case.id for case in suite.cases]  # type: ignore[attr-defined]
