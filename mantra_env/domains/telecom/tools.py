"""The mobile operator's tools. Like the operator's real back office, the write tools enforce what the data
forbids (a bill already paid or of another customer, an expired card, a line in the wrong state, a plan without
roaming or refuel, more refuel than the plan's cap, a handset the network cannot reach, a customer with overdue
bills changing plan or resuming a line) and refuse it with a structured tool error, leaving the database
unchanged (codes ``not_found``, ``illegal_state``, ``invalid_request``, ``not_eligible``, ``unpaid_bills``,
``payment_declined``, ``device_unreachable``). Rules of the manual that the data cannot show (identity
verification, the customer's confirmation, what the customer reports about the handset) are for the checks to
grade, not for the tools to refuse.

Write tools get records from the copy-on-write tables by key and change them in place; read tools and searches
read through :mod:`~mantra_env.domains.overlay`'s ``peek``, ``find`` and ``scan`` without copying.
"""

from __future__ import annotations

from typing import Annotated, Any

from mantra_env.domains.kit import lookup, money, read
from mantra_env.domains.overlay import find, peek, scan
from mantra_env.domains.telecom.database import (
    TODAY,
    AgentSuspensionReason,
    Bill,
    Customer,
    Line,
    PaymentMethod,
    Plan,
    SimReplacementReason,
    TelecomDatabase,
)
from mantra_env.toolkit import NOT_TARGET, ToolFailure, Toolkit, tool


def _phone_digits(line: Line) -> str:
    return _digits(line.phone_number)


def _digits(text: str) -> str:
    return "".join(character for character in text if character.isascii() and character.isdigit())


def _name_birth(customer: Customer) -> tuple[str, str]:
    return " ".join(customer.full_name.lower().split()), customer.date_of_birth


