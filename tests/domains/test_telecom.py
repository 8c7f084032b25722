"""The telecom domain: every tool (valid and invalid calls, the invariants it enforces), resets that leave the base
database untouched (also over random tool sequences), the database generator, the manual (and its plan table
against the data), the domain wiring."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

import mantra_env  # noqa: F401 - registers the gymnasium ids
from mantra_env.case import Case, CaseCheck, Scenario, Suite, SuiteManifest
from mantra_env.domains import DomainError, domain_names, find_suite, load_domain
from mantra_env.domains.__main__ import main as export_main
from mantra_env.domains.telecom import make_db
from mantra_env.domains.telecom.database import TODAY, TelecomDatabase
from mantra_env.domains.telecom.tools import TelecomToolkit
from mantra_env.env import MantraEnv
from tests.domains.helpers_toolkit import (
    assert_a_reset_gives_the_base_back,
    assert_manual_names_its_tools,
    changed_records,
    ok,
    refused,
    tables,
)

DOMAIN = load_domain("telecom")
BASE: dict[str, Any] = DOMAIN.base_data
CUSTOMERS, LINES, DEVICES, BILLS, PLANS = (BASE[name] for name in ("customers", "lines", "devices", "bills", "plans"))


def fresh(patch: list[dict[str, Any]] | None = None) -> TelecomToolkit:
    toolkit = DOMAIN.toolkit(DOMAIN.fresh_database(patch))
    assert isinstance(toolkit, TelecomToolkit)
    return toolkit


# -- records of the base database with the properties a test needs ------------------------------------------
def first(found: Iterator[dict[str, Any]]) -> dict[str, Any]:
    record = next(found, None)
    assert record is not None, "the seeded database has no such record"
    return record


def lines(where: Callable[[dict[str, Any]], bool]) -> Iterator[dict[str, Any]]:
    return (line for line in LINES.values() if where(line))


def device(line: dict[str, Any]) -> dict[str, Any]:
    return DEVICES[line["device_id"]]  # type: ignore[no-any-return]


def customer(line_or_bill: dict[str, Any]) -> dict[str, Any]:
    return CUSTOMERS[line_or_bill["customer_id"]]  # type: ignore[no-any-return]


def overdue(customer_record: dict[str, Any]) -> list[str]:
    return [key for key in customer_record["bill_ids"] if BILLS[key]["status"] == "overdue"]


def method(customer_record: dict[str, Any], expired: bool = False) -> str | None:
    return next((m["id"] for m in customer_record["payment_methods"].values() if m["expired"] == expired), None)


def plan(line: dict[str, Any]) -> dict[str, Any]:
    return PLANS[line["plan_id"]]  # type: ignore[no-any-return]


def active(line: dict[str, Any]) -> bool:
    return line["status"] == "active" and not overdue(customer(line)) and method(customer(line)) is not None


OVERDUE_SUSPENDED = first(
    lines(lambda li: li["suspension_reason"] == "overdue_bill" and method(customer(li)) is not None)
)
OWES = customer(OVERDUE_SUSPENDED)
OWES_ACTIVE = first(lines(lambda li: li["status"] == "active" and bool(overdue(customer(li)))))
FRAUD = first(lines(lambda li: li["suspension_reason"] == "fraud_review"))
LOST = first(lines(lambda li: li["suspension_reason"] == "lost_or_stolen_device" and not overdue(customer(li))))
CLOSED = first(lines(lambda li: li["status"] == "closed"))
ROAMER = first(lines(lambda li: active(li) and plan(li)["roaming_allowed"] and not li["roaming_enabled"]))
NO_ROAMING_PLAN = first(lines(lambda li: active(li) and not plan(li)["roaming_allowed"]))
ROAMING_ON = first(lines(lambda li: active(li) and li["roaming_enabled"]))
REFUELABLE = first(lines(lambda li: active(li) and li["data_refueled_gb"] == 0 and li is not ROAMER))
FIXABLE_APN = first(
    lines(
        lambda li: (
            li["status"] == "active"
            and device(li)["apn"] != "carrier_default"
            and not device(li)["airplane_mode"]
            and device(li)["sim_status"] == "active"
        )
    )
)
AIRPLANE = first(lines(lambda li: li["status"] == "active" and device(li)["airplane_mode"]))
PUK = first(lines(lambda li: li["status"] == "active" and device(li)["sim_status"] == "puk_locked"))
SIM_PENDING = first(lines(lambda li: li["sim_replacement_pending"]))
EXPIRED_OWNER = first(
    c
    for c in CUSTOMERS.values()
    if method(c, expired=True) and any(BILLS[b]["status"] != "paid" for b in c["bill_ids"])
)
PAID_BILL = first(b for b in BILLS.values() if b["status"] == "paid")
ISSUED_BILL = first(b for b in BILLS.values() if b["status"] == "issued" and method(customer(b)) is not None)
ACTIVE_OUTAGE = first(o for o in BASE["outages"].values() if o["status"] == "active")


def test_the_database_is_large_and_covers_every_state() -> None:
    assert len(CUSTOMERS) >= 200 and len(LINES) >= 500 and len(BILLS) >= 1_000 and len(PLANS) >= 8
    assert {line["status"] for line in LINES.values()} == {"active", "suspended", "closed"}
    reasons = {line["suspension_reason"] for line in LINES.values()}
    assert reasons == {None, "overdue_bill", "lost_or_stolen_device", "customer_request", "fraud_review"}
    assert {bill["status"] for bill in BILLS.values()} == {"paid", "issued", "overdue"}
    states = {field: {str(d[field]) for d in DEVICES.values()} for field in ("sim_status", "apn", "network_mode")}
    assert states["sim_status"] == {"active", "missing", "pin_locked", "puk_locked", "not_detected"}
    assert states["apn"] == {"carrier_default", "custom", "missing"} and len(states["network_mode"]) == 4
    over = [li for li in LINES.values() if li["data_used_gb"] >= plan(li)["data_limit_gb"] + li["data_refueled_gb"]]
    assert len(over) >= 50  # lines out of data, for the refuel and data trees
    assert {o["status"] for o in BASE["outages"].values()} == {"active", "resolved"}
    for line in LINES.values():  # the records name each other consistently
        assert line["line_id"] in customer(line)["line_ids"] and device(line)["line_id"] == line["line_id"]
    for bill in BILLS.values():
        assert bill["bill_id"] in customer(bill)["bill_ids"]
        assert bill["paid_with"] is None or bill["paid_with"] in customer(bill)["payment_methods"]
    assert all(
        line["status"] == "suspended" for c in CUSTOMERS.values() if len(overdue(c)) >= 2 for line in
        (LINES[key] for key in c["line_ids"]) if line["status"] != "closed"
    )  # fmt: skip
    keys = [key for table in BASE.values() for key in table]
    assert len(keys) == len(set(keys))  # ids are unique across tables: a record names others by id alone
    assert len(json.dumps(BASE)) > 1_000_000


def test_the_generator_reproduces_the_committed_database_byte_for_byte() -> None:
    assert make_db.render() == make_db.PATH.read_text(encoding="utf-8")
    assert make_db.main(["--check"]) == 0


def _words(text: str) -> int:
    return len(re.findall(r"\b[\w'-]+\b", text))


def test_the_manual_is_the_longest_and_has_every_section() -> None:
    manual = DOMAIN.manual
    assert _words(manual) >= 3_500
    assert all(_words(load_domain(name).manual) < _words(manual) for name in domain_names() if name != "telecom")
    headings = set(re.findall(r"^#{2,3} (.+)$", manual, flags=re.MULTILINE))
    assert {
        "Single-message requests",
        "Identity verification",
        "Line states",
        "Plans",
        "The handset and remote diagnostics",
        "Diagnosing no service",
        "Diagnosing mobile data problems",
        "Diagnosing picture messages (MMS)",
        "Replacement SIM cards",
        "Suspending a line",
        "Resuming a suspended line",
        "Bills and overdue payments",
        "Roaming",
        "Changing plans",
        "Data refuel",
        "Confirmation and one action at a time",
        "Transfer to a human agent",
        "What the agent never does",
    } <= headings
    assert_manual_names_its_tools(DOMAIN)


def test_the_manuals_plan_table_is_the_database_s() -> None:
    row = (r"^\| ([^|]+) \| (plan_\w+) \| \$([\d.]+) \| (\d+) GB \| \$([\d.]+) per GB \| (\d+) GB \| "
           r"(allowed|not allowed) \| ([^|]+) \| (included|not included) \|$")  # fmt: skip
    rows = re.findall(row, DOMAIN.manual, re.M)
    assert len(rows) == len(PLANS)
    for name, plan_id, price, data, refuel, cap, roaming, per_day, mms in rows:
        record = PLANS[plan_id]
        assert (record["name"], record["monthly_price"], record["data_limit_gb"]) == (name, float(price), float(data))
        assert (record["refuel_price_per_gb"], record["max_refuel_gb"]) == (float(refuel), int(cap))
        assert record["roaming_allowed"] == (roaming == "allowed") and record["mms_included"] == (mms == "included")
        day = re.search(r"\$([\d.]+)", per_day)
        assert record["roaming_price_per_day"] == (float(day.group(1)) if day else 0.0)


def test_tools_kinds_and_list_parameters() -> None:
    specs = {spec.name: spec for spec in DOMAIN.tool_specs()}
    assert len(specs) >= 13
    writes = {name for name, spec in specs.items() if spec.kind == "write"}
    assert writes == {
        "pay_bills",
        "suspend_line",
        "resume_line",
        "enable_roaming",
        "disable_roaming",
        "refuel_data",
        "change_plan",
        "push_network_settings",
        "order_replacement_sim",
        "transfer_to_human_agents",
    }
    assert specs["pay_bills"].properties["bill_ids"] == {
        "type": "array",
        "items": {"type": "string"},
        "description": specs["pay_bills"].properties["bill_ids"]["description"],
    }
    assert specs["suspend_line"].properties["reason"]["enum"] == ["lost_or_stolen_device", "customer_request"]
    assert specs["order_replacement_sim"].properties["reason"]["enum"] == [
        "lost_or_stolen_device",
        "damaged_sim",
        "sim_locked",
    ]
    assert specs["refuel_data"].properties["gigabytes"]["type"] == "integer"
    assert export_main(["--check"]) == 0


# -- read tools --------------------------------------------------------------------------------------------
def test_identity_lookups() -> None:
    toolkit, holder = fresh(), customer(ROAMER)
    digits = re.sub(r"\D", "", ROAMER["phone_number"])
    for spelled in (ROAMER["phone_number"], digits, f"({digits[:3]}) {digits[3:6]} {digits[6:]}"):
        assert ok(toolkit, "find_customer_id_by_phone", phone_number=spelled) == holder["customer_id"]
    assert refused(toolkit, "find_customer_id_by_phone", phone_number="000-000-0000").code == "not_found"
    name = f"  {holder['full_name'].upper()} "
    birth = holder["date_of_birth"]
    assert (
        ok(toolkit, "find_customer_id_by_name_and_birth_date", full_name=name, date_of_birth=birth)
        == (holder["customer_id"])
    )
    wrong = refused(toolkit, "find_customer_id_by_name_and_birth_date", full_name=holder["full_name"],
                    date_of_birth="1900-01-01")  # fmt: skip
    assert wrong.code == "not_found"


def test_lookups_of_customers_lines_plans_bills_and_handsets() -> None:
    toolkit = fresh()
    assert ok(toolkit, "get_customer_details", customer_id=OWES["customer_id"]) == OWES
    assert ok(toolkit, "get_line_details", line_id=ROAMER["line_id"]) == ROAMER
    assert ok(toolkit, "get_plan_details", plan_id=ROAMER["plan_id"]) == plan(ROAMER)
    assert ok(toolkit, "get_bill_details", bill_id=PAID_BILL["bill_id"]) == PAID_BILL
    assert ok(toolkit, "run_device_diagnostics", line_id=PUK["line_id"]) == device(PUK)
    prices = [p["monthly_price"] for p in ok(toolkit, "list_plans")]
    assert prices == sorted(prices) and len(prices) == len(PLANS)
    for tool, key in [("get_customer_details", "customer_id"), ("get_line_details", "line_id"),
                      ("get_plan_details", "plan_id"), ("get_bill_details", "bill_id")]:  # fmt: skip
        assert refused(toolkit, tool, **{key: "nope"}).code == "not_found"
    assert refused(toolkit, "run_device_diagnostics", line_id=CLOSED["line_id"]).code == "illegal_state"
    assert toolkit.db.changes() == {}  # reading copies and changes nothing


def test_outages_are_the_active_ones_of_the_area() -> None:
    toolkit = fresh()
    zip_code = ACTIVE_OUTAGE["zip_codes"][0]
    found = ok(toolkit, "check_network_outages", zip_code=zip_code)
    assert ACTIVE_OUTAGE in found and all(o["status"] == "active" and zip_code in o["zip_codes"] for o in found)
    assert ok(toolkit, "check_network_outages", zip_code="00000") == []
    assert refused(toolkit, "check_network_outages", zip_code="9581").code == "invalid_request"
    added = {**ACTIVE_OUTAGE, "outage_id": "OUT9001", "zip_codes": ["00000"]}  # as a scenario's patch adds one
    patched = fresh([{"op": "set", "path": "outages.OUT9001", "value": added}])
    assert ok(patched, "check_network_outages", zip_code="00000") == [added]


# -- write tools -------------------------------------------------------------------------------------------
def test_overdue_bills_block_resumption_until_all_are_paid_in_one_call() -> None:
    toolkit, line_id, owed = fresh(), OVERDUE_SUSPENDED["line_id"], overdue(OWES)
    payer = method(OWES)
    assert refused(toolkit, "resume_line", line_id=line_id).code == "unpaid_bills"
    assert refused(toolkit, "change_plan", line_id=line_id, plan_id="plan_max_50").code == "illegal_state"
    paid = ok(toolkit, "pay_bills", customer_id=OWES["customer_id"], bill_ids=owed, payment_method_id=payer)
    assert paid["total"] == round(sum(BILLS[key]["amount"] for key in owed), 2) and paid["paid_bill_ids"] == owed
    assert all(toolkit.db.bills[key].status == "paid" and toolkit.db.bills[key].paid_with == payer for key in owed)
    assert toolkit.db.lines[line_id].status == "suspended"  # paying does not resume
    resumed = ok(toolkit, "resume_line", line_id=line_id)
    assert resumed["status"] == "active" and resumed["suspension_reason"] is None
    assert refused(toolkit, "pay_bills", customer_id=OWES["customer_id"], bill_ids=owed[:1],
                   payment_method_id=payer).code == "illegal_state"  # fmt: skip


def test_suspension_and_resumption_by_reason() -> None:
    toolkit = fresh()
    suspended = ok(toolkit, "suspend_line", line_id=ROAMER["line_id"], reason="lost_or_stolen_device")
    assert suspended["status"] == "suspended" and suspended["suspended_since"] == TODAY
    again = refused(toolkit, "suspend_line", line_id=ROAMER["line_id"], reason="customer_request")
    assert again.code == "illegal_state"
    assert ok(toolkit, "resume_line", line_id=LOST["line_id"])["status"] == "active"
    assert refused(toolkit, "resume_line", line_id=FRAUD["line_id"]).code == "not_eligible"
    assert refused(toolkit, "resume_line", line_id=REFUELABLE["line_id"]).code == "illegal_state"
    closed = refused(toolkit, "suspend_line", line_id=CLOSED["line_id"], reason="customer_request")
    assert closed.code == "illegal_state"
    assert refused(toolkit, "suspend_line", line_id=REFUELABLE["line_id"], reason="overdue_bill").code == (
        "invalid_arguments"  # the agent never suspends for an overdue bill
    )


def test_roaming_needs_an_active_line_on_a_plan_that_allows_it() -> None:
    toolkit = fresh()
    assert ok(toolkit, "enable_roaming", line_id=ROAMER["line_id"])["roaming_enabled"] is True
    assert refused(toolkit, "enable_roaming", line_id=ROAMER["line_id"]).code == "illegal_state"
    assert refused(toolkit, "enable_roaming", line_id=NO_ROAMING_PLAN["line_id"]).code == "not_eligible"
    assert refused(toolkit, "enable_roaming", line_id=LOST["line_id"]).code == "illegal_state"
    assert ok(toolkit, "disable_roaming", line_id=ROAMER["line_id"])["roaming_enabled"] is False
    assert refused(toolkit, "disable_roaming", line_id=ROAMER["line_id"]).code == "illegal_state"


def test_refuel_charges_the_plan_price_up_to_the_cap_and_records_a_paid_bill() -> None:
    toolkit, line_id, holder = fresh(), REFUELABLE["line_id"], customer(REFUELABLE)
    cap, price, payer = plan(REFUELABLE)["max_refuel_gb"], plan(REFUELABLE)["refuel_price_per_gb"], method(holder)
    over = refused(toolkit, "refuel_data", line_id=line_id, gigabytes=cap + 1, payment_method_id=payer)
    assert over.code == "invalid_request" and f"at most {cap} GB" in over.message
    assert refused(toolkit, "refuel_data", line_id=line_id, gigabytes=0, payment_method_id=payer).code == (
        "invalid_request"
    )
    result = ok(toolkit, "refuel_data", line_id=line_id, gigabytes=1, payment_method_id=payer)
    charge = result["charge"]
    assert result["line"]["data_refueled_gb"] == 1 and charge["amount"] == price and charge["status"] == "paid"
    assert charge["bill_id"] in toolkit.db.customers[holder["customer_id"]].bill_ids
    assert charge["paid_with"] == payer and charge["period"] == "refuel"
    if cap > 1:
        left = refused(toolkit, "refuel_data", line_id=line_id, gigabytes=cap, payment_method_id=payer)
        assert f"at most {cap - 1} GB" in left.message
    no_refuel = [{"op": "set", "path": f"plans.{REFUELABLE['plan_id']}.max_refuel_gb", "value": 0}]
    assert refused(fresh(no_refuel), "refuel_data", line_id=line_id, gigabytes=1, payment_method_id=payer).code == (
        "not_eligible"
    )


def test_a_plan_change_without_roaming_turns_roaming_off() -> None:
    toolkit = fresh()
    assert ROAMING_ON["plan_id"] != "plan_basic_2"
    changed = ok(toolkit, "change_plan", line_id=ROAMING_ON["line_id"], plan_id="plan_basic_2")
    assert changed["plan_id"] == "plan_basic_2" and changed["roaming_enabled"] is False
    same = refused(toolkit, "change_plan", line_id=ROAMING_ON["line_id"], plan_id="plan_basic_2")
    assert same.code == "invalid_request"
    assert refused(toolkit, "change_plan", line_id=ROAMER["line_id"], plan_id="plan_gold").code == "not_found"


def test_network_settings_reach_only_a_reachable_handset() -> None:
    toolkit = fresh()
    assert ok(toolkit, "push_network_settings", line_id=FIXABLE_APN["line_id"])["apn"] == "carrier_default"
    assert refused(toolkit, "push_network_settings", line_id=AIRPLANE["line_id"]).code == "device_unreachable"
    assert refused(toolkit, "push_network_settings", line_id=PUK["line_id"]).code == "device_unreachable"
    assert refused(toolkit, "push_network_settings", line_id=LOST["line_id"]).code == "illegal_state"


def test_one_replacement_sim_at_a_time_to_the_address_on_file() -> None:
    toolkit = fresh()
    sent = ok(toolkit, "order_replacement_sim", line_id=PUK["line_id"], reason="sim_locked")
    assert sent["ships_to"] == customer(PUK)["address"] and toolkit.db.lines[PUK["line_id"]].sim_replacement_pending
    assert refused(toolkit, "order_replacement_sim", line_id=PUK["line_id"], reason="sim_locked").code == (
        "illegal_state"
    )
    assert refused(toolkit, "order_replacement_sim", line_id=SIM_PENDING["line_id"], reason="damaged_sim").code == (
        "illegal_state"
    )
    assert refused(toolkit, "order_replacement_sim", line_id=CLOSED["line_id"], reason="damaged_sim").code == (
        "illegal_state"
    )


def test_transfer_to_human_agents() -> None:
    toolkit = fresh()
    assert ok(toolkit, "transfer_to_human_agents", summary="fraud review") == "transfer successful"
    assert refused(toolkit, "transfer_to_human_agents", summary="  ").code == "invalid_request"
    assert toolkit.db.changes() == {}


REFUSALS: list[tuple[str, str, Callable[[], dict[str, Any]], str]] = [
    ("pay no bill", "pay_bills",
     lambda: {"customer_id": OWES["customer_id"], "bill_ids": [], "payment_method_id": method(OWES)},
     "invalid_request"),
    ("pay a bill twice in one call", "pay_bills",
     lambda: {"customer_id": OWES["customer_id"], "bill_ids": overdue(OWES)[:1] * 2, "payment_method_id": method(OWES)},
     "invalid_request"),
    ("pay another customer's bill", "pay_bills",
     lambda: {"customer_id": OWES["customer_id"], "bill_ids": [ISSUED_BILL["bill_id"]],
              "payment_method_id": method(OWES)}, "invalid_request"),
    ("pay a bill already paid", "pay_bills",
     lambda: {"customer_id": PAID_BILL["customer_id"], "bill_ids": [PAID_BILL["bill_id"]],
              "payment_method_id": method(customer(PAID_BILL))}, "illegal_state"),
    ("pay with an expired card", "pay_bills",
     lambda: {"customer_id": EXPIRED_OWNER["customer_id"],
              "bill_ids": [next(b for b in EXPIRED_OWNER["bill_ids"] if BILLS[b]["status"] != "paid")],
              "payment_method_id": method(EXPIRED_OWNER, expired=True)}, "payment_declined"),
    ("pay with another customer's method", "pay_bills",
     lambda: {"customer_id": OWES["customer_id"], "bill_ids": overdue(OWES),
              "payment_method_id": method(customer(ROAMER))}, "not_found"),
    ("pay an unknown bill", "pay_bills",
     lambda: {"customer_id": OWES["customer_id"], "bill_ids": ["B0"], "payment_method_id": method(OWES)},
     "not_found"),
    ("resume a line of a customer with overdue bills", "resume_line",
     lambda: {"line_id": OVERDUE_SUSPENDED["line_id"]}, "unpaid_bills"),
    ("resume a line under fraud review", "resume_line", lambda: {"line_id": FRAUD["line_id"]}, "not_eligible"),
    ("suspend a closed line", "suspend_line",
     lambda: {"line_id": CLOSED["line_id"], "reason": "customer_request"}, "illegal_state"),
    ("roam on a plan without roaming", "enable_roaming", lambda: {"line_id": NO_ROAMING_PLAN["line_id"]},
     "not_eligible"),
    ("disable roaming that is off", "disable_roaming", lambda: {"line_id": ROAMER["line_id"]}, "illegal_state"),
    ("refuel beyond the cap", "refuel_data",
     lambda: {"line_id": REFUELABLE["line_id"], "gigabytes": plan(REFUELABLE)["max_refuel_gb"] + 1,
              "payment_method_id": method(customer(REFUELABLE))}, "invalid_request"),
    ("refuel a suspended line", "refuel_data",
     lambda: {"line_id": LOST["line_id"], "gigabytes": 1, "payment_method_id": method(customer(LOST))},
     "illegal_state"),
    ("refuel a fraction of a gigabyte", "refuel_data",
     lambda: {"line_id": REFUELABLE["line_id"], "gigabytes": 1.5, "payment_method_id": method(customer(REFUELABLE))},
     "invalid_arguments"),
    ("change the plan with overdue bills", "change_plan",
     lambda: {"line_id": OWES_ACTIVE["line_id"], "plan_id": "plan_premium_100"}, "unpaid_bills"),
    ("push settings to a handset in airplane mode", "push_network_settings",
     lambda: {"line_id": AIRPLANE["line_id"]}, "device_unreachable"),
    ("order a second replacement SIM", "order_replacement_sim",
     lambda: {"line_id": SIM_PENDING["line_id"], "reason": "lost_or_stolen_device"}, "illegal_state"),
    ("transfer without a summary", "transfer_to_human_agents", lambda: {"summary": ""}, "invalid_request"),
    ("call a tool that does not exist", "unlock_puk", lambda: {"line_id": PUK["line_id"]}, "unknown_tool"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "tool", "args", "code"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_write_tools_refuse_what_the_database_forbids(
    what: str, tool: str, args: Callable[[], dict[str, Any]], code: str
) -> None:
    assert refused(fresh(), tool, **args()).code == code, what


# -- resets ------------------------------------------------------------------------------------------------
def every_call() -> list[tuple[str, dict[str, Any]]]:
    """A valid call of every tool (writes on several lines, bills and handsets; the suspension after the push,
    which a suspended line would refuse), then the invalid ones."""
    holder = customer(ROAMER)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("find_customer_id_by_phone", {"phone_number": ROAMER["phone_number"]}),
        ("find_customer_id_by_name_and_birth_date",
         {"full_name": holder["full_name"], "date_of_birth": holder["date_of_birth"]}),
        ("get_customer_details", {"customer_id": holder["customer_id"]}),
        ("get_line_details", {"line_id": ROAMER["line_id"]}),
        ("get_plan_details", {"plan_id": ROAMER["plan_id"]}),
        ("list_plans", {}),
        ("get_bill_details", {"bill_id": PAID_BILL["bill_id"]}),
        ("check_network_outages", {"zip_code": ACTIVE_OUTAGE["zip_codes"][0]}),
        ("run_device_diagnostics", {"line_id": FIXABLE_APN["line_id"]}),
        ("pay_bills",
         {"customer_id": OWES["customer_id"], "bill_ids": overdue(OWES), "payment_method_id": method(OWES)}),
        ("resume_line", {"line_id": LOST["line_id"]}),
        ("enable_roaming", {"line_id": ROAMER["line_id"]}),
        ("disable_roaming", {"line_id": ROAMING_ON["line_id"]}),
        ("refuel_data",
         {"line_id": REFUELABLE["line_id"], "gigabytes": 1, "payment_method_id": method(customer(REFUELABLE))}),
        ("change_plan", {"line_id": REFUELABLE["line_id"], "plan_id": "plan_premium_100"
                         if REFUELABLE["plan_id"] != "plan_premium_100" else "plan_max_50"}),
        ("push_network_settings", {"line_id": FIXABLE_APN["line_id"]}),
        ("suspend_line", {"line_id": FIXABLE_APN["line_id"], "reason": "customer_request"}),
        ("order_replacement_sim", {"line_id": PUK["line_id"], "reason": "sim_locked"}),
        ("transfer_to_human_agents", {"summary": "wants a number ported in"}),
    ]  # fmt: skip
    return calls + [(tool, make()) for _, tool, make, _ in REFUSALS]


VALID_CALLS = 19


def test_every_tool_then_a_reset_gives_the_base_database_back() -> None:
    calls = every_call()
    assert {tool for tool, _ in calls} >= set(DOMAIN.episode_constants.kinds)
    for position, (tool, args) in enumerate(calls):  # each alone: the first VALID_CALLS are accepted, then refused
        assert (fresh().execute(tool, args)[1] is None) == (position < VALID_CALLS), (tool, args)
    toolkit = fresh()
    for tool, args in calls:  # all in one episode (some later calls are refused: states moved on)
        toolkit.execute(tool, args)
    assert set(toolkit.db.changes()) == {"customers", "lines", "devices", "bills"}  # the episode changed its view
    assert_a_reset_gives_the_base_back(DOMAIN)


CALLS = every_call()
KINDS = DOMAIN.episode_constants.kinds


@settings(max_examples=40)
@given(st.lists(st.lists(st.integers(0, len(CALLS) - 1), max_size=12), min_size=1, max_size=4))
def test_random_tool_sequences_and_resets_never_change_the_base(episodes: list[list[int]]) -> None:
    for calls in episodes:
        toolkit = fresh()
        assert all(table.touched == 0 for table in tables(toolkit.db)) and toolkit.db.changes() == {}
        writes = 0  # accepted calls that change the database
        for index in calls:
            tool, args = CALLS[index]
            accepted = toolkit.execute(tool, args)[1] is None
            writes += accepted and KINDS.get(tool) == "write" and tool != "transfer_to_human_agents"
        changed = changed_records(toolkit.db)
        assert writes or not changed  # only an accepted write changes anything (enable then disable may undo it)
        assert sum(table.touched for table in tables(toolkit.db)) <= 3 * len(calls)  # only what the calls reached
        assert set(toolkit.db.changes()) <= {"customers", "lines", "devices", "bills"}
    fresh_view = fresh().db
    for name, table in BASE.items():
        touched = {key for _, args in CALLS for key in _ids(args) if key in table}
        for key in touched:
            assert getattr(fresh_view, name)[key].model_dump(mode="json") == table[key]


def _ids(args: dict[str, Any]) -> Iterator[str]:
    for value in args.values():
        yield from value if isinstance(value, list) else [value] if isinstance(value, str) else []


def test_a_patch_copies_and_validates_only_its_records() -> None:
    line_id = ROAMER["line_id"]
    database = DOMAIN.fresh_database(
        [
            {"op": "set", "path": f"devices.{ROAMER['device_id']}.airplane_mode", "value": True},
            {"op": "set", "path": f"lines.{line_id}.data_used_gb", "value": 99.5},
        ]
    )
    assert isinstance(database, TelecomDatabase)
    assert database.devices[ROAMER["device_id"]].airplane_mode and database.lines[line_id].data_used_gb == 99.5
    assert [table.touched for table in tables(database)] == [0, 1, 0, 1, 0, 0]
    bad = [
        ([{"op": "set", "path": f"lines.{line_id}.status", "value": "suspended"}], "suspension reason"),
        ([{"op": "set", "path": f"devices.{ROAMER['device_id']}.sim_status", "value": "broken"}], "invalid"),
        ([{"op": "set", "path": "towers.t1", "value": {}}], "the tables are: customers, lines, plans"),
    ]
    for patch, message in bad:
        with pytest.raises(DomainError, match=re.escape(message)):
            DOMAIN.fresh_database(patch)


# -- the domain's wiring -------------------------------------------------------------------------------------
def test_the_telecom_domain_runs_its_generated_suite_by_name() -> None:
    assert "telecom" in domain_names() and load_domain("telecom") is DOMAIN
    domain, suite = find_suite("telecom")
    assert domain is DOMAIN and domain.default_suite == "generated" and suite.manifest.name == "generated"
    env = gym.make("mantra/telecom-v3").unwrapped
    assert [case.id for case in env.suite.cases] == [case.id for case in suite.cases]  # type: ignore[attr-defined]


def _resume_suite() -> Suite:
    line, owner = OVERDUE_SUSPENDED, OWES
    prompt = (f"I'm {owner['full_name']}, born {owner['date_of_birth']}, line {line['phone_number']}. Please pay all "
              f"my overdue bills with {method(owner)} and turn my line back on; I confirm both.")  # fmt: skip
    checks = [
        f'CALL pay_bills(customer_id="{owner["customer_id"]}") PRECEDES CALL resume_line(line_id="{line["line_id"]}")',
        "NO-CALL enable_roaming()",
    ]
    case = Case(id="resume-overdue", domain="telecom", scenario=Scenario(prompt=prompt),
                checks=[CaseCheck(id=f"c{n}", check=text) for n, text in enumerate(checks, 1)])  # type: ignore[arg-type]  # fmt: skip
    return Suite(manifest=SuiteManifest(name="telecom-test", domain="telecom", case_count=1), cases=[case])


def test_an_episode_in_the_real_domain_is_graded_on_the_order_of_its_writes() -> None:
    line_id, owner = {"line_id": OVERDUE_SUSPENDED["line_id"]}, OWES
    pay = {"customer_id": owner["customer_id"], "bill_ids": overdue(owner), "payment_method_id": method(owner)}
    reads = [("find_customer_id_by_phone", {"phone_number": OVERDUE_SUSPENDED["phone_number"]}),
             ("get_customer_details", {"customer_id": owner["customer_id"]}), ("get_line_details", line_id),
             *[("get_bill_details", {"bill_id": key}) for key in owner["bill_ids"]]]  # fmt: skip
    env = MantraEnv(_resume_suite(), DOMAIN)
    for plan, passes in [
        ([*reads, ("pay_bills", pay), ("resume_line", line_id)], True),
        ([*reads, ("resume_line", line_id), ("pay_bills", pay), ("resume_line", line_id)], False),  # tried first
    ]:
        observation, _ = env.reset(seed=0)
        assert "Diagnosing no service" in json.loads(observation)["system"]
        results = [json.loads(env.step({"tool": tool, "arguments": args})[0]) for tool, args in plan]
        assert ("error" in results[len(reads)]) != passes  # the early resume is refused: bills are overdue
        assert "error" not in results[-1]
        _, reward, terminated, _, _ = env.step({"final_answer": "Paid and resumed."})
        assert terminated and reward == (1.0 if passes else 0.0)


def test_check_env_on_the_real_domain() -> None:
    check_env(MantraEnv(_resume_suite(), DOMAIN), skip_render_check=True)
