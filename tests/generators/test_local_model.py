"""The first generation stages against the bundled local model through its OpenAI-compatible endpoint, with
grammar-constrained decoding (slow: about a minute on two cores). Quality is poor; parseability is the point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mantra_env.domains import load_domain
from mantra_env.generators.artifacts import ReferenceAnswer
from mantra_env.generators.config import parse_config
from mantra_env.generators.pipeline import run_pipeline
from mantra_env.generators.relevance import answer_model

MANUAL = Path(__file__).parent / "fixtures" / "ops-mini" / "manual.md"


@pytest.mark.slow
def test_local_model_completes_the_first_stages_with_parseable_output(tmp_path: Path) -> None:
    config = parse_config(
        f"""
document_path: {MANUAL}
domain: operations
llm: {{default_model: local, judge_model: local, request_timeout_s: 3600,
       retry: {{max_attempts: 2, base_delay_s: 0, max_repair_attempts: 1}}}}
sampling: {{max_parallel_samples: 1, min_nodes_per_sample: 2, max_nodes_per_sample: 2, max_samples: 1}}
""",
        "local config",
        env={},
    )
    # request_timeout_s: a request takes ~10 s here but minutes on a loaded machine; parseability is the point.
    result = run_pipeline(config, tmp_path / "run", stop_after="relevance")
    assert result.stages_run == ["graph", "samples", "relevance"]
    entries = [json.loads(path.read_text()) for path in (tmp_path / "run" / "llm_cache").rglob("*.json")]
    assert {entry["request"]["response_format"]["type"] for entry in entries} == {"json_object"}  # the grammar
    by_stage: dict[str, list[str]] = {}
    for entry in entries:
        by_stage.setdefault(entry["key"].split("/")[0], []).append(entry["response"])
    assert len(by_stage["document_extraction"]) >= 5  # one per chunk of the manual
    for answer in by_stage["document_extraction"]:
        ReferenceAnswer.model_validate_json(answer)  # raw model output parses, first time
    tools = [spec.name for spec in load_domain("operations").tool_specs()]
    for answer in by_stage["tool_relevance"]:
        answer_model(tools).model_validate_json(answer)
    relevance = json.loads((tmp_path / "run" / "relevance" / "s000.json").read_text())
    assert relevance["tools"] and set(relevance["tools"]) <= set(tools)
    assert result.usage["document_extraction"].input_tokens > 1000  # the server counted real prompts
