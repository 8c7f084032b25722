"""The operations domain: every tool's happy path and a domain error, schema freshness, env episodes."""

import json
from typing import Any

import pytest
from gymnasium.utils.env_checker import check_env

from mantra_env.case import Case, CaseCheck, Scenario, Suite, SuiteManifest
from mantra_env.domains import DomainError, domain_names, find_suite, load_domain
from mantra_env.domains.__main__ import main as export_main
from mantra_env.env import MantraEnv

DOMAIN = load_domain("operations")


def run(tool: str, **args: Any) -> tuple[Any, Any]:
    return DOMAIN.toolkit(DOMAIN.fresh_database()).execute(tool, args)


HAPPY = [
    ("get_request", {"request_id": "HW-2841"}, lambda r: r["requester_id"] == "E1001"),
    ("get_employee", {"employee_id": "E1002"}, lambda r: r["home_address"].startswith("417 Maple Crest Drive")),
    ("find_employee", {"name": "maya"}, lambda r: r == [{"id": "E1001", "name": "Maya Torres"}]),
    ("get_workstation", {"workstation_id": "WS-202"}, lambda r: r["workstation_class"] == "SSC"),
    ("search_software_catalog", {"query": "matlab"}, lambda r: r[0]["id"] == "SW-340" and r[0]["approved"]),
    ("check_workstation_compatibility", {"workstation_id": "WS-202", "software_id": "SW-340"}, lambda r: r == {"compatible": False}),
    ("check_inventory", {"item_name": "Dell UltraSharp U2723QE"}, lambda r: r[0]["id"] == "HWM2741" and r[0]["stock"] == 6),
    ("check_legacy_portal", {"item_id": "HWC9305"}, lambda r: r["refurbished_available"] == 0),
    ("verify_travel_policy", {"employee_id": "E1003", "destination_region": "EMEA", "estimated_cost": 2800}, lambda r: r["global_limit"] == 3000),
    ("get_regional_override", {"region": "EMEA"}, lambda r: r["limit"] == 2500),
    ("request_license", {"software_id": "SW-310", "employee_id": "E1001", "request_id": "SW-7703"}, lambda r: r["license"] == "LIC-0001"),
    ("assign_warehouse_picker", {"item_id": "HWM2741", "quantity": 1}, lambda r: r["pick"] == "PICK-0001"),
    ("fulfil_internally", {"request_id": "HW-2841", "item_id": "HWM2741", "quantity": 1, "source": "warehouse"}, lambda r: "fulfilment" in r),
    ("create_purchase_order", {"item_id": "HWC9305", "quantity": 1, "priority": "standard"}, lambda r: r["purchase_order"] == "PO-00001"),
    ("set_delivery_options", {"item_id": "HWC9305", "address": "4100 Blake Street, Denver, CO 80216", "signature_required": True, "delivery_window": "business_hours"}, lambda r: "delivery" in r),
    ("book_travel", {"employee_id": "E1003", "destination": "Paris, France", "depart_date": "2026-12-01", "return_date": "2026-12-03", "cost": 2100, "request_id": "TR-5501"}, lambda r: "booking" in r),
    ("submit_budget_justification", {"request_id": "TR-5501", "justification": "Customer workshop needs two extra nights."}, lambda r: "justification" in r),
    ("escalate_to_manager", {"request_id": "TR-5501", "reason": "Over budget by 40%"}, lambda r: r["escalated_to"] == "E1101"),
    ("update_request_status", {"request_id": "HW-2841", "status": "fulfilled"}, lambda r: r["status"] == "fulfilled"),
    ("reject_request", {"request_id": "SW-7701", "reason_code": "UNAPPROVED_SOFTWARE"}, lambda r: r["status"] == "rejected"),
]  # fmt: skip


def test_twenty_tools_with_kinds() -> None:
    specs = DOMAIN.toolkit(DOMAIN.fresh_database()).tool_specs()
    assert len(specs) == 20
    kinds = {spec.name: spec.kind for spec in specs}
    assert kinds["check_inventory"] == "read" and kinds["create_purchase_order"] == "write"
    assert {spec.name for spec in specs} == {name for name, _, _ in HAPPY}


def test_episode_constants_are_the_tool_specs_computed_once() -> None:
    constants = DOMAIN.episode_constants
    specs = [spec.model_dump(mode="json") for spec in DOMAIN.tool_specs()]
    assert json.loads(constants.tools_json) == specs and json.loads(constants.manual_json) == DOMAIN.manual
    assert dict(constants.kinds) == {spec["name"]: spec["kind"] for spec in specs}
    assert DOMAIN.episode_constants is constants
    opening = json.loads(MantraEnv(find_suite("operations")[1], DOMAIN).reset(seed=0)[0])
    assert opening["tools"] == specs and opening["system"] == DOMAIN.manual


@pytest.mark.parametrize(("tool", "args", "ok"), HAPPY, ids=[name for name, _, _ in HAPPY])
def test_tool_happy_path(tool: str, args: dict[str, Any], ok: Any) -> None:
    result, error = run(tool, **args)
    assert error is None, error
    assert ok(result)


