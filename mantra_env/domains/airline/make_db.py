"""Write the airline database (``db.json``) from a fixed seed: ``python -m mantra_env.domains.airline.make_db``.

The data is generated, not hand-written: airports below, and the people, streets and card brands of the retail
generator, are the raw material; a seeded ``random.Random`` builds a route network, a daily schedule over
:data:`FIRST_DAY`..:data:`LAST_DAY` with a status per date (flown or cancelled before the desk's clock
:data:`~mantra_env.domains.airline.database.NOW`, on time / delayed / flying on its day, open for booking with
seats and fares after it), users and their reservations. ``--check`` fails if the committed file differs from what
this script writes (a test runs the same comparison).
"""

from __future__ import annotations

import itertools
import json
import random
import string
import sys
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from mantra_env.domains.airline.database import BAG_FEE, FREE_BAGS, INSURANCE_PER_PASSENGER, NOW, Cabin
from mantra_env.domains.kit import make_db_main
from mantra_env.domains.retail.make_db import CARD_BRANDS, FIRST_NAMES, LAST_NAMES, _address, _digits

SEED = 20260515
USERS = 500
RESERVATIONS = 2000
FIRST_DAY, LAST_DAY = date(2026, 5, 8), date(2026, 5, 31)
PATH = Path(__file__).parent / "db.json"
CABINS: tuple[Cabin, ...] = ("basic_economy", "economy", "business")

AIRPORTS = [
    ("ATL", "Atlanta"),
    ("BOS", "Boston"),
    ("CLT", "Charlotte"),
    ("DEN", "Denver"),
    ("DFW", "Dallas-Fort Worth"),
    ("DTW", "Detroit"),
    ("EWR", "Newark"),
    ("IAH", "Houston"),
    ("JFK", "New York"),
    ("LAS", "Las Vegas"),
    ("LAX", "Los Angeles"),
    ("LGA", "New York"),
    ("MCO", "Orlando"),
    ("MIA", "Miami"),
    ("MSP", "Minneapolis"),
    ("ORD", "Chicago"),
    ("PHL", "Philadelphia"),
    ("PHX", "Phoenix"),
    ("SEA", "Seattle"),
    ("SFO", "San Francisco"),
]


def _clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _at(day: date, minutes: int) -> str:
    return (datetime.combine(day, datetime.min.time()) + timedelta(minutes=minutes)).isoformat()


def _fares(rng: random.Random, economy: int) -> dict[str, int]:
    """The fares of the three cabins around an economy base fare."""
    economy = round(economy * rng.uniform(0.8, 1.25))
    return {"basic_economy": round(economy * 0.6), "economy": economy, "business": round(economy * rng.uniform(2.5, 4))}


def _flight_date(rng: random.Random, day: date, departure: int, arrival: int, economy: int) -> dict[str, Any]:
    """The flight on ``day``: its status as seen at NOW, with seats and fares if it is open for booking."""
    midnight = datetime.combine(day, datetime.min.time())
    leaves, lands = midnight + timedelta(minutes=departure), midnight + timedelta(minutes=arrival)
    if rng.random() < (0.05 if day <= NOW.date() else 0.02 if day <= NOW.date() + timedelta(days=4) else 0):
        return {"status": "cancelled"}
    if leaves > NOW:
        if day > NOW.date():
            seats = {cabin: rng.choice([0, *range(1, 21)]) for cabin in CABINS}
            return {"status": "available", "available_seats": seats, "prices": _fares(rng, economy)}
        if rng.random() < 0.3:
            delay = rng.choice([45, 90, 150, 240])
            return {
                "status": "delayed",
                "estimated_departure_time": _at(day, departure + delay),
                "estimated_arrival_time": _at(day, arrival + delay),
            }
        return {"status": "on time"}
    late = rng.choice([0, 0, 5, 12, 30])
    if lands + timedelta(minutes=late) > NOW:
        return {"status": "flying", "actual_departure_time": _at(day, departure + late)}
    return {
        "status": "landed",
        "actual_departure_time": _at(day, departure + late),
        "actual_arrival_time": _at(day, arrival + late),
    }


def _flights(rng: random.Random) -> tuple[dict[str, Any], dict[tuple[str, str], int]]:
    """The schedule and each route's economy base fare."""
    codes = [code for code, _ in AIRPORTS]
    routes = sorted({(a, b) for a in codes for b in rng.sample([c for c in codes if c != a], 9)})
    routes = sorted(set(routes) | {(b, a) for a, b in routes})  # every route flies both ways
    flights: dict[str, Any] = {}
    base_fares: dict[tuple[str, str], int] = {}
    number = 100
    for origin, destination in routes:
        base_fares[origin, destination] = rng.randrange(90, 420)
        duration = rng.randrange(60, 330, 5)
        for departure in sorted(rng.sample(range(5 * 60, 23 * 60 - duration, 5), rng.choice([1, 1, 2]))):
            number += rng.randint(1, 3)
            flight_number = f"MA{number}"
            arrival = departure + duration
            flights[flight_number] = {
                "flight_number": flight_number,
                "origin": origin,
                "destination": destination,
                "scheduled_departure_time": _clock(departure),
                "scheduled_arrival_time": _clock(arrival),
                "dates": {
                    day.isoformat(): _flight_date(rng, day, departure, arrival, base_fares[origin, destination])
                    for day in (FIRST_DAY + timedelta(days=n) for n in range((LAST_DAY - FIRST_DAY).days + 1))
                },
            }
    return flights, base_fares


