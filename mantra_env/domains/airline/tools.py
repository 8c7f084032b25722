"""The reservation desk's tools. Like a real airline backend, the write tools enforce what the data and the
manual's hard limits decide (a flight must be open for booking with enough seats, an itinerary must connect, at
most five passengers, at most one certificate and one gift card per booking, the fares and the free baggage
allowance must add up, basic economy flights cannot be changed, a cancellation must be allowed by the 24-hour,
airline-cancelled, business or insurance rule, one goodwill certificate per reservation) and refuse a violation
with a structured tool error, leaving the database unchanged (codes ``not_found``, ``illegal_state``,
``invalid_request``, ``unavailable``, ``insufficient_balance``, ``not_allowed``). Rules that the data cannot show
(identity, the customer's confirmation, asking before compensating, one change per confirmation) are for the
checks to grade.

Write tools get records from the copy-on-write tables by key (``self.db.reservations[reservation_id]``) and
change them in place, after every check has passed; read tools read through ``peek`` / ``find`` / ``scan``.
"""

from __future__ import annotations

import hashlib
import json
import string
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict

from mantra_env.domains.airline.database import (
    BAG_FEE,
    FREE_BAGS,
    INSURANCE_PER_PASSENGER,
    MAX_PASSENGERS,
    NOW,
    AirlineDatabase,
    Cabin,
    CancelReason,
    Flight,
    FlightDate,
    FlightType,
    Passenger,
    Payment,
    PaymentMethod,
    Reservation,
    Segment,
    User,
)
from mantra_env.domains.kit import calculate, read
from mantra_env.domains.overlay import find, scan
from mantra_env.toolkit import NOT_TARGET, ToolFailure, Toolkit, tool

DEPARTED = ("flying", "landed")
COVERED_BY_INSURANCE = ("health", "weather")


class FlightChoice(BaseModel):
    """One flight of an itinerary: its number and the date it flies."""

    model_config = ConfigDict(extra="forbid")
    flight_number: str
    date: str


class PaymentPart(BaseModel):
    """How much of the total one of the customer's payment methods pays (whole dollars)."""

    model_config = ConfigDict(extra="forbid")
    payment_id: str
    amount: float


def _route(flight: Flight) -> tuple[str, str]:
    return flight.origin, flight.destination


def _minutes(clock: str) -> int:
    return int(clock[:2]) * 60 + int(clock[3:])


def _dollars(amount: float, what: str) -> int:
    if amount != int(amount):
        raise ToolFailure(f"{what} is {amount}: amounts are whole dollars", code="invalid_request")
    return int(amount)


def _offer(flight: Flight, day: str, record: FlightDate) -> dict[str, Any]:
    return {
        "flight_number": flight.flight_number,
        "origin": flight.origin,
        "destination": flight.destination,
        "date": day,
        "scheduled_departure_time": flight.scheduled_departure_time,
        "scheduled_arrival_time": flight.scheduled_arrival_time,
        **record.model_dump(mode="json", exclude_none=True),
    }


def _segments(legs: Sequence[tuple[Flight, str, FlightDate]], fares: Sequence[int]) -> list[Segment]:
    return [
        Segment(flight_number=f.flight_number, origin=f.origin, destination=f.destination, date=day, price=fare)
        for (f, day, _), fare in zip(legs, fares, strict=True)
    ]


