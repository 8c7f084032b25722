"""The generation pipeline end to end on recorded LLM answers (tests/generators/fixtures/ops-mini).

The recorded answers plant one defect per stage that must catch it; these tests assert which stage caught each
and which edit fixed it, that every exported case validates and replays, and that an interrupted run resumes
without recomputing a stage or repeating a request.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mantra_env import oracle
from mantra_env.agents.base import play
from mantra_env.agents.scripted import OraclePolicy
from mantra_env.case import Suite, load_suite
from mantra_env.domains import load_domain
from mantra_env.env import MantraEnv
from mantra_env.generators import validation, worldgen
from mantra_env.generators.artifacts import SampleValidation
from mantra_env.generators.config import GenerationConfig, load_config
from mantra_env.generators.export import first_valid_round
from mantra_env.generators.pipeline import PipelineResult, run_pipeline
from mantra_env.generators.replay import PROVIDER
from mantra_env.generators.rundir import STAGE_ORDER
from mantra_env.smt import CaseSolver
from mantra_env.worldmodel import parse_model
from tests.spies import keyword_calls

FIXTURE = Path(__file__).parent / "fixtures" / "ops-mini"
pytestmark = pytest.mark.slow


@pytest.fixture
def config() -> GenerationConfig:
    return load_config(FIXTURE / "config.yaml")


@pytest.fixture(autouse=True)
def fresh_replay_log() -> Iterator[None]:
    PROVIDER.served.clear()
    yield
    PROVIDER.served.clear()


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[PipelineResult, list[str]]:
    PROVIDER.served.clear()
    result = run_pipeline(load_config(FIXTURE / "config.yaml"), tmp_path_factory.mktemp("a") / "run")
    return result, list(PROVIDER.served)


def _validation(result: PipelineResult) -> SampleValidation:
    path = result.run_dir / "validation" / "s000.json"
    return SampleValidation.model_validate_json(path.read_text(encoding="utf-8"))


def _applied(validation: SampleValidation, stage: str) -> list[dict[str, Any]]:
    return [e for e in validation.history if e.get("stage") == stage and e.get("applied") is True]


def test_manual_to_exported_suite(finished: tuple[PipelineResult, list[str]]) -> None:
    result, _ = finished
    assert result.stages_run == list(STAGE_ORDER)
    assert result.suite is not None and result.suite_dir is not None
    suite = load_suite(result.suite_dir)
    assert suite.manifest.stage_counts == {
        "generated": 3,
        "forward_validated": 3,
        "backward_validated": 3,
        "final": 3,
        "human_validated": 0,
        "awaiting_human": 0,
        "rejected": 0,
        "replay_failed": 0,
        "trivially_passed": 0,
    }
    # the oracle's canonical plan reads first, so s000-3 (which allows set_delivery_options before
    # check_inventory) passes the premature-write screen
    assert not suite.manifest.screening
    assert [case.id for case in suite.cases] == ["ops-mini-s000-1", "ops-mini-s000-2", "ops-mini-s000-3"]
    domain = load_domain("operations")
    tools = domain.tool_specs()
    env = MantraEnv(suite, domain)
    for case in suite.cases:
        assert case.provenance.source == "generated" and case.validation.status == "validated"
        record = case.validation
        assert record.first_valid_round == first_valid_round(record.history, record.rounds) is not None
        assert case.sample_chunk_ids == ["c03", "c04"]
        solver = CaseSolver(case.world_model, case.checks, 16, case.scenario.valuation, tools)
        assert solver.forward().status == "consistent", case.id
        assert [r.status for r in solver.backward_all()] == ["consistent"] * len(case.checks), case.id
        replay = play(env, OraclePolicy(), case.id)
        assert replay["verdict"].passed, case.id
        assert not [call for call in replay["trace"].calls if call.error is not None], case.id


def test_document_graph_and_samples(finished: tuple[PipelineResult, list[str]]) -> None:
    result, served = finished
    graph = json.loads((result.run_dir / "graph" / "graph.json").read_text())
    references = {(e["source"], e["target"]) for e in graph["edges"] if e["kind"] == "reference"}
    assert references == {("c01", "c03"), ("c03", "c04")}  # c04 -> c03 merged into the c03 -> c04 edge
    assert "document_extraction/c03/read1#0" in served  # c03 asked to read c04 before answering
    assert (result.run_dir / "graph" / "graph.png").stat().st_size > 1000
    samples = json.loads((result.run_dir / "samples" / "samples.json").read_text())
    assert [s["node_ids"] for s in samples["samples"]] == [["c03", "c04"]]
    usage = json.loads((result.run_dir / "usage.json").read_text())["total"]
    assert usage["check_generation"]["requests"] == 4 and usage["check_generation"]["repairs"] == 1


def test_syntax_errors_are_caught_by_the_repair_loop(finished: tuple[PipelineResult, list[str]]) -> None:
    result, served = finished
    # The check with a missing comma and the world model naming `tru` were each sent back once.
    assert "check_generation/s000-2#1" in served and "check_generation/s000-2#2" not in served
    assert "smt_full_pass/s000#1" in served and "smt_full_pass/s000#2" not in served
    checks = json.loads((result.run_dir / "checks" / "s000.json").read_text())["scenarios"][1]["checks"]
    assert any(c["id"] == "po" for c in checks)


def test_wrong_precondition_is_repaired_in_the_world_model(finished: tuple[PipelineResult, list[str]]) -> None:
    result, _ = finished
    validation = _validation(result)
    first = [e for e in validation.history if e.get("round") == 1 and e.get("query") == "forward"][:3]
    assert [(e["scenario"], e["status"]) for e in first] == [
        ("s000-1", "conflict"),
        ("s000-2", "conflict"),
        ("s000-3", "consistent"),
    ]
    assert "create_purchase_order precondition (= legacy_checked true) is false" in str(first[1]["witness"])
    rejected = [e for e in validation.history if e.get("stage") == "conflict_resolution"]
    assert rejected and rejected[0]["applied"] is False and "index 5 is out of range" in str(rejected[0]["error"])
    (fix,) = _applied(validation, "fix_repair")
    assert fix["locus"] == "world_model" and fix["edits"] == [
        {
            "author": "llm",
            "reason": "4.1 asks for the legacy portal only above 7 days or for lab requests",
            "op": "remove_condition",
            "tool": "create_purchase_order",
            "section": "pre",
            "index": 4,
        }
    ]
    transition = parse_model(validation.model).transition("create_purchase_order")
    assert transition is not None and len(transition.pre) == 4


def test_missing_precedes_is_added_by_check_resolution(finished: tuple[PipelineResult, list[str]]) -> None:
    result, _ = finished
    validation = _validation(result)
    conflict = next(e for e in validation.history if e.get("scenario") == "s000-1" and e.get("status") == "conflict")
    assert str(conflict["witness"]).startswith('0. assign_warehouse_picker(item_id="HWM2741", quantity=1)\n1. check_')
    (added,) = _applied(validation, "locus_reassessment")
    assert added["scenario"] == "s000-1" and added["edits"][0]["op"] == "add_check"
    outcome = next(o for o in validation.outcomes if o.scenario_id == "s000-1")
    assert [c.text for c in outcome.checks if c.id == "inventory_first"] == [
        'CALL check_inventory(item_name="Dell UltraSharp U2723QE") PRECEDES CALL assign_warehouse_picker()'
    ]


def test_over_restrictive_check_is_removed_by_the_backward_audit(finished: tuple[PipelineResult, list[str]]) -> None:
    result, _ = finished
    validation = _validation(result)
    flagged = [e for e in validation.history if e.get("query") == "backward" and e.get("status") == "conflict"]
    assert [(e["scenario"], e["check"]) for e in flagged] == [("s000-3", "delivery_before_po")]
    (removed,) = _applied(validation, "backward_audit")
    assert removed["edits"][0]["op"] == "remove_check" and removed["edits"][0]["id"] == "delivery_before_po"
    outcome = next(o for o in validation.outcomes if o.scenario_id == "s000-3")
    assert "delivery_before_po" not in [c.id for c in outcome.checks]
    assert all(o.status == "validated" and o.rounds == 3 for o in validation.outcomes)


def _snapshot(run_dir: Path) -> dict[str, int]:
    return {
        str(path.relative_to(run_dir)): path.stat().st_mtime_ns
        for path in run_dir.rglob("*")
        if path.is_file() and "llm_cache" not in path.parts and path.name not in ("usage.json", "session.log")
    }


def test_interrupted_run_resumes_without_repeating_work(
    tmp_path: Path, config: GenerationConfig, finished: tuple[PipelineResult, list[str]], monkeypatch: Any
) -> None:
    reference, _ = finished
    run_dir = tmp_path / "b" / "run"

    def stop_after_checks(stage: str) -> None:
        if stage == "checks":
            raise KeyboardInterrupt  # as if the process were killed right after the stage

    with pytest.raises(KeyboardInterrupt):
        run_pipeline(config, run_dir, on_stage=stop_after_checks)
    before = _snapshot(run_dir)
    first = list(PROVIDER.served)

    # Second interruption, in the middle of the validation stage: after the batched judge answered.
    original = PROVIDER.answer

    def killed_at_check_resolution(key: str) -> str:
        if key.startswith("locus_reassessment/"):
            raise KeyboardInterrupt
        return original(key)

    monkeypatch.setattr(PROVIDER, "answer", killed_at_check_resolution)
    with pytest.raises(KeyboardInterrupt):
        run_pipeline(config, run_dir)
    monkeypatch.setattr(PROVIDER, "answer", original)
    second = list(PROVIDER.served)[len(first) :]

    stages: list[str] = []
    result = run_pipeline(config, run_dir, on_stage=stages.append)
    third = list(PROVIDER.served)[len(first) + len(second) :]

    assert stages == ["validation", "export"]  # the stages finished before either interruption are not rerun
    unchanged = {name: mtime for name, mtime in _snapshot(run_dir).items() if name in before}
    assert unchanged == before  # no artifact of a finished stage was rewritten
    served = first + second + third
    assert len(served) == len(set(served)), "a request was sent twice"
    assert sorted(served) == sorted(finished[1])  # the same requests as the uninterrupted run, once each
    assert result.usage["conflict_resolution"].cache_hits == 1  # asked before the kill, a cache hit after it
    usage = json.loads((run_dir / "usage.json").read_text())
    assert len(usage["invocations"]) == 3  # the totals add up the three invocations
    assert usage["total"]["check_generation"]["requests"] == 4
    assert result.suite is not None and reference.suite is not None
    assert result.suite.model_dump() == reference.suite.model_dump()
    assert (run_dir / "validation" / "s000.json").read_text() == (
        reference.run_dir / "validation" / "s000.json"
    ).read_text()


def test_from_stage_recomputes_from_the_cache(
    tmp_path: Path, config: GenerationConfig, finished: tuple[PipelineResult, list[str]]
) -> None:
    reference, _ = finished
    run_dir = tmp_path / "a" / "run"
    run_pipeline(config, run_dir)
    PROVIDER.served.clear()
    result = run_pipeline(config, run_dir, from_stage="validation")
    assert result.stages_run == ["validation", "export"]
    assert PROVIDER.served == []  # every judge answer came from the cache
    assert result.usage["conflict_resolution"].cache_hits == 1
    assert result.suite is not None and reference.suite is not None
    assert result.suite.model_dump() == reference.suite.model_dump()


def test_regenerating_the_suite_gives_the_same_bytes(
    tmp_path: Path, finished: tuple[PipelineResult, list[str]]
) -> None:
    reference, _ = finished
    result = run_pipeline(load_config(FIXTURE / "config.yaml"), tmp_path / "elsewhere" / "run")
    assert result.suite_dir is not None and reference.suite_dir is not None
    for name in ("suite.jsonl", "manifest.json"):
        exported = (result.suite_dir / name).read_bytes()
        assert exported == (reference.suite_dir / name).read_bytes(), name
        # nothing of the run's place or time: the two run directories differ, the exported bytes do not
        assert str(tmp_path).encode() not in exported and str(reference.run_dir).encode() not in exported
    assert b'"run_id":null' in (result.suite_dir / "suite.jsonl").read_bytes()


def _exported_with(tmp_path: Path, section: str, **keys: object) -> tuple[PipelineResult, Suite]:
    """The fixture's run with ``keys`` of one config ``section`` set, and the suite it exported."""
    config = load_config(FIXTURE / "config.yaml")
    changed = getattr(config, section).model_copy(update=keys)
    result = run_pipeline(config.model_copy(update={section: changed}), tmp_path / "run")
    assert result.suite_dir is not None
    return result, load_suite(result.suite_dir)


