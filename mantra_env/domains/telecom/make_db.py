"""Write the telecom database (``db.json``) from a fixed seed: ``python -m mantra_env.domains.telecom.make_db``.

The data is generated, not hand-written: the plans, names, cities and handset models below are the raw material,
a seeded ``random.Random`` combines them. Faults are planted at realistic rates (a handset in airplane mode, a
locked SIM, a wrong APN, a line over its data limit, overdue bills and the suspensions they cause) so that every
branch of the manual's diagnosis trees has lines to try it on. ``--check`` fails if the committed file differs
from what this script writes (a test runs the same comparison).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

from mantra_env.domains.kit import make_db_main
from mantra_env.domains.telecom.database import TODAY

SEED = 20261123
CUSTOMERS = 400
OUTAGES = 14
PATH = Path(__file__).parent / "db.json"
CYCLE_END = "2026-11-30"
MONTHS = ["2026-07", "2026-08", "2026-09", "2026-10"]  # billed months; 2026-10's bill is due after today

FIRST_NAMES = """
Aaliyah Abdul Adriana Aiden Akira Alana Amir Anika Anton Aria Astrid Beatrice Bruno Caleb Carmen Cecilia Dante
Darius Delia Eamon Elif Elsa Emil Esther Farah Felix Gemma Gideon Hamza Helena Ines Isaac Jade Joaquin Jonas
Kamala Keanu Kofi Laila Lars Leila Lorenzo Magnus Malia Marco Marisol Mateo Nadia Nico Nina Oscar Paloma Pedro
Quinn Rania Reza Rhea Rowan Selma Soren Talia Tomas Uma Vera Victor Wanda Xavier Yasmin Yuki Zara Zeke""".split()  # noqa: SIM905 - a block of words reads better
LAST_NAMES = """
Abbott Acosta Bakker Banerjee Barros Becker Bianchi Bishop Blanco Castillo Chavez Demir Dunn Eriksen Farouk
Ferreira Fleming Fox Hahn Haddad Horvat Ibarra Jansen Kaur Keller Khan Kim Lambert Larsen Lindqvist Mahmoud
Medina Mendes Molina Murphy Nash Novak Obi Ortega Park Pereira Quinn Reyes Romero Ruiz Salazar Sato Sharma
Sousa Stone Tan Tanaka Torres Vargas Vega Walsh Weber Yilmaz Zhou""".split()  # noqa: SIM905 - a block of words reads better
CITIES = [  # city, state, area code, first digits of the zip codes
    ("Sacramento", "CA", "916", "958"), ("Oakland", "CA", "510", "946"), ("Fresno", "CA", "559", "937"),
    ("Tucson", "AZ", "520", "857"), ("Albuquerque", "NM", "505", "871"), ("El Paso", "TX", "915", "799"),
    ("San Antonio", "TX", "210", "782"), ("Tulsa", "OK", "918", "741"), ("Omaha", "NE", "402", "681"),
    ("St. Louis", "MO", "314", "631"), ("Indianapolis", "IN", "317", "462"), ("Cleveland", "OH", "216", "441"),
    ("Louisville", "KY", "502", "402"), ("Memphis", "TN", "901", "381"), ("New Orleans", "LA", "504", "701"),
    ("Tampa", "FL", "813", "336"), ("Jacksonville", "FL", "904", "322"), ("Richmond", "VA", "804", "232"),
    ("Buffalo", "NY", "716", "142"), ("Hartford", "CT", "860", "061"), ("Providence", "RI", "401", "029"),
    ("Madison", "WI", "608", "537"), ("Des Moines", "IA", "515", "503"), ("Spokane", "WA", "509", "992"),
]  # fmt: skip
STREETS = """
Alder Aspen Bay Brook Canyon Cherry Clover Cypress Dogwood Fairview Garden Grove Hawthorn Hickory Laurel
Magnolia Mesa Mulberry Orchard Poplar Prairie Quarry Redwood Sage Sequoia Summit Sycamore Tamarack Vista""".split()  # noqa: SIM905 - a block of words reads better
STREET_KINDS = ["Street", "Avenue", "Road", "Lane", "Drive", "Court", "Terrace", "Way"]
HANDSETS = [  # model, os
    ("Pixel 8", "android"), ("Pixel 7a", "android"), ("Galaxy S23", "android"), ("Galaxy A54", "android"),
    ("Moto G Power", "android"), ("OnePlus 11", "android"), ("Xperia 10 V", "android"), ("iPhone 15", "ios"),
    ("iPhone 14", "ios"), ("iPhone 13 mini", "ios"), ("iPhone SE", "ios"), ("Galaxy Tab S9", "android"),
]  # fmt: skip
# id, name, monthly price, GB per cycle, refuel $/GB, max refuel GB per cycle, roaming allowed, roaming $/day, MMS
PLANS = [
    ("plan_basic_2", "Basic 2 GB", 20.0, 2.0, 5.0, 2, False, 0.0, False),
    ("plan_senior_3", "Senior 3 GB", 15.0, 3.0, 5.0, 2, False, 0.0, True),
    ("plan_start_5", "Start 5 GB", 30.0, 5.0, 4.0, 3, False, 0.0, True),
    ("plan_flex_10", "Flex 10 GB", 40.0, 10.0, 3.0, 5, True, 10.0, True),
    ("plan_travel_15", "Travel 15 GB", 60.0, 15.0, 3.0, 10, True, 0.0, True),
    ("plan_tablet_20", "Tablet 20 GB", 25.0, 20.0, 2.5, 10, True, 10.0, False),
    ("plan_plus_25", "Plus 25 GB", 55.0, 25.0, 2.5, 10, True, 8.0, True),
    ("plan_max_50", "Max 50 GB", 70.0, 50.0, 2.0, 15, True, 5.0, True),
    ("plan_premium_100", "Premium 100 GB", 85.0, 100.0, 2.0, 20, True, 0.0, True),
]  # fmt: skip
PLAN_WEIGHTS = [8, 6, 14, 20, 6, 4, 18, 14, 10]
PERMISSIONS = ["contacts", "phone", "sms", "storage"]


class _Ids:
    """Unique ids with a prefix and a fixed number of random digits (unique across every table)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng, self.used = rng, set[str]()

    def new(self, prefix: str, digits: int) -> str:
        while True:
            candidate = prefix + "".join(self.rng.choice("0123456789") for _ in range(digits))
            if candidate not in self.used:
                self.used.add(candidate)
                return candidate


