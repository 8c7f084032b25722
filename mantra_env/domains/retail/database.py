"""The online shop's database: users, orders and products (loaded from db.json, written by make_db.py).

It is an :class:`~mantra_env.domains.overlay.OverlayDatabase`: every episode sees a copy-on-write view of one
validated base, so a reset costs nothing in the size of the data. Money amounts are in dollars, rounded to cents.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mantra_env.domains.overlay import OverlayDatabase

PaymentSource = Literal["credit_card", "paypal", "gift_card"]
OrderStatus = Literal[
    "pending", "pending_item_modified", "processed", "delivered", "cancelled", "return_requested", "exchange_requested"
]
CancelReason = Literal["no longer needed", "ordered by mistake"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Address(_Record):
    address1: str
    address2: str = ""
    city: str
    state: str
    country: str
    zip: str


class UserName(_Record):
    first_name: str
    last_name: str


class PaymentMethod(_Record):
    id: str
    source: PaymentSource
    brand: str | None = None
    """Credit cards only (visa, mastercard...)."""
    last_four: str | None = None
    """Credit cards only."""
    balance: float | None = Field(default=None, ge=0)
    """Gift cards only: the amount left on the card."""

    @model_validator(mode="after")
    def _fields_of_source(self) -> PaymentMethod:
        if (self.source == "gift_card") != (self.balance is not None):
            raise ValueError("a gift card has a balance and no other payment method has one")
        if (self.source == "credit_card") != (self.brand is not None and self.last_four is not None):
            raise ValueError("a credit card has a brand and last four digits and no other payment method has them")
        return self


class User(_Record):
    user_id: str
    name: UserName
    email: str
    address: Address
    payment_methods: dict[str, PaymentMethod]
    orders: list[str] = Field(default_factory=list)


class Variant(_Record):
    item_id: str
    options: dict[str, str]
    available: bool
    price: float = Field(ge=0)


class Product(_Record):
    product_id: str
    name: str
    variants: dict[str, Variant]


class OrderItem(_Record):
    item_id: str
    product_id: str
    name: str
    options: dict[str, str]
    price: float = Field(ge=0)


class Fulfillment(_Record):
    tracking_ids: list[str]
    item_ids: list[str]


class Payment(_Record):
    transaction_type: Literal["payment", "refund"]
    amount: float = Field(ge=0)
    payment_method_id: str


class Order(_Record):
    order_id: str
    user_id: str
    address: Address
    items: list[OrderItem] = Field(min_length=1)
    fulfillments: list[Fulfillment] = Field(default_factory=list)
    status: OrderStatus
    payment_history: list[Payment] = Field(min_length=1)
    cancel_reason: CancelReason | None = None
    return_items: list[str] = Field(default_factory=list)
    return_payment_method_id: str | None = None
    exchange_items: list[str] = Field(default_factory=list)
    exchange_new_items: list[str] = Field(default_factory=list)
    exchange_payment_method_id: str | None = None
    exchange_price_difference: float | None = None


class RetailDatabase(OverlayDatabase):
    users: dict[str, User]
    orders: dict[str, Order]
    products: dict[str, Product]
