"""The authoring tool warns, with the place and a hint, about world models whose effects ignore the arguments
(mantra_env/lints.py): one test per warning, on the starter source with one postcondition made insensitive."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from mantra_env.authoring import AuthoringError, build_suite, load_source, main
from mantra_env.lints import Lint

STARTER_SOURCE = Path(__file__).parents[1] / "mantra_env/domains/operations/suites/starter/source.yaml"
INVENTORY = "(post (= (next inventory_checked) (or inventory_checked (= (param name) item_name)))))"
PICKER = "(post (= (next picked) (or picked (and (= (param item) item_id) (= (param qty) quantity))))))"


def _source(tmp_path: Path, sensitive: str, insensitive: str) -> Path:
    """The starter source with one case (fig1-case1, hardware model) and one postcondition replaced."""
    text = STARTER_SOURCE.read_text(encoding="utf-8")
    assert sensitive in text
    source = load_source(STARTER_SOURCE)
    keep = next(case for case in source.cases if case.id == "fig1-case1")
    data = source.model_copy(update={"cases": [keep]}).model_dump(mode="json", exclude_defaults=True)
    data["world_models"]["hardware"] = data["world_models"]["hardware"].replace(sensitive, insensitive)
    path = tmp_path / "source.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _build(path: Path) -> tuple[list[Lint], str]:
    """The warnings, and the failure text ('' when the suite builds)."""
    warnings: list[Lint] = []
    try:
        build_suite(path, warnings.append)
    except AuthoringError as error:
        return warnings, str(error)
    return warnings, ""


def test_the_starter_source_builds_without_warnings() -> None:
    warnings: list[Lint] = []
    build_suite(STARTER_SOURCE, warnings.append)
    assert warnings == []


def test_a_pinned_argument_the_postcondition_ignores_is_warned_about_with_place_and_hint(tmp_path: Path) -> None:
    path = _source(tmp_path, INVENTORY, "(post (= (next inventory_checked) true)))")
    warnings, failure = _build(path)
    (lint,) = warnings
    assert lint.code == "pinned_argument_ignored"
    assert lint.place.startswith("case fig1-case1: world model hardware, transition check_inventory (line ")
    assert "the checks pin item_name of check_inventory but its postcondition ignores it" in lint.message
    assert lint.hint == "make the effect depend on the pinned arguments, or pin only what the manual fixes"
    assert failure == "" or f"warning: {lint.render()}" in failure  # beside the witness when the case fails


def test_a_write_whose_effect_ignores_every_identifying_parameter_is_warned_about(tmp_path: Path) -> None:
    path = _source(tmp_path, PICKER, "(post (= (next picked) true)))")
    warnings, failure = _build(path)
    codes = {lint.code: lint for lint in warnings}
    lint = codes["argument_insensitive_effect"]
    assert lint.place.startswith("case fig1-case1: world model hardware, transition assign_warehouse_picker (line ")
    assert "the postcondition ignores item_id" in lint.message and "(param id)" in lint.hint
    assert failure == "" or f"warning: {lint.render()}" in failure


def test_the_command_prints_each_warning_with_its_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _source(tmp_path, INVENTORY, "(post (= (next inventory_checked) true)))")
    main([str(path)])
    err = capsys.readouterr().err
    assert f"warning: {path}: case fig1-case1: world model hardware, transition check_inventory (line " in err


def test_a_new_source_stores_each_case_s_oracle_plan_and_its_episodes_are_graded_for_writes(tmp_path: Path) -> None:
    """Issue 31: `mantra author` stores plans for hand-written suites from now on (the starter, written before,
    says `oracle_plans: false` and keeps its bytes)."""
    from mantra_env.domains import load_domain
    from mantra_env.env import MantraEnv
    from mantra_env.oracle import oracle_plan

    source = load_source(STARTER_SOURCE)
    assert source.oracle_plans is False and build_suite(STARTER_SOURCE).cases[0].oracle_plan is None
    keep = next(case for case in source.cases if case.id == "fig1-case1")
    data = source.model_copy(update={"cases": [keep]}).model_dump(mode="json", exclude_defaults=True)
    del data["oracle_plans"]  # a new source leaves it out
    path = tmp_path / "source.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    (case,) = build_suite(path).cases
    domain = load_domain("operations")
    solved = oracle_plan(case.model_copy(update={"oracle_plan": None}), domain.tool_specs(), source.bound)
    assert case.oracle_plan is not None and [call.model_dump(mode="json") for call in case.oracle_plan] == solved
    assert any(call.tool == "assign_warehouse_picker" for call in case.oracle_plan)

    from mantra_env.case import Suite, SuiteManifest

    env = MantraEnv(Suite(manifest=SuiteManifest(name="s", domain="operations", case_count=1), cases=[case]), domain)
    env.reset(options={"case": case.id})
    for call in case.oracle_plan:  # the compliant run, with one escalation nobody asked for in the middle
        env.step(json.dumps({"tool": call.tool, "arguments": call.arguments}))
        if call.tool == "check_inventory":
            env.step('{"tool": "escalate_to_manager", "arguments": {"request_id": "HW-2841", "reason": "unasked"}}')
    env.step('{"final_answer": "done"}')
    verdict = env.last_verdict
    assert verdict is not None and verdict.graded_for_writes and verdict.checks_passed and not verdict.passed
    assert [write.tool for write in verdict.unrequested_writes or ()] == ["escalate_to_manager"]
