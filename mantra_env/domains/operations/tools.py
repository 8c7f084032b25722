"""The operations desk's tools. Tools execute what they are asked if the ids exist: the grader, not the tool,
judges compliance (creating a purchase order for an in-stock item succeeds here and fails a check)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, TypeVar

from mantra_env.domains.operations.database import (
    Employee,
    Item,
    OperationsDatabase,
    PurchaseOrder,
    Region,
    Request,
    Shipment,
)
from mantra_env.toolkit import FREE_TEXT, ToolFailure, Toolkit, tool

RejectReason = Literal["UNAPPROVED_SOFTWARE", "INCOMPATIBLE_WORKSTATION", "POLICY_VIOLATION", "MISSING_INFORMATION"]


T = TypeVar("T")


def _lookup(table: Mapping[str, T], key: str, label: str) -> T:
    """``table[key]``, or the not-found tool error the agent sees."""
    found = table.get(key)
    if found is None:
        raise ToolFailure(f"no {label} {key!r}", code="not_found")
    return found


class OperationsToolkit(Toolkit):
    domain = "operations"

    def __init__(self, db: OperationsDatabase) -> None:
        self.db = db

    # -- lookups used by several tools -----------------------------------------------------------------
    def _request(self, request_id: str) -> Request:
        return _lookup(self.db.requests, request_id, "request")

    def _open_request(self, request_id: str) -> Request:
        request = self._request(request_id)
        if request.status != "pending":
            raise ToolFailure(f"request {request_id} is already {request.status}", code="illegal_state")
        return request

    def _employee(self, employee_id: str) -> Employee:
        return _lookup(self.db.employees, employee_id, "employee")

    def _item(self, item_id: str) -> Item:
        return _lookup(self.db.items, item_id, "item")

    # -- read tools ------------------------------------------------------------------------------------
    @tool(kind="read")
    def get_request(self, request_id: str) -> dict[str, Any]:
        """Look up a request ticket: its kind, requester, status and notes.

        Args:
            request_id: Ticket id, e.g. "HW-2841".
        """
        return self._request(request_id).model_dump()

    @tool(kind="read")
    def get_employee(self, employee_id: str) -> dict[str, Any]:
        """Look up an employee: region, workstation, manager, office and home address.

        Args:
            employee_id: Employee id, e.g. "E1001".
        """
        return self._employee(employee_id).model_dump()

    @tool(kind="read")
    def find_employee(self, name: str) -> list[dict[str, str]]:
        """Find employees by (part of) their name.

        Args:
            name: Full or partial name, case-insensitive.
        """
        wanted = name.strip().lower()
        return [{"id": e.id, "name": e.name} for e in self.db.employees.values() if wanted and wanted in e.name.lower()]

    @tool(kind="read")
    def get_workstation(self, workstation_id: str) -> dict[str, Any]:
        """Look up a workstation's class (standard or SSC) and operating system.

        Args:
            workstation_id: Workstation id, e.g. "WS-204".
        """
        workstation = _lookup(self.db.workstations, workstation_id, "workstation")
        return workstation.model_dump(exclude={"incompatible_software"})

    @tool(kind="read")
    def search_software_catalog(self, query: str) -> list[dict[str, Any]]:
        """Search the software catalog by product name; shows whether each product is approved.

        Args:
            query: Product name or part of it.
        """
        wanted = query.strip().lower()
        return [s.model_dump() for s in self.db.software.values() if wanted and wanted in s.name.lower()]

    @tool(kind="read")
    def check_workstation_compatibility(self, workstation_id: str, software_id: str) -> dict[str, Any]:
        """Check whether a software product can run on a workstation.

        Args:
            workstation_id: Workstation id.
            software_id: Catalog id of the product, e.g. "SW-310".
        """
        workstation = _lookup(self.db.workstations, workstation_id, "workstation")
        _lookup(self.db.software, software_id, "software")
        return {"compatible": software_id not in workstation.incompatible_software}

    @tool(kind="read")
    def check_inventory(self, item_name: str) -> list[dict[str, Any]]:
        """Find hardware by name and show stock, unit price and supplier lead time.

        Args:
            item_name: Product name or part of it, e.g. "Dell UltraSharp U2723QE".
        """
        wanted = item_name.strip().lower()
        return [
            {k: v for k, v in item.model_dump().items() if k != "refurbished_available"}
            for item in self.db.items.values()
            if wanted and wanted in item.name.lower()
        ]

    @tool(kind="read")
    def check_legacy_portal(self, item_id: str) -> dict[str, Any]:
        """Check the legacy procurement portal for refurbished units of an item.

        Args:
            item_id: Catalog id, e.g. "HWC9305".
        """
        return {"item_id": item_id, "refurbished_available": self._item(item_id).refurbished_available}

    @tool(kind="read")
    def verify_travel_policy(
        self, employee_id: str, destination_region: Region, estimated_cost: float
    ) -> dict[str, Any]:
        """Verify a planned trip against the travel policy and return the global limit.

        Args:
            employee_id: The traveller.
            destination_region: NA, LATAM, EMEA or APAC.
            estimated_cost: Estimated total cost in USD.
        """
        self._employee(employee_id)
        limit = self.db.travel_policy.global_limit
        return {"verified": True, "global_limit": limit, "within_global_limit": estimated_cost <= limit}

    @tool(kind="read")
    def get_regional_override(self, region: Region) -> dict[str, Any]:
        """The regional travel limit that overrides the global one, if the region has one.

        Args:
            region: NA, LATAM, EMEA or APAC.
        """
        limit = self.db.travel_policy.regional_limits.get(region)
        return {"region": region, "has_override": limit is not None, "limit": limit}

    # -- write tools -----------------------------------------------------------------------------------
    @tool(kind="write")
    def request_license(self, software_id: str, employee_id: str, request_id: str) -> dict[str, str]:
        """Request a licence seat of a catalog product for an employee.

        Args:
            software_id: Catalog id of the product.
            employee_id: Who gets the licence.
            request_id: The ticket this serves.
        """
        self._open_request(request_id)
        self._employee(employee_id)
        _lookup(self.db.software, software_id, "software")
        self.db.licenses.append({"software_id": software_id, "employee_id": employee_id, "request_id": request_id})
        return {"license": f"LIC-{len(self.db.licenses):04d}"}

    @tool(kind="write")
    def assign_warehouse_picker(self, item_id: str, quantity: int) -> dict[str, str]:
        """Assign a warehouse picker to take units of an in-house item off the shelf.

        Args:
            item_id: Catalog id.
            quantity: Units to pick (at least 1).
        """
        item = self._item(item_id)
        if quantity < 1 or quantity > item.stock:
            raise ToolFailure(f"cannot pick {quantity} of {item_id}: {item.stock} in stock", code="illegal_state")
        self.db.picks.append({"item_id": item_id, "quantity": quantity})
        return {"pick": f"PICK-{len(self.db.picks):04d}"}

    @tool(kind="write")
    def fulfil_internally(
        self, request_id: str, item_id: str, quantity: int, source: Literal["warehouse", "refurbished"]
    ) -> dict[str, str]:
        """Fulfil a hardware request from the company's own stock (warehouse or refurbished units).

        Args:
            request_id: The ticket this serves.
            item_id: Catalog id.
            quantity: Units to hand over.
            source: "warehouse" for picked stock, "refurbished" for legacy-portal units.
        """
        self._open_request(request_id)
        item = self._item(item_id)
        available = item.stock if source == "warehouse" else item.refurbished_available
        if quantity < 1 or quantity > available:
            raise ToolFailure(f"only {available} {source} units of {item_id}", code="illegal_state")
        if source == "warehouse":
            item.stock -= quantity
        else:
            item.refurbished_available -= quantity
        self.db.fulfilments.append(
            {"request_id": request_id, "item_id": item_id, "quantity": quantity, "source": source}
        )
        return {"fulfilment": f"FUL-{len(self.db.fulfilments):04d}"}

    @tool(kind="write")
    def create_purchase_order(
        self, item_id: str, quantity: int, priority: Literal["priority", "standard"], request_id: str | None = None
    ) -> dict[str, str]:
        """Order units of an item from the supplier.

        Args:
            item_id: Catalog id.
            quantity: Units to order (at least 1).
            priority: "priority" for short lead times, "standard" otherwise.
            request_id: The ticket this serves, if any.
        """
        self._item(item_id)
        if quantity < 1:
            raise ToolFailure("quantity must be at least 1", code="invalid_arguments")
        order = PurchaseOrder(
            id=f"PO-{len(self.db.purchase_orders) + 1:05d}", item_id=item_id, quantity=quantity, priority=priority,
            request_id=request_id,
        )  # fmt: skip
        self.db.purchase_orders.append(order)
        return {"purchase_order": order.id}

    @tool(kind="write")
    def set_delivery_options(
        self,
        item_id: str,
        address: Annotated[str, FREE_TEXT],
        signature_required: bool,
        delivery_window: Literal["business_hours", "evening"],
        request_id: str | None = None,
    ) -> dict[str, str]:
        """Set how incoming hardware is delivered.

        Args:
            item_id: Catalog id of the delivered item.
            address: Delivery address.
            signature_required: Whether the courier must collect a signature.
            delivery_window: "business_hours" or "evening".
            request_id: The ticket this serves, if any.
        """
        self._item(item_id)
        if not address.strip():
            raise ToolFailure("address must not be empty", code="invalid_arguments")
        self.db.shipments.append(
            Shipment(
                item_id=item_id,
                request_id=request_id,
                signature_required=signature_required,
                delivery_window=delivery_window,
                address=address,
            )
        )
        return {"delivery": f"DLV-{len(self.db.shipments):04d}"}

    @tool(kind="write")
    def book_travel(self, employee_id: str, destination: Annotated[str, FREE_TEXT], depart_date: str,
                    return_date: str, cost: float, request_id: str) -> dict[str, str]:  # fmt: skip
        """Book a trip through the travel portal.

        Args:
            employee_id: The traveller.
            destination: City and country.
            depart_date: Departure date, YYYY-MM-DD.
            return_date: Return date, YYYY-MM-DD.
            cost: Total cost in USD.
            request_id: The ticket this serves.
        """
        self._open_request(request_id)
        self._employee(employee_id)
        if return_date < depart_date:
            raise ToolFailure("return_date is before depart_date", code="invalid_arguments")
        self.db.bookings.append({"employee_id": employee_id, "destination": destination, "cost": cost,
                                 "request_id": request_id})  # fmt: skip
        return {"booking": f"TRV-{len(self.db.bookings):04d}"}

    @tool(kind="write")
    def submit_budget_justification(self, request_id: str, justification: Annotated[str, FREE_TEXT]) -> dict[str, str]:
        """File a written justification for a trip over its budget limit.

        Args:
            request_id: The ticket this serves.
            justification: Why the extra cost is needed.
        """
        self._open_request(request_id)
        if len(justification.strip()) < 10:
            raise ToolFailure("a justification needs at least a sentence", code="invalid_arguments")
        self.db.justifications.append({"request_id": request_id, "justification": justification})
        return {"justification": f"JUS-{len(self.db.justifications):04d}"}

    @tool(kind="write")
    def escalate_to_manager(self, request_id: str, reason: Annotated[str, FREE_TEXT]) -> dict[str, str]:
        """Escalate a request to the requester's manager for approval.

        Args:
            request_id: The ticket.
            reason: What the manager must decide.
        """
        request = self._open_request(request_id)
        manager = self._employee(request.requester_id).manager_id or "operations-lead"
        self.db.escalations.append({"request_id": request_id, "manager_id": manager, "reason": reason})
        return {"escalated_to": manager}

    @tool(kind="write")
    def update_request_status(
        self, request_id: str, status: Literal["fulfilled", "ordered", "booked"]
    ) -> dict[str, str]:
        """Close a request as fulfilled, ordered or booked.

        Args:
            request_id: The ticket.
            status: "fulfilled", "ordered" or "booked".
        """
        self._open_request(request_id).status = status
        return {"request_id": request_id, "status": status}

    @tool(kind="write")
    def reject_request(self, request_id: str, reason_code: RejectReason) -> dict[str, str]:
        """Reject a request with one of the manual's reason codes.

        Args:
            request_id: The ticket.
            reason_code: UNAPPROVED_SOFTWARE, INCOMPATIBLE_WORKSTATION, POLICY_VIOLATION or MISSING_INFORMATION.
        """
        request = self._open_request(request_id)
        request.status = "rejected"
        request.notes = reason_code
        return {"request_id": request_id, "status": "rejected", "reason_code": reason_code}