def _plans() -> dict[str, Any]:
    fields = ["plan_id", "name", "monthly_price", "data_limit_gb", "refuel_price_per_gb", "max_refuel_gb",
              "roaming_allowed", "roaming_price_per_day", "mms_included"]  # fmt: skip
    return {str(plan[0]): dict(zip(fields, plan, strict=True)) for plan in PLANS}


def _chance(rng: random.Random, probability: float) -> bool:
    return rng.random() < probability


def _device(rng: random.Random, ids: _Ids, line_id: str, tablet: bool) -> dict[str, Any]:
    model, system = ("Galaxy Tab S9", "android") if tablet else rng.choice(HANDSETS[:-1])
    sim = rng.choices(["active", "missing", "pin_locked", "puk_locked", "not_detected"], [86, 3, 4, 3, 4])[0]
    airplane = _chance(rng, 0.07)
    granted = sorted(p for p in PERMISSIONS if not _chance(rng, 0.1 if p in ("sms", "storage") else 0.3))
    return {
        "device_id": ids.new("D", 7), "line_id": line_id, "model": model, "os": system, "airplane_mode": airplane,
        "sim_status": sim, "mobile_data": not _chance(rng, 0.1), "data_roaming": _chance(rng, 0.4),
        "network_mode": rng.choices(["5g_4g_3g", "4g_3g", "3g_only", "2g_only"], [70, 18, 6, 6])[0],
        "apn": rng.choices(["carrier_default", "custom", "missing"], [86, 8, 6])[0],
        "wifi_calling": _chance(rng, 0.3), "data_saver": _chance(rng, 0.15), "vpn_active": _chance(rng, 0.1),
        "messaging_permissions": granted,
        "signal_bars": 0 if airplane or sim != "active" else rng.randint(1, 4),
    }  # fmt: skip