def test_check_provenance_records_the_checks_stage_or_the_judges_stage_and_round(
    tmp_path: Path, finished: tuple[PipelineResult, list[str]]
) -> None:
    reference, _ = finished
    assert reference.suite_dir is not None
    assert b"written_by" not in (reference.suite_dir / "suite.jsonl").read_bytes()  # off by default
    result, suite = _exported_with(tmp_path, "export", check_provenance=True)
    by_case = {case.id: {c.id: c.written_by for c in case.checks} for case in suite.cases}
    (added,) = _applied(_validation(result), "locus_reassessment")
    assert by_case["ops-mini-s000-1"]["inventory_first"] == f"locus_reassessment round {added['round']}"
    others = [by for checks in by_case.values() for cid, by in checks.items() if cid != "inventory_first"]
    assert others and set(others) == {"checks"}


def test_the_configs_solver_modes_are_recorded_in_each_exported_case(
    tmp_path: Path, finished: tuple[PipelineResult, list[str]]
) -> None:
    reference, _ = finished
    assert reference.suite_dir is not None
    assert b"canonical_lists" not in (reference.suite_dir / "suite.jsonl").read_bytes()  # off by default
    _, suite = _exported_with(tmp_path, "validation", canonical_lists=True)
    # re-validation and the oracle read the mode from here (mantra validate, authoring.validate_case)
    assert suite.cases and all(case.validation.solver_modes == {"canonical_lists": True} for case in suite.cases)