class AirlineToolkit(Toolkit):
    domain = "airline"

    def __init__(self, db: AirlineDatabase) -> None:
        self.db = db

    # -- lookups and invariants used by several tools ---------------------------------------------------
    def _flight_on(self, flight_number: str, day: str) -> tuple[Flight, FlightDate]:
        flight = read(self.db.flights, flight_number, "flight")
        record = flight.dates.get(day)
        if record is None:
            days = sorted(flight.dates)
            raise ToolFailure(
                f"flight {flight_number} has no date {day!r}: the schedule covers {days[0]} to "
                f"{days[-1]} (dates are YYYY-MM-DD)",
                code="not_found",
            )
        return flight, record

    def _confirmed(self, reservation_id: str) -> Reservation:
        reservation = read(self.db.reservations, reservation_id, "reservation")
        if reservation.status != "confirmed":
            raise ToolFailure(f"reservation {reservation_id} is {reservation.status}", code="illegal_state")
        return reservation

    def _method(self, user: User, payment_id: str, *, for_what: str = "") -> PaymentMethod:
        method = user.payment_methods.get(payment_id)
        if method is None:
            raise ToolFailure(f"user {user.user_id} has no payment method {payment_id!r}", code="not_found")
        if for_what and method.source == "certificate":
            raise ToolFailure(
                f"{for_what} is paid with a credit card or a gift card, not a travel certificate",
                code="invalid_request",
            )
        return method

    def _itinerary(
        self, choices: Sequence[FlightChoice], origin: str, destination: str, flight_type: FlightType
    ) -> list[tuple[Flight, str, FlightDate]]:
        """The flights chosen, checked to form a journey ``origin`` → ``destination`` (and back for a round trip),
        each leaving after the previous one lands."""
        if not choices:
            raise ToolFailure("flights is empty: give at least one flight", code="invalid_request")
        legs = []
        for choice in choices:
            flight, record = self._flight_on(choice.flight_number, choice.date)
            legs.append((flight, choice.date, record))
        stops = [origin]
        for position, (flight, day, _) in enumerate(legs):
            if flight.origin != stops[-1]:
                raise ToolFailure(
                    f"flight {flight.flight_number} leaves from {flight.origin}, not {stops[-1]}: "
                    "the flights must connect in order",
                    code="invalid_request",
                )
            if position:
                before, earlier = legs[position - 1][0], legs[position - 1][1]
                leaves, landed = _minutes(flight.scheduled_departure_time), _minutes(before.scheduled_arrival_time)
                if (day, leaves) < (earlier, landed):
                    raise ToolFailure(
                        f"flight {flight.flight_number} on {day} leaves before flight {before.flight_number} lands",
                        code="invalid_request",
                    )
            stops.append(flight.destination)
        end = destination if flight_type == "one_way" else origin
        if stops[-1] != end or (flight_type == "round_trip" and destination not in stops[1:-1]):
            trip = f"{origin} to {destination}" + (f" and back to {origin}" if flight_type == "round_trip" else "")
            raise ToolFailure(f"the flights go {' - '.join(stops)}, not {trip} ({flight_type})", code="invalid_request")
        return legs

    @staticmethod
    def _bookable(flight: Flight, day: str, record: FlightDate, cabin: Cabin, seats: int) -> int:
        """The fare of ``cabin`` on a flight open for booking with ``seats`` seats left in it."""
        if record.status != "available" or record.available_seats is None or record.prices is None:
            raise ToolFailure(
                f"flight {flight.flight_number} on {day} is {record.status}, not open for booking", code="unavailable"
            )
        left = getattr(record.available_seats, cabin)
        if left < seats:
            raise ToolFailure(
                f"flight {flight.flight_number} on {day} has {left} {cabin} seat(s) left, {seats} needed",
                code="unavailable",
            )
        return int(getattr(record.prices, cabin))

    def _seats(self, flight_number: str, day: str, cabin: Cabin, change: int) -> None:
        """Take (negative ``change``) or give back seats of a flight date still open for booking."""
        seats = self.db.flights[flight_number].dates[day].available_seats
        if seats is not None:
            setattr(seats, cabin, getattr(seats, cabin) + change)

    @staticmethod
    def _check_bags(user: User, cabin: Cabin, passengers: int, total: int, nonfree: int) -> None:
        free = FREE_BAGS[user.membership][cabin] * passengers
        if nonfree != max(0, total - free):
            raise ToolFailure(
                f"{total} bag(s) with {free} free ({user.membership} member, {cabin}, {passengers} "
                f"passenger(s)) makes {max(0, total - free)} non-free bag(s), not {nonfree}",
                code="invalid_request",
            )

    @staticmethod
    def _check_funds(method: PaymentMethod, amount: int) -> None:
        """Refuse charging ``amount`` to a gift card whose balance is smaller (credit cards have no balance)."""
        if method.source == "gift_card" and method.amount is not None and amount > method.amount:
            raise ToolFailure(
                f"gift card {method.id} has {method.amount} dollars left, less than {amount}",
                code="insufficient_balance",
            )

    @classmethod
    def _pay(cls, method: PaymentMethod, amount: int) -> None:
        """Charge ``amount`` (refund if negative) to a gift card's balance; credit cards have no balance."""
        cls._check_funds(method, amount)
        if method.source == "gift_card" and method.amount is not None:
            method.amount -= amount

    # -- read tools ------------------------------------------------------------------------------------
    @tool(kind="read")
    def get_user_details(self, user_id: str) -> dict[str, Any]:
        """Look up a customer's profile: name, date of birth, membership tier, payment methods (with gift card
        balances and certificate values), saved passengers and the ids of their reservations.

        Args:
            user_id: The user id, e.g. "mia_garcia_4516".
        """
        return read(self.db.users, user_id, "user").model_dump(mode="json")

    @tool(kind="read")
    def get_reservation_details(self, reservation_id: str) -> dict[str, Any]:
        """Look up a reservation: its user, trip, cabin, flights with the fares paid, passengers, payments,
        baggage, insurance, booking time and status.

        Args:
            reservation_id: The reservation id, six letters and digits, e.g. "8JX2WO".
        """
        return read(self.db.reservations, reservation_id, "reservation").model_dump(mode="json")

    @tool(kind="read")
    def list_all_airports(self) -> dict[str, str]:
        """List every airport the airline serves: IATA code -> city."""
        return {airport.iata: airport.city for airport in scan(self.db.airports)}

    @tool(kind="read")
    def search_direct_flight(self, origin: str, destination: str, date: str) -> list[dict[str, Any]]:
        """Search the non-stop flights between two airports on a date that are open for booking, with seats left
        and fares per cabin.

        Args:
            origin: The departure airport's IATA code, e.g. "JFK".
            destination: The arrival airport's IATA code, e.g. "SEA".
            date: The date, "YYYY-MM-DD", e.g. "2026-05-20".
        """
        for code in (origin, destination):
            read(self.db.airports, code, "airport")
        found = []
        for number in find(self.db.flights, _route, (origin, destination)):
            flight, record = self._flight_on(number, date)
            if record.status == "available":
                found.append(_offer(flight, date, record))
        return sorted(found, key=lambda offer: str(offer["scheduled_departure_time"]))

    @tool(kind="read")
    def search_onestop_flight(self, origin: str, destination: str, date: str) -> list[list[dict[str, Any]]]:
        """Search journeys with one connection between two airports on a date, both flights open for booking;
        the second flight leaves at least one hour after the first lands.

        Args:
            origin: The departure airport's IATA code, e.g. "JFK".
            destination: The final arrival airport's IATA code, e.g. "SEA".
            date: The date, "YYYY-MM-DD", e.g. "2026-05-20".
        """
        for code in (origin, destination):
            read(self.db.airports, code, "airport")
        journeys = []
        for airport in scan(self.db.airports):
            if airport.iata in (origin, destination):
                continue
            for first in self.search_direct_flight(origin, airport.iata, date):
                ready = _minutes(str(first["scheduled_arrival_time"])) + 60
                for second in self.search_direct_flight(airport.iata, destination, date):
                    if _minutes(str(second["scheduled_departure_time"])) >= ready:
                        journeys.append([first, second])
        return journeys

    @tool(kind="read")
    def get_flight_status(self, flight_number: str, date: str) -> dict[str, Any]:
        """Look up a flight on a date: its status (available, on time, delayed, flying, landed or cancelled),
        actual or estimated times, and seats and fares if it is open for booking.

        Args:
            flight_number: The flight number, e.g. "MA123".
            date: The date, "YYYY-MM-DD", e.g. "2026-05-15".
        """
        flight, record = self._flight_on(flight_number, date)
        return _offer(flight, date, record)

    @tool(kind="read")
    def calculate(self, expression: str) -> float:
        """Calculate an arithmetic expression (numbers, + - * / and parentheses), rounded to cents.

        Args:
            expression: The expression, e.g. "(120 + 340) * 2 + 50".
        """
        return calculate(expression)

    @tool(kind="read")
    def think(self, thought: str) -> str:
        """Write down a thought (reasoning, a plan); it obtains no information and changes nothing.

        Args:
            thought: The thought.
        """
        return ""

    # -- write tools -----------------------------------------------------------------------------------
    @tool(kind="write")
    def book_reservation(
        self,
        user_id: str,
        origin: str,
        destination: str,
        flight_type: FlightType,
        cabin: Cabin,
        flights: list[FlightChoice],
        passengers: list[Passenger],
        payment_methods: list[PaymentPart],
        total_baggages: int,
        nonfree_baggages: int,
        insurance: bool,
    ) -> dict[str, Any]:
        """Book a new reservation for a customer: every flight in one cabin for every passenger, paid in this one
        call. The payments must add up to the fares of all passengers, plus the travel insurance and the
        non-free bags.

        Args:
            user_id: The booking customer's user id, e.g. "mia_garcia_4516".
            origin: The trip's departure airport (IATA code), e.g. "JFK".
            destination: The trip's destination airport (IATA code), e.g. "SEA".
            flight_type: "one_way" or "round_trip" (a round trip comes back to the origin).
            cabin: "basic_economy", "economy" or "business", the same for every flight.
            flights: The flights in travel order, e.g. [{"flight_number": "MA123", "date": "2026-05-20"}].
            passengers: One to five passengers, e.g. [{"first_name": "Mia", "last_name": "Garcia",
                "dob": "1990-04-12"}].
            payment_methods: The customer's payment methods and what each pays, e.g. [{"payment_id":
                "credit_card_4421486", "amount": 540}]: any credit cards, at most one gift card and at most one
                travel certificate.
            total_baggages: Checked bags of all passengers together.
            nonfree_baggages: Checked bags beyond the free allowance, 50 dollars each.
            insurance: Whether to add travel insurance (30 dollars per passenger).
        """
        user = read(self.db.users, user_id, "user")
        if not 1 <= len(passengers) <= MAX_PASSENGERS:
            raise ToolFailure(
                f"{len(passengers)} passengers: a reservation has 1 to {MAX_PASSENGERS}", code="invalid_request"
            )
        for code in (origin, destination):
            read(self.db.airports, code, "airport")
        legs = self._itinerary(flights, origin, destination, flight_type)
        if len({(flight.flight_number, day) for flight, day, _ in legs}) != len(legs):
            raise ToolFailure("a flight is listed twice", code="invalid_request")
        fares = [self._bookable(flight, day, record, cabin, len(passengers)) for flight, day, record in legs]
        if total_baggages < 0 or nonfree_baggages < 0:
            raise ToolFailure("baggage counts cannot be negative", code="invalid_request")
        self._check_bags(user, cabin, len(passengers), total_baggages, nonfree_baggages)
        total = sum(fares) * len(passengers) + BAG_FEE * nonfree_baggages
        total += INSURANCE_PER_PASSENGER * len(passengers) * insurance
        parts = [
            (part.payment_id, _dollars(part.amount, f"the amount of {part.payment_id}")) for part in payment_methods
        ]
        methods = [self._method(user, payment_id) for payment_id, _ in parts]
        for source in ("gift_card", "certificate"):
            if sum(method.source == source for method in methods) > 1:
                raise ToolFailure(f"at most one {source.replace('_', ' ')} pays a booking", code="invalid_request")
        if len({payment_id for payment_id, _ in parts}) != len(parts) or any(amount <= 0 for _, amount in parts):
            raise ToolFailure("name each payment method once, each with a positive amount", code="invalid_request")
        if sum(amount for _, amount in parts) != total:
            raise ToolFailure(
                f"the payments add up to {sum(a for _, a in parts)} dollars, but the booking costs {total}",
                code="invalid_request",
            )
        for method, (_, amount) in zip(methods, parts, strict=True):
            if method.source != "credit_card" and method.amount is not None and amount > method.amount:
                raise ToolFailure(
                    f"{method.id} covers {method.amount} dollars, less than {amount}", code="insufficient_balance"
                )
        reservation_id = self._new_reservation_id(user_id, flights, passengers)
        owner = self.db.users[user_id]  # every check passed: now change records
        for method, (payment_id, amount) in zip(methods, parts, strict=True):
            if method.source == "certificate":
                del owner.payment_methods[payment_id]  # used once: the rest of its value is not kept
            else:
                self._pay(owner.payment_methods[payment_id], amount)
        for flight, day, _ in legs:
            self._seats(flight.flight_number, day, cabin, -len(passengers))
        reservation = Reservation(
            reservation_id=reservation_id,
            user_id=user_id,
            origin=origin,
            destination=destination,
            flight_type=flight_type,
            cabin=cabin,
            flights=_segments(legs, fares),
            passengers=[Passenger.model_validate(p.model_dump()) for p in passengers],
            payment_history=[Payment(payment_id=payment_id, amount=amount) for payment_id, amount in parts],
            created_at=NOW.isoformat(),
            total_baggages=total_baggages,
            nonfree_baggages=nonfree_baggages,
            insurance=insurance,
        )
        self.db.reservations[reservation_id] = reservation
        owner.reservations.append(reservation_id)
        return reservation.model_dump(mode="json")

    def _new_reservation_id(self, user_id: str, flights: list[FlightChoice], passengers: list[Passenger]) -> str:
        """An id derived from the booking (the same booking in the same episode state gets the same id)."""
        text = json.dumps([user_id, [f.model_dump() for f in flights], [p.model_dump() for p in passengers]])
        alphabet = string.ascii_uppercase + string.digits
        for attempt in range(1000):
            digest = hashlib.sha256(f"{text}#{attempt}".encode()).digest()
            candidate = "".join(alphabet[byte % len(alphabet)] for byte in digest[:6])
            if candidate not in self.db.reservations:
                return candidate
        raise ToolFailure("no free reservation id", code="illegal_state")  # pragma: no cover

    @tool(kind="write")
    def cancel_reservation(self, reservation_id: str, reason: CancelReason) -> dict[str, Any]:
        """Cancel a whole reservation that has not started, refunding every payment to the method it came from
        (gift cards and travel certificates at once, credit cards in 5 to 7 business days). Allowed when it was
        booked less than 24 hours ago, the airline cancelled one of its flights, its cabin is business, or it is
        insured and the reason is health or weather.

        Args:
            reservation_id: The reservation id, e.g. "8JX2WO".
            reason: The customer's reason: "change of plan", "airline cancelled flight", "health", "weather" or
                "other".
        """
        reservation = self._confirmed(reservation_id)
        statuses = [self._flight_on(s.flight_number, s.date)[1].status for s in reservation.flights]
        if any(status in DEPARTED for status in statuses):
            raise ToolFailure(
                f"a flight of reservation {reservation_id} has already departed: a trip under way "
                "cannot be cancelled here",
                code="illegal_state",
            )
        airline_cancelled = "cancelled" in statuses
        if reason == "airline cancelled flight" and not airline_cancelled:
            raise ToolFailure(f"no flight of reservation {reservation_id} is cancelled", code="invalid_request")
        recent = NOW - datetime.fromisoformat(reservation.created_at) <= timedelta(hours=24)
        insured = reservation.insurance and reason in COVERED_BY_INSURANCE
        if not (recent or airline_cancelled or reservation.cabin == "business" or insured):
            raise ToolFailure(
                f"reservation {reservation_id} ({reservation.cabin}, booked {reservation.created_at}, "
                f"{'insured' if reservation.insurance else 'not insured'}, reason {reason!r}) cannot "
                "be cancelled: none of the 24-hour, airline-cancelled, business or insurance rules "
                "applies",
                code="not_allowed",
            )
        reservation = self.db.reservations[reservation_id]
        owner = self.db.users[reservation.user_id]
        paid: dict[str, int] = {}
        for entry in reservation.payment_history:
            paid[entry.payment_id] = paid.get(entry.payment_id, 0) + entry.amount
        for payment_id, amount in paid.items():
            if amount <= 0:
                continue
            reservation.payment_history.append(Payment(payment_id=payment_id, amount=-amount))
            method = owner.payment_methods.get(payment_id)
            if method is not None and method.amount is not None:
                method.amount += amount
            elif method is None and payment_id.startswith("certificate_"):  # it was used up: it comes back
                owner.payment_methods[payment_id] = PaymentMethod(id=payment_id, source="certificate", amount=amount)
        for segment, status in zip(reservation.flights, statuses, strict=True):
            if status == "available":
                self._seats(segment.flight_number, segment.date, reservation.cabin, len(reservation.passengers))
        reservation.status, reservation.cancel_reason = "cancelled", reason
        return reservation.model_dump(mode="json")

    @tool(kind="write")
    def update_reservation_flights(
        self, reservation_id: str, cabin: Cabin, flights: list[FlightChoice], payment_id: Annotated[str, NOT_TARGET]
    ) -> dict[str, Any]:
        """Change the flights and/or the cabin of a reservation (same origin, destination and trip type; the
        cabin applies to every flight). Flights kept keep their fare unless the cabin changes; the fare
        difference for all passengers is charged to, or refunded to, the given credit card or gift card.

        Args:
            reservation_id: The reservation id, e.g. "8JX2WO".
            cabin: The cabin for the whole reservation: "basic_economy", "economy" or "business".
            flights: Every flight of the reservation after the change, in travel order, kept ones included,
                e.g. [{"flight_number": "MA123", "date": "2026-05-20"}].
            payment_id: The customer's credit card or gift card that pays or receives the difference.
        """
        reservation = self._confirmed(reservation_id)
        user = read(self.db.users, reservation.user_id, "user")
        method = self._method(user, payment_id, for_what="a change")
        legs = self._itinerary(flights, reservation.origin, reservation.destination, reservation.flight_type)
        old = {(s.flight_number, s.date): s for s in reservation.flights}
        new = [(flight.flight_number, day) for flight, day, _ in legs]
        if len(set(new)) != len(new):
            raise ToolFailure("a flight is listed twice", code="invalid_request")
        if set(new) == set(old) and cabin == reservation.cabin:
            raise ToolFailure(
                "these are the reservation's flights and cabin already: nothing to change", code="invalid_request"
            )
        if set(new) != set(old) and reservation.cabin == "basic_economy":
            raise ToolFailure(
                f"reservation {reservation_id} is basic economy: its flights cannot be changed", code="not_allowed"
            )
        for key in set(old) - set(new):
            if self._flight_on(*key)[1].status in DEPARTED:
                raise ToolFailure(
                    f"flight {key[0]} on {key[1]} has already departed and cannot be replaced", code="illegal_state"
                )
        passengers = len(reservation.passengers)
        fares = []
        for (flight, day, record), key in zip(legs, new, strict=True):
            kept = old.get(key)
            if kept is not None and cabin == reservation.cabin:
                fares.append(kept.price)
            else:
                if kept is not None and record.status in DEPARTED:
                    raise ToolFailure(
                        f"flight {key[0]} on {key[1]} has departed: the cabin cannot change now", code="illegal_state"
                    )
                fares.append(self._bookable(flight, day, record, cabin, passengers))  # new flight, or new cabin
        difference = (sum(fares) - sum(s.price for s in reservation.flights)) * passengers
        self._check_funds(method, difference)
        reservation = self.db.reservations[reservation_id]  # every check passed: now change records
        self._pay(self.db.users[reservation.user_id].payment_methods[payment_id], difference)
        if difference:
            reservation.payment_history.append(Payment(payment_id=payment_id, amount=difference))
        for key, segment in old.items():
            if key not in new or cabin != reservation.cabin:
                self._seats(segment.flight_number, segment.date, reservation.cabin, passengers)
        for flight, day, _ in legs:
            if (flight.flight_number, day) not in old or cabin != reservation.cabin:
                self._seats(flight.flight_number, day, cabin, -passengers)
        reservation.flights = _segments(legs, fares)
        reservation.cabin = cabin
        return reservation.model_dump(mode="json")

    @tool(kind="write")
    def update_reservation_passengers(self, reservation_id: str, passengers: list[Passenger]) -> dict[str, Any]:
        """Replace the details of a reservation's passengers (names, dates of birth); their number cannot change.

        Args:
            reservation_id: The reservation id, e.g. "8JX2WO".
            passengers: Every passenger after the change, as many as before, e.g. [{"first_name": "Mia",
                "last_name": "Garcia", "dob": "1990-04-12"}].
        """
        reservation = self._confirmed(reservation_id)
        if len(passengers) != len(reservation.passengers):
            raise ToolFailure(
                f"reservation {reservation_id} has {len(reservation.passengers)} passenger(s), not "
                f"{len(passengers)}: the number of passengers cannot change",
                code="not_allowed",
            )
        reservation = self.db.reservations[reservation_id]
        reservation.passengers = [Passenger.model_validate(p.model_dump()) for p in passengers]
        return reservation.model_dump(mode="json")

    @tool(kind="write")
    def update_reservation_baggages(
        self, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: Annotated[str, NOT_TARGET]
    ) -> dict[str, Any]:
        """Add checked bags to a reservation (bags cannot be removed); each new non-free bag costs 50 dollars,
        charged to the given credit card or gift card.

        Args:
            reservation_id: The reservation id, e.g. "8JX2WO".
            total_baggages: The reservation's checked bags after the change, all passengers together.
            nonfree_baggages: How many of those are beyond the free allowance.
            payment_id: The customer's credit card or gift card that pays for the new non-free bags.
        """
        reservation = self._confirmed(reservation_id)
        user = read(self.db.users, reservation.user_id, "user")
        method = self._method(user, payment_id, for_what="baggage")
        if total_baggages <= reservation.total_baggages:
            raise ToolFailure(
                f"reservation {reservation_id} has {reservation.total_baggages} bag(s): bags can only be added",
                code="not_allowed",
            )
        self._check_bags(user, reservation.cabin, len(reservation.passengers), total_baggages, nonfree_baggages)
        fee = BAG_FEE * (nonfree_baggages - reservation.nonfree_baggages)
        self._check_funds(method, fee)
        reservation = self.db.reservations[reservation_id]
        self._pay(self.db.users[reservation.user_id].payment_methods[payment_id], fee)
        if fee:
            reservation.payment_history.append(Payment(payment_id=payment_id, amount=fee))
        reservation.total_baggages, reservation.nonfree_baggages = total_baggages, nonfree_baggages
        return reservation.model_dump(mode="json")

    @tool(kind="write")
    def send_certificate(self, user_id: str, reservation_id: str, amount: int) -> dict[str, Any]:
        """Send a customer a travel certificate as a goodwill gesture for a cancelled or delayed flight of their
        reservation (at most one per reservation): 100 dollars per passenger for a cancelled flight, 50 for a
        delayed one; only for silver or gold members, insured reservations or business cabins.

        Args:
            user_id: The customer's user id, e.g. "mia_garcia_4516".
            reservation_id: The reservation whose flight was cancelled or delayed, e.g. "8JX2WO".
            amount: The certificate's value in dollars.
        """
        user = read(self.db.users, user_id, "user")
        reservation = read(self.db.reservations, reservation_id, "reservation")
        if reservation.user_id != user_id:
            raise ToolFailure(f"reservation {reservation_id} is not {user_id}'s", code="invalid_request")
        if reservation.compensation_certificate is not None:
            raise ToolFailure(
                f"reservation {reservation_id} was already compensated with {reservation.compensation_certificate}",
                code="illegal_state",
            )
        if user.membership == "regular" and not reservation.insurance and reservation.cabin != "business":
            raise ToolFailure(
                f"a regular member's uninsured {reservation.cabin} reservation is not compensated", code="not_allowed"
            )
        statuses = {self._flight_on(s.flight_number, s.date)[1].status for s in reservation.flights}
        per_passenger = 100 if "cancelled" in statuses else 50 if "delayed" in statuses else 0
        if not per_passenger:
            raise ToolFailure(f"no flight of reservation {reservation_id} is cancelled or delayed", code="not_allowed")
        due = per_passenger * len(reservation.passengers)
        if amount != due:
            raise ToolFailure(
                f"the certificate for reservation {reservation_id} is worth {due} dollars "
                f"({per_passenger} per passenger), not {amount}",
                code="invalid_request",
            )
        certificate = PaymentMethod(id=f"certificate_{reservation_id.lower()}", source="certificate", amount=due)
        self.db.users[user_id].payment_methods[certificate.id] = certificate
        self.db.reservations[reservation_id].compensation_certificate = certificate.id
        return certificate.model_dump(mode="json")

    @tool(kind="write")
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the conversation to a human agent, with a summary of the customer's problem. Use it only when the
        manual says so.

        Args:
            summary: What the customer needs and what was done so far.
        """
        if not summary.strip():
            raise ToolFailure("the summary is empty: say what the customer needs", code="invalid_request")
        return "transfer successful"
