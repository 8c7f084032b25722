"""The airline's database: users, reservations and the flight schedule (loaded from db.json, written by make_db.py).

It is an :class:`~mantra_env.domains.overlay.OverlayDatabase`: every episode sees a copy-on-write view of one
validated base, so a reset costs nothing in the size of the data. Money amounts are whole dollars. The desk's
clock is :data:`NOW` (the manual states it): flights before it have flown or were cancelled, later ones are open
for booking.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mantra_env.domains.overlay import OverlayDatabase
from mantra_env.domains.retail.database import Address

NOW = datetime(2026, 5, 15, 15, 0)
"""The current date and time at the reservation desk (Eastern time), as the manual states it."""

Cabin = Literal["basic_economy", "economy", "business"]
Membership = Literal["regular", "silver", "gold"]
FlightType = Literal["one_way", "round_trip"]
FlightStatus = Literal["available", "on time", "delayed", "flying", "landed", "cancelled"]
PaymentSource = Literal["credit_card", "gift_card", "certificate"]
CancelReason = Literal["change of plan", "airline cancelled flight", "health", "weather", "other"]

MAX_PASSENGERS = 5
INSURANCE_PER_PASSENGER = 30
BAG_FEE = 50
"""Dollars per checked bag beyond the free allowance."""
FREE_BAGS: dict[Membership, dict[Cabin, int]] = {
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 3},
    "gold": {"basic_economy": 2, "economy": 3, "business": 3},
}
"""Free checked bags per passenger, by the booking user's membership tier and the reservation's cabin."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ByCabin(_Record):
    """One number per cabin (seats left, or the fare in dollars)."""

    basic_economy: int = Field(ge=0)
    economy: int = Field(ge=0)
    business: int = Field(ge=0)


class FlightDate(_Record):
    """A flight on one date: its status, and the seats and fares of each cabin while it is open for booking."""

    status: FlightStatus
    available_seats: ByCabin | None = None
    prices: ByCabin | None = None
    actual_departure_time: str | None = None
    """Landed or flying flights: when it left (ISO date and time)."""
    actual_arrival_time: str | None = None
    """Landed flights: when it arrived."""
    estimated_departure_time: str | None = None
    """Delayed flights: when it is now expected to leave."""
    estimated_arrival_time: str | None = None

    @model_validator(mode="after")
    def _bookable_has_seats_and_prices(self) -> FlightDate:
        if (self.status == "available") != (self.available_seats is not None and self.prices is not None):
            raise ValueError("a flight date open for booking (status available), and only one, lists seats and prices")
        return self


class Flight(_Record):
    flight_number: str
    origin: str
    destination: str
    scheduled_departure_time: str
    """Local time of day, "HH:MM"."""
    scheduled_arrival_time: str
    dates: dict[str, FlightDate]
    """ISO date ("2026-05-20") -> the flight on that date."""


class Airport(_Record):
    iata: str
    city: str


class Name(_Record):
    first_name: str
    last_name: str


class Passenger(_Record):
    first_name: str
    last_name: str
    dob: str
    """Date of birth, ISO ("1990-04-12")."""


class PaymentMethod(_Record):
    id: str
    source: PaymentSource
    brand: str | None = None
    """Credit cards only (visa, mastercard...)."""
    last_four: str | None = None
    """Credit cards only."""
    amount: int | None = Field(default=None, ge=0)
    """Gift cards: the balance left; travel certificates: their value (used once, whole)."""

    @model_validator(mode="after")
    def _fields_of_source(self) -> PaymentMethod:
        if (self.source == "credit_card") != (self.amount is None):
            raise ValueError("gift cards and certificates have an amount, and credit cards have none")
        if (self.source == "credit_card") != (self.brand is not None and self.last_four is not None):
            raise ValueError("a credit card has a brand and last four digits and no other payment method has them")
        return self


class User(_Record):
    user_id: str
    name: Name
    address: Address
    email: str
    dob: str
    membership: Membership
    payment_methods: dict[str, PaymentMethod]
    saved_passengers: list[Passenger] = Field(default_factory=list)
    reservations: list[str] = Field(default_factory=list)


class Segment(_Record):
    """One flight of a reservation, at the fare paid per passenger."""

    flight_number: str
    origin: str
    destination: str
    date: str
    price: int = Field(ge=0)


class Payment(_Record):
    payment_id: str
    amount: int
    """Positive: paid by the customer; negative: refunded to them."""


class Reservation(_Record):
    reservation_id: str
    user_id: str
    origin: str
    destination: str
    flight_type: FlightType
    cabin: Cabin
    flights: list[Segment] = Field(min_length=1)
    passengers: list[Passenger] = Field(min_length=1, max_length=5)
    payment_history: list[Payment] = Field(min_length=1)
    created_at: str
    """ISO date and time of the booking."""
    total_baggages: int = Field(ge=0)
    nonfree_baggages: int = Field(ge=0)
    insurance: bool
    status: Literal["confirmed", "cancelled"] = "confirmed"
    cancel_reason: CancelReason | None = None
    compensation_certificate: str | None = None
    """The id of the goodwill certificate sent for this reservation (at most one)."""


class AirlineDatabase(OverlayDatabase):
    airports: dict[str, Airport]
    flights: dict[str, Flight]
    users: dict[str, User]
    reservations: dict[str, Reservation]