@pytest.mark.parametrize(
    ("tool", "args", "code"),
    [
        ("get_request", {"request_id": "HW-0000"}, "not_found"),
        ("get_employee", {"employee_id": "E9"}, "not_found"),
        ("get_workstation", {"workstation_id": "WS-1"}, "not_found"),
        ("check_workstation_compatibility", {"workstation_id": "WS-202", "software_id": "SW-1"}, "not_found"),
        ("check_legacy_portal", {"item_id": "HW-NOPE"}, "not_found"),
        ("verify_travel_policy", {"employee_id": "E9", "destination_region": "NA", "estimated_cost": 1.0}, "not_found"),
        ("get_regional_override", {"region": "MARS"}, "invalid_arguments"),
        ("request_license", {"software_id": "SW-310", "employee_id": "E1001", "request_id": "NOPE"}, "not_found"),
        ("assign_warehouse_picker", {"item_id": "HWC9305", "quantity": 1}, "illegal_state"),
        ("fulfil_internally", {"request_id": "HW-2841", "item_id": "HWM2741", "quantity": 99, "source": "warehouse"}, "illegal_state"),
        ("create_purchase_order", {"item_id": "HWC9305", "quantity": 0, "priority": "standard"}, "invalid_arguments"),
        ("set_delivery_options", {"item_id": "HWC9305", "address": " ", "signature_required": True, "delivery_window": "evening"}, "invalid_arguments"),
        ("book_travel", {"employee_id": "E1003", "destination": "Paris", "depart_date": "2026-12-03", "return_date": "2026-12-01", "cost": 1.0, "request_id": "TR-5501"}, "invalid_arguments"),
        ("submit_budget_justification", {"request_id": "TR-5501", "justification": "pls"}, "invalid_arguments"),
        ("escalate_to_manager", {"request_id": "NOPE", "reason": "x"}, "not_found"),
        ("update_request_status", {"request_id": "HW-2841", "status": "rejected"}, "invalid_arguments"),
        ("reject_request", {"request_id": "SW-7701", "reason_code": "BORED"}, "invalid_arguments"),
        ("search_software_catalog", {"query": 3}, "invalid_arguments"),
        ("find_employee", {}, "invalid_arguments"),
        ("check_inventory", {"item_name": "x", "warehouse": "SEA"}, "invalid_arguments"),
    ],
)  # fmt: skip
def test_tool_errors(tool: str, args: dict[str, Any], code: str) -> None:
    result, error = run(tool, **args)
    assert result is None and error is not None and error.code == code


def test_closed_requests_cannot_change() -> None:
    toolkit = DOMAIN.toolkit(DOMAIN.fresh_database())
    assert toolkit.execute("update_request_status", {"request_id": "HW-2841", "status": "fulfilled"})[1] is None
    _, error = toolkit.execute("reject_request", {"request_id": "HW-2841", "reason_code": "POLICY_VIOLATION"})
    assert error is not None and error.code == "illegal_state" and "already fulfilled" in error.message


def test_tools_json_is_up_to_date() -> None:
    assert export_main(["--check"]) == 0


def test_registry() -> None:
    assert "operations" in domain_names()
    with pytest.raises(DomainError, match="unknown domain 'operation': did you mean 'operations'"):
        load_domain("operation")


def _suite() -> Suite:
    case = Case(
        id="fig1-case1", domain="operations",
        scenario=Scenario(prompt="Please get 1 Dell UltraSharp U2723QE monitor for Maya Torres under HW-2841."),
        checks=[CaseCheck(id="c1", check='CALL check_inventory(item_name="Dell UltraSharp U2723QE") PRECEDES CALL assign_warehouse_picker(item_id="HWM2741", quantity=1)'),  # type: ignore[arg-type]
                CaseCheck(id="c2", check="NO-CALL create_purchase_order()")],  # type: ignore[arg-type]
    )  # fmt: skip
    return Suite(manifest=SuiteManifest(name="ops-test", domain="operations", case_count=1), cases=[case])


def test_fig1_case1_episode_in_the_real_domain() -> None:
    env = MantraEnv(_suite(), DOMAIN)
    observation, _ = env.reset(seed=0)
    assert "Inventory Check Logic" in json.loads(observation)["system"]
    for action in [
        {"tool": "check_inventory", "arguments": {"item_name": "Dell UltraSharp U2723QE"}},
        {"tool": "assign_warehouse_picker", "arguments": {"item_id": "HWM2741", "quantity": 1}},
        {
            "tool": "fulfil_internally",
            "arguments": {"request_id": "HW-2841", "item_id": "HWM2741", "quantity": 1, "source": "warehouse"},
        },
        {"tool": "update_request_status", "arguments": {"request_id": "HW-2841", "status": "fulfilled"}},
    ]:
        assert "error" not in json.loads(env.step(action)[0])
    _, reward, terminated, _, info = env.step({"final_answer": "Picked and handed over."})
    assert terminated and reward == 1.0 and info["verdict"].passed


def test_check_env_on_the_real_domain() -> None:
    check_env(MantraEnv(_suite(), DOMAIN), skip_render_check=True)