def test_the_witness_key_reaches_the_solvers_and_the_exports_oracle_but_not_the_suites_bytes(
    tmp_path: Path, finished: tuple[PipelineResult, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    reference, _ = finished
    assert reference.suite_dir is not None
    asked = {
        "validation": keyword_calls(monkeypatch, validation, "CaseSolver"),
        "oracle": keyword_calls(monkeypatch, oracle, "CaseSolver"),
    }
    # the loop's solvers, and the oracle that fills the plans' arguments, screens and stores the plans
    result, suite = _exported_with(tmp_path, "validation", witness_at_own_length=True)
    assert all(asked.values())
    assert all(kwargs.get("witness_at_own_length") is True for found in asked.values() for kwargs in found)
    assert result.suite_dir is not None
    assert b"witness_at_own_length" not in (result.suite_dir / "suite.jsonl").read_bytes()  # carried, not written
    assert suite.cases and all(case.validation.solver_modes == {} for case in suite.cases)  # read back: off


def test_the_encode_key_asks_each_world_model_to_encode_at_the_runs_bound_and_changes_no_byte_of_the_suite(
    tmp_path: Path, finished: tuple[PipelineResult, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    reference, _ = finished
    assert reference.suite_dir is not None
    checks = keyword_calls(monkeypatch, worldgen, "FullPassCheck")
    result, _ = _exported_with(tmp_path, "validation", encode_world_models=True)
    bound = load_config(FIXTURE / "config.yaml").validation.z3_trace_bound
    bounds = [kwargs.get("encode_bound") for kwargs in checks]
    assert bounds and set(bounds) == {bound}  # the fixture's models encode: the same answers are accepted
    assert result.suite_dir is not None
    assert (result.suite_dir / "suite.jsonl").read_bytes() == (reference.suite_dir / "suite.jsonl").read_bytes()