def _line(
    rng: random.Random, ids: _Ids, customer_id: str, area: str, phones: set[str], plans: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    line_id = ids.new("L", 7)
    while (phone := f"{area}-555-{rng.randint(0, 9999):04}") in phones:
        pass
    phones.add(phone)
    plan_id = rng.choices([p[0] for p in PLANS], PLAN_WEIGHTS)[0]
    plan = plans[plan_id]
    device = _device(rng, ids, line_id, tablet=plan_id == "plan_tablet_20")
    limit = plan["data_limit_gb"]
    refueled = rng.randint(1, plan["max_refuel_gb"]) if plan["max_refuel_gb"] and _chance(rng, 0.1) else 0
    at_limit = _chance(rng, 0.18)  # data is stopped until a refuel or the next cycle
    used = limit + refueled if at_limit else round(rng.uniform(0, 0.95) * (limit + refueled), 2)
    line = {
        "line_id": line_id, "customer_id": customer_id, "phone_number": phone, "status": "active",
        "suspension_reason": None, "suspended_since": None, "plan_id": plan_id, "device_id": device["device_id"],
        "data_used_gb": float(used), "data_refueled_gb": refueled, "cycle_end_date": CYCLE_END,
        "roaming_enabled": plan["roaming_allowed"] and _chance(rng, 0.2), "sim_replacement_pending": False,
    }  # fmt: skip
    return line, device


def _bill(ids: _Ids, customer_id: str, month: str, amount: float, lines: list[str]) -> dict[str, Any]:
    year, number = (int(part) for part in month.split("-"))
    issued = f"{year + number // 12}-{number % 12 + 1:02}-01"
    return {"bill_id": ids.new("B", 8), "customer_id": customer_id, "period": month, "issue_date": issued,
            "due_date": issued[:8] + "25", "amount": round(amount, 2), "status": "paid", "paid_with": None,
            "line_ids": lines}  # fmt: skip


def _customer(
    rng: random.Random, ids: _Ids, phones: set[str], plans: dict[str, Any]
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """A customer with their lines, devices and the bills of the billed months (some unpaid, with the
    suspensions an overdue bill brings)."""
    customer_id = ids.new("C", 6)
    first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
    city, state, area, zip_prefix = rng.choice(CITIES)
    methods = {}
    for _ in range(rng.choices([1, 2, 3], [50, 38, 12])[0]):
        method_id = ids.new("PM", 6)
        methods[method_id] = {"id": method_id, "kind": rng.choice(["credit_card", "debit_card", "bank_account"]),
                              "last_four": f"{rng.randint(0, 9999):04}", "expired": _chance(rng, 0.08)}  # fmt: skip
    count = rng.choices([1, 2, 3, 4], [48, 30, 15, 7])[0]
    pairs = [_line(rng, ids, customer_id, area, phones, plans) for _ in range(count)]
    lines, devices = [line for line, _ in pairs], [device for _, device in pairs]
    line_ids = [line["line_id"] for line in lines]
    monthly = sum(plans[line["plan_id"]]["monthly_price"] for line in lines)
    usable = [m for m in methods.values() if not m["expired"]] or list(methods.values())
    bills = []
    late = rng.choices([0, 1, 2, 3], [80, 11, 6, 3])[0]  # how many of the last billed months are unpaid
    for position, month in enumerate(MONTHS):
        bill = _bill(ids, customer_id, month, monthly + rng.choice([0, 0, 0, 4.99, 9.99, 12.5]), line_ids)
        unpaid = position >= len(MONTHS) - late or (month == MONTHS[-1] and _chance(rng, 0.5))
        if unpaid:
            bill["status"] = "issued" if bill["due_date"] >= TODAY else "overdue"
        else:
            bill["paid_with"] = rng.choice(usable)["id"]
        bills.append(bill)
    overdue = [bill for bill in bills if bill["status"] == "overdue"]
    for line in lines:
        if overdue and (len(overdue) >= 2 or _chance(rng, 0.3)):
            _suspend(line, "overdue_bill", overdue[0]["due_date"][:8] + "28")
        elif _chance(rng, 0.08):
            reason = rng.choices(["lost_or_stolen_device", "customer_request", "fraud_review"], [5, 4, 1])[0]
            _suspend(line, reason, f"2026-{rng.randint(8, 11):02}-{rng.randint(1, 20):02}")
        elif _chance(rng, 0.03):
            line["status"], line["roaming_enabled"] = "closed", False
        line["sim_replacement_pending"] = line["suspension_reason"] == "lost_or_stolen_device" and _chance(rng, 0.4)
    customer = {
        "customer_id": customer_id, "full_name": f"{first} {last}",
        "date_of_birth": f"{rng.randint(1948, 2005)}-{rng.randint(1, 12):02}-{rng.randint(1, 28):02}",
        "email": f"{first.lower()}.{last.lower()}{rng.randint(1, 99)}@example.com",
        "address": {"street": f"{rng.randint(10, 9999)} {rng.choice(STREETS)} {rng.choice(STREET_KINDS)}",
                    "city": city, "state": state, "zip": f"{zip_prefix}{rng.randint(0, 99):02}"},
        "payment_methods": methods, "line_ids": line_ids, "bill_ids": [bill["bill_id"] for bill in bills],
    }  # fmt: skip
    return customer, lines, devices, bills


def _suspend(line: dict[str, Any], reason: str, since: str) -> None:
    line["status"], line["suspension_reason"], line["suspended_since"] = "suspended", reason, since


def _outages(rng: random.Random, ids: _Ids, customers: dict[str, Any]) -> dict[str, Any]:
    zips = sorted({customer["address"]["zip"] for customer in customers.values()})
    outages = {}
    for number in range(OUTAGES):
        outage_id = ids.new("OUT", 4)
        active = number % 2 == 0
        day = rng.randint(18, 23) if active else rng.randint(1, 15)
        outages[outage_id] = {
            "outage_id": outage_id, "zip_codes": sorted(rng.sample(zips, rng.randint(1, 3))),
            "kind": rng.choice(["no_service", "data_only"]), "status": "active" if active else "resolved",
            "started": f"2026-11-{day:02}", "expected_resolution": f"2026-11-{min(day + rng.randint(1, 4), 28):02}",
        }  # fmt: skip
    return outages


def _no_signal_in_outages(outages: dict[str, Any], customers: dict[str, Any], lines: dict[str, Any],
                          devices: dict[str, Any]) -> None:  # fmt: skip
    """A handset in an area with an active no-service outage shows no signal."""
    active = [o for o in outages.values() if o["status"] == "active" and o["kind"] == "no_service"]
    dark = {zip_code for outage in active for zip_code in outage["zip_codes"]}
    for line in lines.values():
        if customers[line["customer_id"]]["address"]["zip"] in dark:
            devices[line["device_id"]]["signal_bars"] = 0


def build(seed: int = SEED) -> dict[str, Any]:
    """The whole database as JSON data."""
    rng = random.Random(seed)
    ids = _Ids(rng)
    plans = _plans()
    phones: set[str] = set()
    customers: dict[str, Any] = {}
    lines: dict[str, Any] = {}
    devices: dict[str, Any] = {}
    bills: dict[str, Any] = {}
    for _ in range(CUSTOMERS):
        customer, its_lines, its_devices, its_bills = _customer(rng, ids, phones, plans)
        customers[customer["customer_id"]] = customer
        lines.update((line["line_id"], line) for line in its_lines)
        devices.update((device["device_id"], device) for device in its_devices)
        bills.update((bill["bill_id"], bill) for bill in its_bills)
    outages = _outages(rng, ids, customers)
    _no_signal_in_outages(outages, customers, lines, devices)
    return {"customers": customers, "lines": lines, "plans": plans, "devices": devices, "bills": bills,
            "outages": outages}  # fmt: skip


def render(seed: int = SEED) -> str:
    return json.dumps(build(seed), indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    return make_db_main(argv, "mantra_env.domains.telecom.make_db", __doc__, PATH, render)


if __name__ == "__main__":
    sys.exit(main())
