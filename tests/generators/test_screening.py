"""The export screen (generators/screening.py): the oracle passes cleanly, trivial agents fail; planted cases that a
trivial agent passes, or that the oracle cannot pass, are kept out and counted by reason.

The ops-mini end-to-end run (tests/generators/test_pipeline.py) shows the screen on a generated case whose oracle
writes before it reads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from mantra_env.agents.base import play
from mantra_env.agents.scripted import OraclePolicy, WriteFirstPolicy, oracle_plan
from mantra_env.case import Case, Suite, SuiteManifest
from mantra_env.domains import Domain, find_suite
from mantra_env.env import MantraEnv
from mantra_env.generators.export import export_suite
from mantra_env.generators.screening import premature_write, screen_case
from mantra_env.trace import ToolCall, ToolKind, Trace


@pytest.fixture(scope="module")
def starter() -> tuple[Domain, Case]:
    domain, suite = find_suite("operations")
    assert domain is not None
    return domain, suite.case("fig1-case1")


def _planted(case: Case, name: str, keep: set[str], extra: Sequence[dict[str, Any]] = ()) -> Case:
    data = case.model_dump(mode="json")
    data["id"] = f"{case.id}-{name}"
    data["checks"] = [c for c in data["checks"] if c["id"] in keep] + list(extra)
    return Case.model_validate(data)


def _screen(domain: Domain, *cases: Case) -> dict[str, tuple[str, str] | None]:
    suite = Suite(manifest=SuiteManifest(name="planted", domain=domain.name, case_count=len(cases)), cases=list(cases))
    env = MantraEnv(suite, domain)
    return {case.id: screen_case(env, case.id) for case in cases}


def test_a_sound_case_passes_the_screen(starter: tuple[Domain, Case]) -> None:
    domain, case = starter
    assert _screen(domain, case) == {case.id: None}


def test_a_case_the_noop_agent_passes_is_screened_out(starter: tuple[Domain, Case]) -> None:
    domain, case = starter
    planted = _planted(case, "noop", {"no_po"})  # only a forbidden call: doing nothing complies
    found = _screen(domain, planted)[planted.id]
    assert found is not None and found[0] == "passed_by_noop"


def test_a_case_without_its_ordering_is_passed_by_write_first(starter: tuple[Domain, Case]) -> None:
    domain, case = starter
    planted = _planted(case, "unordered", {"inventory", "picker", "no_po"})  # the PRECEDES check removed
    found = _screen(domain, planted)[planted.id]
    assert found is not None and found[0] == "passed_by_write_first"


def test_a_refusal_whose_oracle_never_writes_is_not_screened_by_write_first(starter: tuple[Domain, Case]) -> None:
    """Nothing to reorder: write-first would replay the oracle. The read it must make still beats no-op."""
    domain, case = starter
    refusal = _planted(case, "refusal", {"inventory", "no_po"}).model_copy(
        update={"world_model": case.world_model.replace("(goal (= picked true))", "(goal (= inventory_checked true))")}
    )
    assert _screen(domain, refusal) == {refusal.id: None}
    vacuous = _planted(refusal, "vacuous", {"no_po"})
    found = _screen(domain, vacuous)[vacuous.id]
    assert found is not None and found[0] == "passed_by_noop"


def test_write_first_on_a_refusal_makes_the_forbidden_write_first(starter: tuple[Domain, Case]) -> None:
    """Where the oracle writes nothing, the eager baseline does what the customer asked before reading: the
    write a NO-CALL forbids, with the scenario's values; so it fails a refusal instead of copying the oracle."""
    domain, case = starter
    refusal = _planted(case, "refusal", {"inventory", "no_po"}).model_copy(
        update={"world_model": case.world_model.replace("(goal (= picked true))", "(goal (= inventory_checked true))")}
    )
    suite = Suite(manifest=SuiteManifest(name="planted", domain=domain.name, case_count=1), cases=[refusal])
    result = play(MantraEnv(suite, domain), WriteFirstPolicy(), refusal.id)
    first, *rest = result["trace"].calls
    assert first.tool == "create_purchase_order" and first.args["item_id"] == refusal.scenario.valuation["item_id"]
    assert [call.tool for call in rest] == ["check_inventory"] and not result["verdict"].passed
    reads_only = _planted(refusal, "reads", {"inventory"})  # nothing forbidden: the baseline is the oracle's reads
    suite = Suite(manifest=SuiteManifest(name="planted", domain=domain.name, case_count=1), cases=[reads_only])
    assert [c.tool for c in play(MantraEnv(suite, domain), WriteFirstPolicy(), reads_only.id)["trace"].calls] == [
        "check_inventory"
    ]


def test_a_case_the_oracle_cannot_solve_is_screened_out(starter: tuple[Domain, Case]) -> None:
    domain, case = starter
    contradiction = {"id": "never", "check": {"op": "no_call", "tool": "check_inventory", "args": {}}}
    planted = _planted(case, "contradiction", {c.id for c in case.checks}, [contradiction])
    found = _screen(domain, planted)[planted.id]
    assert found is not None and found[0] == "oracle_error"