def _person(rng: random.Random) -> dict[str, str]:
    born = date(1950, 1, 1) + timedelta(days=rng.randrange(365 * 55))
    return {"first_name": rng.choice(FIRST_NAMES), "last_name": rng.choice(LAST_NAMES), "dob": born.isoformat()}


def _users(rng: random.Random, used: set[str]) -> dict[str, Any]:
    users: dict[str, Any] = {}
    while len(users) < USERS:
        person = _person(rng)
        first, last = person["first_name"], person["last_name"]
        user_id = f"{first}_{last}_{_digits(rng, 4, used)}".lower()
        methods: dict[str, Any] = {}
        sources = ["credit_card"] * rng.randint(1, 2) + ["gift_card"] * rng.randint(0, 2)
        sources += ["certificate"] * rng.choice([0, 0, 1, 2])
        for source in sources:
            method_id = f"{source}_{_digits(rng, 7, used)}"
            method: dict[str, Any] = {
                "id": method_id,
                "source": source,
                "brand": None,
                "last_four": None,
                "amount": None,
            }
            if source == "credit_card":
                method |= {"brand": rng.choice(CARD_BRANDS), "last_four": f"{rng.randint(0, 9999):04d}"}
            elif source == "gift_card":
                method["amount"] = rng.choice([0, 25, 50, 80, 120, 200, 260, 350])
            else:
                method["amount"] = rng.choice([100, 150, 200, 250, 500])
            methods[method["id"]] = method
        users[user_id] = {
            "user_id": user_id,
            "name": {"first_name": first, "last_name": last},
            "address": _address(rng),
            "email": f"{first}.{last}{rng.randint(1, 999)}@example.com".lower(),
            "dob": person["dob"],
            "membership": rng.choices(["regular", "silver", "gold"], [5, 3, 2])[0],
            "payment_methods": methods,
            "saved_passengers": [_person(rng) for _ in range(rng.choice([0, 1, 1, 2, 3]))],
            "reservations": [],
        }
    return users


def _minutes(clock: str) -> int:
    return int(clock[:2]) * 60 + int(clock[3:])


def _leg(
    rng: random.Random, flights: dict[str, Any], by_origin: dict[str, list[str]], origin: str, avoid: str
) -> list[dict[str, Any]] | None:
    """A direct or one-stop journey from ``origin`` on one day (not ending at ``avoid``), as flight records; the
    connection leaves at least an hour after the first flight lands."""
    first = flights[rng.choice(by_origin[origin])]
    if rng.random() < 0.7 or first["destination"] == avoid:
        return None if first["destination"] == avoid else [first]
    arrival = _minutes(first["scheduled_arrival_time"])
    onward = [
        flights[number]
        for number in by_origin[first["destination"]]
        if flights[number]["destination"] not in (origin, avoid)
        and _minutes(flights[number]["scheduled_departure_time"]) >= arrival + 60
    ]
    return [first, rng.choice(onward)] if onward else [first]


