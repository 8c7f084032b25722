"""One :class:`Stage` record per model stage; every stage table of generation derives from the records."""

from __future__ import annotations

import ast
from pathlib import Path

from mantra_env.generators import config, exchange, rundir
from mantra_env.generators.answers import ANSWER_CHECKS
from mantra_env.generators.stages import JUDGE_STAGES, MODEL_STAGES, PIPELINE_STAGES, ROLES, STAGE_NAMES

GENERATORS = Path(__file__).resolve().parents[2] / "generators"


def test_each_model_stage_has_one_record_asked_within_a_pipeline_stage_in_order() -> None:
    assert len(set(STAGE_NAMES)) == len(MODEL_STAGES)
    positions = [PIPELINE_STAGES.index(stage.pipeline_stage) for stage in MODEL_STAGES]
    assert positions == sorted(positions), "the records go in the order of the pipeline stages they are asked in"


def test_the_stage_tables_derive_from_the_records() -> None:
    assert config.STAGES == STAGE_NAMES and rundir.STAGE_ORDER == PIPELINE_STAGES
    assert exchange.ROLES == {stage.name: stage.role for stage in MODEL_STAGES} == ROLES
    assert config.JUDGE_STAGES == JUDGE_STAGES == {stage.name for stage in MODEL_STAGES if stage.role == "judge"}
    assert {name: kind.__name__ for name, kind in ANSWER_CHECKS.items()} == {s.name: s.answer for s in MODEL_STAGES}


def test_a_judge_stage_defaults_to_the_judge_model() -> None:
    settings = config.parse_config(
        "document_path: m.md\ndomain: operations\nllm: {default_model: a/writer, judge_model: b/judge}\n"
    )
    for stage in MODEL_STAGES:
        assert settings.stage_model(stage.name).model == ("b/judge" if stage.judge else "a/writer"), stage.name


def test_every_stage_the_source_asks_a_model_has_a_record() -> None:
    # client.generate("check_generation", ...) and STAGE = "answer_repair": the names the requests carry.
    asked = set()
    for path in GENERATORS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "generate" and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    asked.add(first.value)
            elif isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["STAGE"]:
                assert isinstance(node.value, ast.Constant)
                asked.add(node.value.value)
    assert {"check_generation", "answer_repair", "smt_full_pass"} <= asked  # the scan sees both forms
    assert asked <= set(STAGE_NAMES), f"model stages without a record: {sorted(asked - set(STAGE_NAMES))}"
