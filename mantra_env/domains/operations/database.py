"""The operations desk's simulated database (loaded from db.json, one fresh copy per episode)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

RequestStatus = Literal["pending", "fulfilled", "ordered", "booked", "rejected"]
Region = Literal["NA", "LATAM", "EMEA", "APAC"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Item(_Record):
    id: str
    name: str
    category: str
    stock: int = Field(ge=0)
    unit_price: float = Field(ge=0)
    lead_time_days: int = Field(ge=0)
    refurbished_available: int = Field(default=0, ge=0)


class Employee(_Record):
    id: str
    name: str
    region: Region
    workstation_id: str | None = None
    manager_id: str | None = None
    office_address: str
    home_address: str
    home_is_residential: bool = True


class Workstation(_Record):
    id: str
    workstation_class: Literal["standard", "SSC"]
    os: str
    incompatible_software: list[str] = Field(default_factory=list)


class Software(_Record):
    id: str
    name: str
    approved: bool
    license_cost: float = Field(ge=0)


class TravelPolicy(_Record):
    global_limit: float = Field(gt=0)
    regional_limits: dict[str, float] = Field(default_factory=dict)


class Request(_Record):
    id: str
    kind: Literal["software", "travel", "hardware"]
    requester_id: str
    status: RequestStatus = "pending"
    notes: str = ""


class PurchaseOrder(_Record):
    id: str
    item_id: str
    quantity: int
    priority: Literal["priority", "standard"]
    request_id: str | None = None


class Shipment(_Record):
    item_id: str
    request_id: str | None
    signature_required: bool
    delivery_window: Literal["business_hours", "evening"]
    address: str


class OperationsDatabase(_Record):
    items: dict[str, Item]
    employees: dict[str, Employee]
    workstations: dict[str, Workstation]
    software: dict[str, Software]
    travel_policy: TravelPolicy
    requests: dict[str, Request]
    purchase_orders: list[PurchaseOrder] = Field(default_factory=list)
    picks: list[dict[str, str | int]] = Field(default_factory=list)
    fulfilments: list[dict[str, str | int]] = Field(default_factory=list)
    licenses: list[dict[str, str]] = Field(default_factory=list)
    bookings: list[dict[str, str | float]] = Field(default_factory=list)
    justifications: list[dict[str, str]] = Field(default_factory=list)
    escalations: list[dict[str, str]] = Field(default_factory=list)
    shipments: list[Shipment] = Field(default_factory=list)