def _way_back(
    rng: random.Random, flights: dict[str, Any], by_origin: dict[str, list[str]], outbound: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The return journey: the outbound airports in reverse order (empty if no connection fits)."""
    stops = [outbound[0]["origin"], *(flight["destination"] for flight in outbound)][::-1]
    journey: list[dict[str, Any]] = []
    for here, there in itertools.pairwise(stops):
        ready = _minutes(journey[-1]["scheduled_arrival_time"]) + 60 if journey else 0
        options = [
            flights[n]
            for n in by_origin[here]
            if flights[n]["destination"] == there and _minutes(flights[n]["scheduled_departure_time"]) >= ready
        ]
        if not options:
            return []
        journey.append(rng.choice(options))
    return journey


def _reservation(
    rng: random.Random,
    used: set[str],
    user: dict[str, Any],
    flights: dict[str, Any],
    by_origin: dict[str, list[str]],
    fares: dict[tuple[str, str], int],
) -> dict[str, Any] | None:
    days = (LAST_DAY - FIRST_DAY).days
    start = FIRST_DAY + timedelta(days=rng.randrange(days - 1))
    origin = rng.choice(sorted(by_origin))
    outbound = _leg(rng, flights, by_origin, origin, origin)
    if outbound is None:
        return None
    destination = outbound[-1]["destination"]
    trip = [(start, flight) for flight in outbound]
    flight_type = "one_way"
    back_day = start + timedelta(days=rng.randint(1, 6))
    if rng.random() < 0.5 and back_day <= LAST_DAY:
        inbound = _way_back(rng, flights, by_origin, outbound)
        if inbound:
            trip += [(back_day, flight) for flight in inbound]
            flight_type = "round_trip"
    cabin = rng.choices(CABINS, [3, 5, 2])[0]
    passengers = (
        [{"first_name": user["name"]["first_name"], "last_name": user["name"]["last_name"], "dob": user["dob"]}]
        if rng.random() < 0.8
        else []
    )
    passengers += rng.sample(user["saved_passengers"], min(len(user["saved_passengers"]), rng.randint(0, 2)))
    while len(passengers) < rng.choice([1, 1, 1, 2, 3, 4]):
        passengers.append(_person(rng))
    segments = []
    for day, flight in trip:
        record = flight["dates"][day.isoformat()]
        route = flight["origin"], flight["destination"]
        price = record["prices"][cabin] if "prices" in record else _fares(rng, fares[route])[cabin]
        segments.append(
            {
                "flight_number": flight["flight_number"],
                "origin": flight["origin"],
                "destination": flight["destination"],
                "date": day.isoformat(),
                "price": price,
            }
        )
    leaves = datetime.fromisoformat(f"{start.isoformat()}T{outbound[0]['scheduled_departure_time']}")
    latest = min(leaves, NOW)
    if rng.random() < 0.08 and leaves > NOW:  # booked within the last day: the 24-hour rule applies
        created = NOW - timedelta(minutes=rng.randrange(20, 23 * 60))
    else:
        created = latest - timedelta(minutes=rng.randrange(24 * 60 + 30, 45 * 24 * 60))
    bags = rng.randint(0, 2 * len(passengers))
    free = FREE_BAGS[user["membership"]][cabin] * len(passengers)
    insurance = rng.random() < 0.4
    nonfree = max(0, bags - free)
    total = sum(s["price"] for s in segments) * len(passengers) + BAG_FEE * nonfree
    total += INSURANCE_PER_PASSENGER * len(passengers) * insurance
    methods = [m for m in user["payment_methods"].values() if m["source"] != "certificate"]
    gift = [m for m in methods if m["source"] == "gift_card"]
    cards = [m for m in methods if m["source"] == "credit_card"]
    if gift and rng.random() < 0.3:
        part = min(total, rng.choice([25, 50, 100]))
        payments = [{"payment_id": gift[0]["id"], "amount": part}]
        if total > part:
            payments.append({"payment_id": rng.choice(cards)["id"], "amount": total - part})
    else:
        payments = [{"payment_id": rng.choice(cards)["id"], "amount": total}]
    reservation: dict[str, Any] = {
        "reservation_id": "".join(rng.choices(string.ascii_uppercase + string.digits, k=6)),
        "user_id": user["user_id"],
        "origin": origin,
        "destination": destination,
        "flight_type": flight_type,
        "cabin": cabin,
        "flights": segments,
        "passengers": passengers,
        "payment_history": payments,
        "created_at": created.replace(second=0).isoformat(),
        "total_baggages": bags,
        "nonfree_baggages": nonfree,
        "insurance": insurance,
        "status": "confirmed",
        "cancel_reason": None,
        "compensation_certificate": None,
    }
    if reservation["reservation_id"] in used:
        return None
    used.add(reservation["reservation_id"])
    if rng.random() < 0.07:
        reservation["status"] = "cancelled"
        reservation["cancel_reason"] = rng.choice(["change of plan", "health", "weather", "other"])
        reservation["payment_history"] += [{"payment_id": p["payment_id"], "amount": -p["amount"]} for p in payments]
    return reservation


def build(seed: int = SEED) -> dict[str, Any]:
    """The whole database as JSON data."""
    rng = random.Random(seed)
    used: set[str] = set()
    flights, fares = _flights(rng)
    by_origin: dict[str, list[str]] = {}
    for number, flight in flights.items():
        by_origin.setdefault(flight["origin"], []).append(number)
    users = _users(rng, used)
    user_ids = list(users)
    reservations: dict[str, Any] = {}
    while len(reservations) < RESERVATIONS:
        user = users[rng.choice(user_ids)]
        reservation = _reservation(rng, used, user, flights, by_origin, fares)
        if reservation is not None:
            reservations[reservation["reservation_id"]] = reservation
            user["reservations"].append(reservation["reservation_id"])
    airports = {code: {"iata": code, "city": city} for code, city in AIRPORTS}
    return {"airports": airports, "flights": flights, "users": users, "reservations": reservations}


def render(seed: int = SEED) -> str:
    return json.dumps(build(seed), indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    return make_db_main(argv, "mantra_env.domains.airline.make_db", __doc__, PATH, render)


if __name__ == "__main__":
    sys.exit(main())
