"""The mobile operator's database: customers, lines, plans, devices, bills and network outages (loaded from
db.json, written by make_db.py).

It is an :class:`~mantra_env.domains.overlay.OverlayDatabase`: every episode sees a copy-on-write view of one
validated base, so a reset costs nothing in the size of the data. Money is in dollars, rounded to cents; data in
gigabytes. Ids are unique across tables (a customer ``C…``, a line ``L…``, a device ``D…``, a bill ``B…``, a
payment method ``PM…``, an outage ``OUT…``, a plan ``plan_…``), so that a record names the others by their ids.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mantra_env.domains.overlay import OverlayDatabase

TODAY = "2026-11-23"
"""The date of every episode (what the data's "overdue", "active outage" and new suspensions are relative to)."""
LineStatus = Literal["active", "suspended", "closed"]
SuspensionReason = Literal["overdue_bill", "lost_or_stolen_device", "customer_request", "fraud_review"]
AgentSuspensionReason = Literal["lost_or_stolen_device", "customer_request"]
"""The reasons for which the agent may suspend a line (overdue and fraud suspensions come from other systems)."""
SimStatus = Literal["active", "missing", "pin_locked", "puk_locked", "not_detected"]
NetworkMode = Literal["5g_4g_3g", "4g_3g", "3g_only", "2g_only"]
ApnState = Literal["carrier_default", "custom", "missing"]
AppPermission = Literal["sms", "storage", "phone", "contacts"]
BillStatus = Literal["paid", "issued", "overdue"]
SimReplacementReason = Literal["lost_or_stolen_device", "damaged_sim", "sim_locked"]
PaymentKind = Literal["credit_card", "debit_card", "bank_account"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Address(_Record):
    street: str
    city: str
    state: str
    zip: str


class PaymentMethod(_Record):
    id: str
    kind: PaymentKind
    last_four: str
    expired: bool = False
    """An expired card is refused by every payment."""


class Customer(_Record):
    customer_id: str
    full_name: str
    date_of_birth: str
    """ISO date, e.g. "1987-04-12"."""
    email: str
    address: Address
    payment_methods: dict[str, PaymentMethod]
    line_ids: list[str] = Field(min_length=1)
    bill_ids: list[str] = Field(default_factory=list)


class Plan(_Record):
    plan_id: str
    name: str
    monthly_price: float = Field(ge=0)
    data_limit_gb: float = Field(gt=0)
    """High-speed data per billing cycle."""
    refuel_price_per_gb: float = Field(gt=0)
    max_refuel_gb: int = Field(ge=0)
    """The most data that can be refueled on a line in one billing cycle (0: refuel is not offered)."""
    roaming_allowed: bool
    roaming_price_per_day: float = Field(ge=0)
    mms_included: bool


class Line(_Record):
    line_id: str
    customer_id: str
    phone_number: str
    """E.g. "415-555-0134"."""
    status: LineStatus
    suspension_reason: SuspensionReason | None = None
    suspended_since: str | None = None
    plan_id: str
    device_id: str
    data_used_gb: float = Field(ge=0)
    data_refueled_gb: int = Field(default=0, ge=0)
    """Gigabytes added by refuels in the current billing cycle (on top of the plan's limit)."""
    cycle_end_date: str
    roaming_enabled: bool
    sim_replacement_pending: bool = False

    @model_validator(mode="after")
    def _suspension_fields(self) -> Line:
        if (self.status == "suspended") != (self.suspension_reason is not None and self.suspended_since is not None):
            raise ValueError("a suspended line has a suspension reason and date, and no other line has them")
        return self


class Device(_Record):
    """What the operator's remote diagnostics read from the handset of a line."""

    device_id: str
    line_id: str
    model: str
    os: Literal["android", "ios"]
    airplane_mode: bool
    sim_status: SimStatus
    mobile_data: bool
    data_roaming: bool
    """The handset's own data-roaming switch (the line's roaming is on the account)."""
    network_mode: NetworkMode
    apn: ApnState
    wifi_calling: bool
    data_saver: bool
    vpn_active: bool
    messaging_permissions: list[AppPermission]
    """Permissions granted to the default messaging app (MMS needs sms and storage)."""
    signal_bars: int = Field(ge=0, le=4)


class Bill(_Record):
    bill_id: str
    customer_id: str
    period: str
    """The billing month, e.g. "2026-10" (or "refuel" for a one-off data refuel charge)."""
    issue_date: str
    due_date: str
    amount: float = Field(ge=0)
    status: BillStatus
    paid_with: str | None = None
    """The payment method id that paid the bill (paid bills only)."""
    line_ids: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _payment_fields(self) -> Bill:
        if (self.status == "paid") != (self.paid_with is not None):
            raise ValueError("a paid bill names the payment method that paid it, and an unpaid one names none")
        return self


class Outage(_Record):
    outage_id: str
    zip_codes: list[str] = Field(min_length=1)
    kind: Literal["no_service", "data_only"]
    status: Literal["active", "resolved"]
    started: str
    expected_resolution: str


class TelecomDatabase(OverlayDatabase):
    customers: dict[str, Customer]
    lines: dict[str, Line]
    plans: dict[str, Plan]
    devices: dict[str, Device]
    bills: dict[str, Bill]
    outages: dict[str, Outage]
