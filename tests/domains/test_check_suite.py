"""A suite must fit its domain: checks naming tools or arguments the domain lacks are refused at load (D5)."""

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from mantra_env.case import Suite, load_suite
from mantra_env.domains import DomainError, find_suite, load_domain
from mantra_env.env import MantraEnv
from mantra_env.registration import make_env

DOMAIN = load_domain("operations")
STARTER = DOMAIN.suite_dirs["starter"]


def _copy_with(tmp_path: Path, checks: list[dict[str, Any]], **first_case: Any) -> Path:
    folder = tmp_path / "suite"
    shutil.copytree(STARTER, folder)
    lines = (folder / "suite.jsonl").read_text(encoding="utf-8").splitlines()
    case = json.loads(lines[0])
    case["checks"] = checks
    case.update(first_case)
    lines[0] = json.dumps(case)
    (folder / "suite.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    (folder / "manifest.json").write_text(json.dumps({**manifest, "cases_digest": ""}), encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("check", "message"),
    [
        ("NO-CALL nonexistent_tool()", "'nonexistent_tool' is not a tool of this domain; its tools: get_request"),
        (
            "NO-CALL check_inventori()",
            "'check_inventori' is not a tool of this domain; did you mean 'check_inventory'?",
        ),
        ("CALL check_inventory(no_such_arg=1)", "check_inventory takes no argument 'no_such_arg'; it takes item_name"),
        (
            'CALL check_inventory(item_nam="x")',
            "check_inventory takes no argument 'item_nam'; did you mean 'item_name'?",
        ),
        (
            'CALL assign_warehouse_picker(quantity="1")',
            'assign_warehouse_picker(quantity="1"): the tool\'s schema allows',
        ),
        ("CALL assign_warehouse_picker(quantity=1.5)", "assign_warehouse_picker(quantity=1.5)"),
        ("CALL assign_warehouse_picker(quantity=true)", "assign_warehouse_picker(quantity=true)"),
        (
            'CALL check_inventory() PRECEDES CALL update_request_status(status="finished")',
            'update_request_status(status="finished"): the tool\'s schema allows {"enum"',
        ),
        ("CALL check_inventory() OR NO-CALL ghost()", "'ghost' is not a tool"),
    ],
)
def test_d5_checks_naming_what_the_domain_lacks_are_refused_at_load(tmp_path: Path, check: str, message: str) -> None:
    folder = _copy_with(tmp_path, [{"id": "ok", "check": "CALL check_inventory()"}, {"id": "ghost", "check": check}])
    suite = load_suite(folder)  # the file itself is well-formed
    expected = re.escape(f"case 'fig1-case1', check 'ghost': {message}")
    with pytest.raises(DomainError, match=expected):
        find_suite(str(folder))  # --suite PATH
    with pytest.raises(DomainError, match=expected):
        MantraEnv(suite, DOMAIN)
    with pytest.raises(DomainError, match=expected):
        make_env(str(folder))  # gym.make(...)


def test_d5_values_the_schema_allows_are_accepted(tmp_path: Path) -> None:
    checks = [
        {"id": "a", "check": "CALL assign_warehouse_picker(quantity=1.0)"},  # canonical 1: an integer
        {"id": "b", "check": 'CALL update_request_status(status="fulfilled")'},
        {"id": "c", "check": "CALL verify_travel_policy(estimated_cost=2800)"},  # an int is a number
    ]
    domain, suite = find_suite(str(_copy_with(tmp_path, checks)))
    assert domain is DOMAIN and suite.cases[0].checks[0].id == "a"


def test_d5_a_case_of_another_domain_and_a_bad_patch_are_refused(tmp_path: Path) -> None:
    folder = _copy_with(tmp_path, [{"id": "ok", "check": "CALL check_inventory()"}], domain="retail")
    with pytest.raises(DomainError, match="case 'fig1-case1': its domain is 'retail', not 'operations'"):
        find_suite(str(folder))
    patch = [{"op": "set", "path": "items.NOPE.stock", "value": 1}]
    folder = _copy_with(tmp_path / "p", [{"id": "ok", "check": "CALL check_inventory()"}], database_patch=patch)
    with pytest.raises(DomainError, match=r"case 'fig1-case1': database_patch\[0\]: path 'items.NOPE' does not"):
        find_suite(str(folder))


def test_the_shipped_suites_fit_and_are_checked_once() -> None:
    domain, suite = find_suite("operations/starter")
    assert isinstance(suite, Suite) and domain is DOMAIN
    DOMAIN.episode_constants  # noqa: B018 - computed once per domain, from the tool specs
    calls = []
    original = DOMAIN.tool_specs
    object.__setattr__(DOMAIN, "tool_specs", lambda: calls.append(1) or original())
    try:
        for _ in range(3):
            MantraEnv(suite, DOMAIN)
    finally:
        object.__delattr__(DOMAIN, "tool_specs")
    assert calls == []  # find_suite checked this suite object already


def test_d12_a_path_that_does_not_exist_is_named() -> None:
    with pytest.raises(DomainError, match=r"scratch/nope/suite.jsonl: no such suite folder or file"):
        find_suite("scratch/nope/suite.jsonl")
    with pytest.raises(DomainError, match=r"has no suite 'startr'; did you mean 'starter'?"):
        find_suite("operations/startr")