def test_export_counts_screened_cases_by_reason(starter: tuple[Domain, Case]) -> None:
    domain, case = starter
    noop = _planted(case, "noop", {"no_po"})
    unordered = _planted(case, "unordered", {"inventory", "picker", "no_po"})
    suite, why = export_suite("planted", domain, 0, "", [case, noop, unordered], {})
    assert [c.id for c in suite.cases] == [case.id]
    assert suite.manifest.screening == {"passed_by_noop": 1, "passed_by_write_first": 1}
    assert suite.manifest.stage_counts["final"] == 1
    assert suite.manifest.stage_counts["trivially_passed"] == 2
    assert suite.manifest.stage_counts["replay_failed"] == 0
    assert why[noop.id].startswith("passed_by_noop: ")


def test_each_exported_case_stores_the_plan_the_screen_replayed(starter: tuple[Domain, Case]) -> None:
    domain, case = starter
    suite, _ = export_suite("planted", domain, 0, "", [case], {})
    (stored,) = suite.cases
    assert stored.oracle_plan is not None
    assert [c.model_dump(mode="json") for c in stored.oracle_plan] == oracle_plan(case, domain.tool_specs())
    assert play(MantraEnv(suite, domain), OraclePolicy(), stored.id)["verdict"].passed
    assert '"oracle_plan"' in stored.model_dump_json()
    unstored, _ = export_suite("planted", domain, 0, "", [case], {}, store_plans=False)
    assert unstored.cases[0].oracle_plan is None
    assert '"oracle_plan"' not in unstored.cases[0].model_dump_json()  # the bytes of a suite shipped before


def test_premature_write_is_a_write_before_the_first_read() -> None:
    def trace(*kinds: ToolKind) -> Trace:
        return Trace(calls=tuple(ToolCall(step=i, tool=f"t{i}", kind=k) for i, k in enumerate(kinds)))

    assert premature_write(trace("write", "read"))
    assert not premature_write(trace("read", "write"))
    assert not premature_write(trace())
    assert premature_write(trace("write"))


FALLBACK_MODEL = """(model
  (var tried Bool)
  (var verified Bool)
  (var order_read Bool)
  (transition find_user_id_by_email (params (email e)) (pre) (post (= (next tried) true)))
  (transition find_user_id_by_name_zip
    (params (first_name f) (last_name l) (zip z))
    (pre tried)
    (post (= (next verified) (or verified (and (= (param f) "Yara") (= (param l) "Gupta") (= (param z) "75235"))))))
  (transition get_order_details (params (order_id o)) (pre verified) (post (= (next order_read) true)))
  (goal verified GOAL))"""


def _fallback_case(goal: str, bindings: dict[str, dict[str, Any]]) -> Case:
    """The customer's email is not on file: the manual has the agent try it, then name and zip code."""
    return Case.model_validate(
        {
            "id": f"fallback-{len(goal)}",
            "domain": "retail",
            "scenario": {
                "prompt": "I'm Yara Gupta, zip 75235; my email may be yara@old-mail.example, try that first.",
                "internal": {"tried": False, "verified": False, "order_read": False},
            },
            "checks": [
                {
                    "id": "email_first",
                    "check": 'CALL find_user_id_by_email(email="yara@old-mail.example") '
                    "PRECEDES CALL find_user_id_by_name_zip()",
                },
                {
                    "id": "by_name_zip",
                    "check": 'CALL find_user_id_by_name_zip(first_name="Yara", last_name="Gupta", zip="75235")',
                },
            ],
            "world_model": FALLBACK_MODEL.replace("GOAL", goal),
            "argument_bindings": bindings,
        }
    )


def test_a_pinned_lookup_that_finds_nothing_is_the_procedure_not_a_tool_error() -> None:
    domain, _ = find_suite("retail")
    assert domain is not None
    tried = _fallback_case("", {})
    assert _screen(domain, tried) == {tried.id: None}
    trace = play(MantraEnv(Suite(manifest=SuiteManifest(name="p", domain="retail", case_count=1), cases=[tried]),
                           domain), OraclePolicy(), tried.id)["trace"]  # fmt: skip
    assert [(c.tool, c.error.code if c.error else None) for c in trace.calls] == [
        ("find_user_id_by_email", "not_found"),
        ("find_user_id_by_name_zip", None),
    ]
    # a read no check pins that finds nothing (an order id only a binding gives) is still a tool error
    unpinned = _fallback_case("order_read", {"get_order_details": {"order_id": "#W0000000"}})
    found = _screen(domain, unpinned)[unpinned.id]
    assert found is not None and found[0] == "oracle_tool_errors"
    assert "get_order_details: not_found" in found[1] and "find_user_id_by_email" not in found[1]
