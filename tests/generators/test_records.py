"""The database records a scenario writer sees (generators/records.py), on the shipped domains' databases."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mantra_env.domains import Domain, load_domain
from mantra_env.generators import prompts
from mantra_env.generators.records import DatabaseIndex, database_view, sample_rng, select_records


@pytest.fixture(scope="module", params=["operations", "retail", "telecom"])
def domain(request: pytest.FixtureRequest) -> Domain:
    return load_domain(request.param)


def _lines(view: str) -> dict[str, Any]:
    return {line.split(": ", 1)[0]: json.loads(line.split(": ", 1)[1]) for line in view.splitlines()}


def test_same_seed_and_sample_give_the_same_records(domain: Domain) -> None:
    tools = domain.tool_specs()
    first = database_view(domain.base_data, tools, "", 42, "s003")
    assert first == database_view(domain.base_data, tools, "", 42, "s003")
    assert first != database_view(domain.base_data, tools, "", 43, "s003")


def test_different_samples_see_different_records(domain: Domain) -> None:
    tools = domain.tool_specs()
    views = [set(_lines(database_view(domain.base_data, tools, "", 42, f"s{n:03}"))) for n in range(6)]
    assert len({frozenset(view) for view in views}) == 6
    seen = set().union(*views)
    assert len(seen) > max(len(view) for view in views)  # the samples together cover more than any one


def test_every_record_shown_is_the_database_record_at_its_path(domain: Domain) -> None:
    view = database_view(domain.base_data, domain.tool_specs(), "", 7, "s001", budget=8_000)
    shown = _lines(view)
    assert shown
    for path, record in shown.items():
        node: Any = domain.base_data
        for part in path.split(".", 1):
            node = node[part]
        assert node == record, path


def test_selection_fits_the_budget_and_is_whole_records(domain: Domain) -> None:
    for budget in (800, 3_000, 10_000):
        places = select_records(domain.base_data, domain.tool_specs(), "", sample_rng(1, "s000"), budget)
        sizes = sum(len(json.dumps(domain.base_data[c][k], separators=(",", ":"))) for c, k in places)
        assert 0 < sizes <= budget


def test_records_follow_the_ids_they_name() -> None:
    retail = load_domain("retail")
    index = DatabaseIndex.of(retail.base_data)
    tools = [spec for spec in retail.tool_specs() if set(spec.properties) == {"order_id"}]
    assert tools
    places = select_records(retail.base_data, tools, "", sample_rng(42, "s000"), 20_000)
    collection, key = places[0]  # the first anchor comes with its customer and the products of its items
    assert collection == "orders"
    order = retail.base_data["orders"][key]
    assert ("users", order["user_id"]) in places
    assert all(index.owner[item["item_id"]] in places for item in order["items"])
    assert {index.owner[item["item_id"]] for item in order["items"]} <= {p for p in places if p[0] == "products"}


def test_collections_are_chosen_by_the_tools_parameters() -> None:
    operations = load_domain("operations")
    index = DatabaseIndex.of(operations.base_data)
    assert index.addressed_by(["item_id", "employee_id", "software_id", "note"]) == ["items", "employees", "software"]
    retail = DatabaseIndex.of(load_domain("retail").base_data)
    assert retail.addressed_by(["order_id", "user_id", "product_id"]) == ["orders", "users", "products"]
    tools = [spec for spec in operations.tool_specs() if set(spec.properties) == {"item_id"}]
    assert tools
    places = select_records(operations.base_data, tools, "", sample_rng(0, "s000"), 2_000)
    assert places[0][0] == "items"


def test_records_the_excerpt_names_come_first() -> None:
    operations = load_domain("operations")
    places = select_records(operations.base_data, [], "Use item HWM2741 for monitors.", sample_rng(0, "s0"), 2_000)
    assert places[0] == ("items", "HWM2741")


def test_scenario_prompt_says_episodes_are_single_turn() -> None:
    system = prompts.scenarios("excerpt", [], 4, "users.u1: {}", "", [])[0]["content"]
    assert "single-turn" in system and "stated" in system and "confirm" in system


def test_with_anchor_by_fields_records_looked_up_by_value_are_anchored_too() -> None:
    telecom, airline = load_domain("telecom"), load_domain("airline")
    index = DatabaseIndex.of(telecom.base_data)
    assert index.addressed_by(["zip_code"]) == []  # no id: before, no collection
    assert index.addressed_by(["zip_code"], by_fields=True) == ["outages"]  # outages hold zip_codes
    assert DatabaseIndex.of(airline.base_data).addressed_by(["flight_number"], by_fields=True) == ["flights"]
    tools = [spec for spec in telecom.tool_specs() if spec.name == "check_network_outages"]
    assert tools
    off = select_records(telecom.base_data, tools, "", sample_rng(0, "s000"), 2_000)
    on = select_records(telecom.base_data, tools, "", sample_rng(0, "s000"), 2_000, by_fields=True)
    assert {name for name, _ in off} != {"outages"}  # every collection in turn, outages only by chance
    assert on and {name for name, _ in on} == {"outages"}