class TelecomToolkit(Toolkit):
    domain = "telecom"

    def __init__(self, db: TelecomDatabase) -> None:
        self.db = db

    # -- lookups and invariants used by several tools ---------------------------------------------------
    def _line(self, line_id: str, *states: str, action: str = "") -> Line:
        """The line to change; with ``states``, refuse a line in another state."""
        line = lookup(self.db.lines, line_id, "line")
        if states and line.status not in states:
            raise ToolFailure(f"line {line_id} is {line.status}; only {' or '.join(states)} lines can {action}",
                              code="illegal_state")  # fmt: skip
        return line

    def _overdue(self, customer_id: str) -> list[str]:
        customer = read(self.db.customers, customer_id, "customer")
        return [key for key in customer.bill_ids if peek(self.db.bills, key).status == "overdue"]

    def _no_overdue_bills(self, customer_id: str, action: str) -> None:
        overdue = self._overdue(customer_id)
        if overdue:
            raise ToolFailure(f"customer {customer_id} has overdue bills ({', '.join(overdue)}); they must be paid "
                              f"before {action}", code="unpaid_bills")  # fmt: skip

    def _payment_method(self, customer_id: str, payment_method_id: str) -> PaymentMethod:
        method = read(self.db.customers, customer_id, "customer").payment_methods.get(payment_method_id)
        if method is None:
            raise ToolFailure(f"customer {customer_id} has no payment method {payment_method_id!r}", code="not_found")
        if method.expired:
            raise ToolFailure(f"payment method {payment_method_id} (ending {method.last_four}) has expired",
                              code="payment_declined")  # fmt: skip
        return method

    def _plan(self, plan_id: str) -> Plan:
        return read(self.db.plans, plan_id, "plan")

    # -- read tools ------------------------------------------------------------------------------------
    @tool(kind="read")
    def find_customer_id_by_phone(self, phone_number: str) -> str:
        """Find the customer who holds a phone line, by the line's phone number.

        Args:
            phone_number: The phone number of one of the customer's lines, e.g. "916-555-0142" (any punctuation).
        """
        for line_id in find(self.db.lines, _phone_digits, _digits(phone_number)):
            return peek(self.db.lines, line_id).customer_id
        raise ToolFailure(f"no line with phone number {phone_number!r}", code="not_found")

    @tool(kind="read")
    def find_customer_id_by_name_and_birth_date(self, full_name: str, date_of_birth: str) -> str:
        """Find a customer by their full name and date of birth.

        Args:
            full_name: The customer's first and last name, e.g. "Nadia Keller".
            date_of_birth: The customer's date of birth as YYYY-MM-DD, e.g. "1984-06-30".
        """
        wanted = (" ".join(full_name.lower().split()), date_of_birth.strip())
        for customer_id in find(self.db.customers, _name_birth, wanted):
            return customer_id
        raise ToolFailure(f"no customer named {full_name!r} born on {date_of_birth!r}", code="not_found")

    @tool(kind="read")
    def get_customer_details(self, customer_id: str) -> dict[str, Any]:
        """Look up a customer: name, date of birth, email, address, payment methods on file, and the ids of their
        lines and bills.

        Args:
            customer_id: The customer id, e.g. "C482913".
        """
        return read(self.db.customers, customer_id, "customer").model_dump(mode="json")

    @tool(kind="read")
    def get_line_details(self, line_id: str) -> dict[str, Any]:
        """Look up a phone line: phone number, status (and suspension reason), plan, data used and refueled in the
        current billing cycle, account roaming, handset (device id) and any pending replacement SIM.

        Args:
            line_id: The line id, e.g. "L3920417".
        """
        return read(self.db.lines, line_id, "line").model_dump(mode="json")

    @tool(kind="read")
    def get_plan_details(self, plan_id: str) -> dict[str, Any]:
        """Look up a plan: monthly price, data per billing cycle, refuel price and cap, roaming and MMS.

        Args:
            plan_id: The plan id, e.g. "plan_flex_10".
        """
        return self._plan(plan_id).model_dump(mode="json")

    @tool(kind="read")
    def list_plans(self) -> list[dict[str, Any]]:
        """List every plan the operator offers, cheapest first."""
        plans = sorted(scan(self.db.plans), key=lambda plan: (plan.monthly_price, plan.plan_id))
        return [plan.model_dump(mode="json") for plan in plans]

    @tool(kind="read")
    def get_bill_details(self, bill_id: str) -> dict[str, Any]:
        """Look up a bill: billing period, issue and due dates, amount, status (paid, issued or overdue) and the
        lines it covers.

        Args:
            bill_id: The bill id, e.g. "B20417735".
        """
        return read(self.db.bills, bill_id, "bill").model_dump(mode="json")

    @tool(kind="read")
    def check_network_outages(self, zip_code: str) -> list[dict[str, Any]]:
        """List the network outages active today in an area (an empty list when there is none).

        Args:
            zip_code: The five-digit zip code of the area, e.g. "95814".
        """
        wanted = zip_code.strip()
        if not (len(wanted) == 5 and wanted.isascii() and wanted.isdigit()):
            raise ToolFailure(f"{zip_code!r} is not a five-digit zip code", code="invalid_request")
        return [
            outage.model_dump(mode="json")
            for outage in scan(self.db.outages)
            if outage.status == "active" and wanted in outage.zip_codes
        ]

    @tool(kind="read")
    def run_device_diagnostics(self, line_id: str) -> dict[str, Any]:
        """Read the handset of a line remotely: airplane mode, SIM status, mobile data and data-roaming switches,
        preferred network mode, APN settings, Wi-Fi calling, data saver, VPN, the messaging app's permissions
        and the signal strength. Changes nothing on the handset.

        Args:
            line_id: The line id, e.g. "L3920417".
        """
        line = read(self.db.lines, line_id, "line")
        if line.status == "closed":
            raise ToolFailure(f"line {line_id} is closed: it has no handset to diagnose", code="illegal_state")
        return read(self.db.devices, line.device_id, "device").model_dump(mode="json")

    # -- write tools -----------------------------------------------------------------------------------
    @tool(kind="write")
    def pay_bills(
        self, customer_id: str, bill_ids: list[str], payment_method_id: Annotated[str, NOT_TARGET]
    ) -> dict[str, Any]:
        """Pay unpaid (issued or overdue) bills of a customer in full, all in this one call, with one of the
        customer's payment methods on file. Paying does not resume a suspended line (see resume_line).

        Args:
            customer_id: The customer id, e.g. "C482913".
            bill_ids: The bills to pay, e.g. ["B20417735", "B77120934"].
            payment_method_id: The customer's payment method that pays, e.g. "PM203311".
        """
        customer = read(self.db.customers, customer_id, "customer")
        if not bill_ids:
            raise ToolFailure("bill_ids is empty: name at least one bill to pay", code="invalid_request")
        if len(set(bill_ids)) != len(bill_ids):
            raise ToolFailure("bill_ids names a bill twice: name each bill once", code="invalid_request")
        bills: list[Bill] = []
        for bill_id in bill_ids:
            bill = read(self.db.bills, bill_id, "bill")
            if bill.customer_id != customer_id:
                raise ToolFailure(f"bill {bill_id} is not a bill of customer {customer_id}", code="invalid_request")
            if bill.status == "paid":
                raise ToolFailure(f"bill {bill_id} is already paid", code="illegal_state")
            bills.append(bill)
        self._payment_method(customer.customer_id, payment_method_id)
        for bill in bills:
            changed = self.db.bills[bill.bill_id]
            changed.status, changed.paid_with = "paid", payment_method_id
        total = money(sum(bill.amount for bill in bills))
        return {"paid_bill_ids": list(bill_ids), "total": total, "payment_method_id": payment_method_id}

    @tool(kind="write")
    def suspend_line(self, line_id: str, reason: AgentSuspensionReason) -> dict[str, Any]:
        """Suspend an active line: no calls, messages or data until it is resumed. The monthly plan price is
        still billed.

        Args:
            line_id: The line id, e.g. "L3920417".
            reason: "lost_or_stolen_device" or "customer_request".
        """
        line = self._line(line_id, "active", action="be suspended")
        line.status, line.suspension_reason, line.suspended_since = "suspended", reason, TODAY
        return line.model_dump(mode="json")

    @tool(kind="write")
    def resume_line(self, line_id: str) -> dict[str, Any]:
        """Resume a suspended line. Refused while the customer has overdue bills, and for a line under fraud
        review (only the fraud team resumes those).

        Args:
            line_id: The line id, e.g. "L3920417".
        """
        line = self._line(line_id, "suspended", action="be resumed")
        if line.suspension_reason == "fraud_review":
            raise ToolFailure(f"line {line_id} is suspended for fraud review; only the fraud team can resume it",
                              code="not_eligible")  # fmt: skip
        self._no_overdue_bills(line.customer_id, "a line can be resumed")
        line.status, line.suspension_reason, line.suspended_since = "active", None, None
        return line.model_dump(mode="json")

    @tool(kind="write")
    def enable_roaming(self, line_id: str) -> dict[str, Any]:
        """Turn on international roaming on the account of an active line whose plan allows it (charged per day
        of use abroad at the plan's roaming price).

        Args:
            line_id: The line id, e.g. "L3920417".
        """
        line = self._line(line_id, "active", action="have roaming enabled")
        plan = self._plan(line.plan_id)
        if not plan.roaming_allowed:
            raise ToolFailure(f"the plan of line {line_id} ({plan.name}) does not allow roaming", code="not_eligible")
        if line.roaming_enabled:
            raise ToolFailure(f"roaming is already enabled on line {line_id}", code="illegal_state")
        line.roaming_enabled = True
        return line.model_dump(mode="json")

    @tool(kind="write")
    def disable_roaming(self, line_id: str) -> dict[str, Any]:
        """Turn off international roaming on the account of a line.

        Args:
            line_id: The line id, e.g. "L3920417".
        """
        line = self._line(line_id, "active", "suspended", action="have roaming disabled")
        if not line.roaming_enabled:
            raise ToolFailure(f"roaming is not enabled on line {line_id}", code="illegal_state")
        line.roaming_enabled = False
        return line.model_dump(mode="json")

    @tool(kind="write")
    def refuel_data(
        self, line_id: str, gigabytes: int, payment_method_id: Annotated[str, NOT_TARGET]
    ) -> dict[str, Any]:
        """Add high-speed data to an active line for the rest of the billing cycle, at the plan's refuel price per
        gigabyte, charged at once to one of the customer's payment methods (a paid refuel bill is recorded).

        Args:
            line_id: The line id, e.g. "L3920417".
            gigabytes: Whole gigabytes to add, at least 1; with what was refueled this cycle, at most the plan's
                max_refuel_gb.
            payment_method_id: The customer's payment method that pays, e.g. "PM203311".
        """
        line = self._line(line_id, "active", action="be refueled")
        plan = self._plan(line.plan_id)
        if plan.max_refuel_gb == 0:
            raise ToolFailure(f"the plan of line {line_id} ({plan.name}) offers no data refuel", code="not_eligible")
        if gigabytes < 1:
            raise ToolFailure(f"gigabytes is {gigabytes}: refuel at least 1 GB", code="invalid_request")
        left = plan.max_refuel_gb - line.data_refueled_gb
        if gigabytes > left:
            raise ToolFailure(f"line {line_id} can be refueled by at most {left} GB more this cycle ({plan.name} "
                              f"allows {plan.max_refuel_gb} GB per cycle)", code="invalid_request")  # fmt: skip
        self._payment_method(line.customer_id, payment_method_id)
        line.data_refueled_gb += gigabytes
        bill = Bill(bill_id=f"B{line_id[1:]}R{line.data_refueled_gb:02}", customer_id=line.customer_id,
                    period="refuel", issue_date=TODAY, due_date=TODAY,
                    amount=money(gigabytes * plan.refuel_price_per_gb), status="paid", paid_with=payment_method_id,
                    line_ids=[line_id])  # fmt: skip
        self.db.bills[bill.bill_id] = bill
        self.db.customers[line.customer_id].bill_ids.append(bill.bill_id)
        return {"line": line.model_dump(mode="json"), "charge": bill.model_dump(mode="json")}

    @tool(kind="write")
    def change_plan(self, line_id: str, plan_id: str) -> dict[str, Any]:
        """Move an active line to another plan, from today (refused while the customer has overdue bills). If
        the new plan does not allow roaming, the line's roaming is turned off.

        Args:
            line_id: The line id, e.g. "L3920417".
            plan_id: The new plan, e.g. "plan_plus_25" (see list_plans).
        """
        line = self._line(line_id, "active", action="change plan")
        plan = self._plan(plan_id)
        if plan_id == line.plan_id:
            raise ToolFailure(f"line {line_id} is already on {plan.name}", code="invalid_request")
        self._no_overdue_bills(line.customer_id, "a plan can be changed")
        line.plan_id = plan_id
        line.roaming_enabled = line.roaming_enabled and plan.roaming_allowed
        return line.model_dump(mode="json")

    @tool(kind="write")
    def push_network_settings(self, line_id: str) -> dict[str, Any]:
        """Send the operator's network settings (APN for data, MMSC for picture messages) to the handset of an
        active line, replacing custom or missing settings. The handset must be reachable: airplane mode off and
        the SIM active.

        Args:
            line_id: The line id, e.g. "L3920417".
        """
        line = self._line(line_id, "active", action="receive network settings")
        device = lookup(self.db.devices, line.device_id, "device")
        if device.airplane_mode or device.sim_status != "active":
            state = "in airplane mode" if device.airplane_mode else f"without an active SIM ({device.sim_status})"
            raise ToolFailure(f"the handset of line {line_id} is {state} and cannot be reached",
                              code="device_unreachable")  # fmt: skip
        device.apn = "carrier_default"
        return device.model_dump(mode="json")

    @tool(kind="write")
    def order_replacement_sim(self, line_id: str, reason: SimReplacementReason) -> dict[str, Any]:
        """Send a replacement SIM card for a line to the customer's address on file (free of charge; the old SIM
        stops working when the new one is activated).

        Args:
            line_id: The line id, e.g. "L3920417".
            reason: "lost_or_stolen_device", "damaged_sim" or "sim_locked".
        """
        line = self._line(line_id, "active", "suspended", action="get a replacement SIM")
        if line.sim_replacement_pending:
            raise ToolFailure(f"a replacement SIM for line {line_id} is already on its way", code="illegal_state")
        line.sim_replacement_pending = True
        address = read(self.db.customers, line.customer_id, "customer").address
        return {"line_id": line_id, "reason": reason, "ships_to": address.model_dump(mode="json")}

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
