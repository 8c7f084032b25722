"""Rules that reach every sample and the outcome mix (issue 33 items 2 and 4), on recorded answers
(tests/generators/fixtures/rules-mini): a section that governs purchase orders without sharing a word with the
section that places them reaches that sample's writers only with ``references.governing_rules``; with
``scenarios.outcome_mix`` the scenario writer is asked for the mix and each scenario keeps its intended outcome."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from mantra_env.case import Case, load_suite
from mantra_env.domains import Domain, load_domain
from mantra_env.generators import prompts
from mantra_env.generators.artifacts import Outcome, ToolRelevance
from mantra_env.generators.config import (
    ConfigError,
    GenerationConfig,
    ReferenceSettings,
    ScenarioSettings,
    load_config,
    parse_config,
)
from mantra_env.generators.document import GOVERNING_HEADING, DocumentGraph
from mantra_env.generators.export import UNWRITTEN_ACTION, export_suite, outcome_counts
from mantra_env.generators.pipeline import run_pipeline
from mantra_env.generators.references import GoverningCheck, ReferencesCheck
from mantra_env.generators.replay import PROVIDER

FIXTURE = Path(__file__).parent / "fixtures" / "rules-mini"
RULES = "No spend leaves this desk"
MIX = {"action": 0.6, "refusal": 0.25, "information": 0.15}


@pytest.fixture(autouse=True)
def fresh_replay_log() -> Iterator[None]:
    PROVIDER.served.clear()
    yield
    PROVIDER.served.clear()


def _config(responses: str, **update: Any) -> GenerationConfig:
    config = load_config(FIXTURE / "config.yaml")
    replay = config.llm.replay.model_copy(update={"path": FIXTURE / responses})
    return config.model_copy(update={"llm": config.llm.model_copy(update={"replay": replay}), **update})


def _run(config: GenerationConfig, run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """Run to the scenarios stage; what each scenario writer was sent, by its excerpt's first line."""
    sent: dict[str, list[Any]] = {}
    original = prompts.scenarios

    def recording(excerpt: str, *args: Any, **kwargs: Any) -> prompts.Messages:
        messages = original(excerpt, *args, **kwargs)
        sent[excerpt.splitlines()[0]] = [excerpt, messages]
        return messages

    monkeypatch.setattr(prompts, "scenarios", recording)
    run_pipeline(config, run_dir, stop_after="scenarios")
    return sent


def _words(text: str) -> set[str]:
    return {word.lower() for word in re.findall(r"[A-Za-z_]{4,}", text)}


def test_the_governing_section_shares_no_word_with_the_section_it_governs() -> None:
    rules, buying = (FIXTURE / "manual.md").read_text(encoding="utf-8").split("## 2.")
    assert not (_words(rules.split("## 1.")[1]) - {"standing", "rules"}) & _words(buying)


@pytest.mark.slow  # a pipeline run on recorded answers (litellm's import alone takes seconds)
def test_governing_rules_reach_the_sample_they_govern(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config("responses-on.yaml", references=ReferenceSettings(governing_rules=True))
    sent = _run(config, tmp_path / "run", monkeypatch)
    graph = DocumentGraph.model_validate_json((tmp_path / "run" / "graph" / "graph.json").read_text("utf-8"))
    assert [chunk.governs for chunk in graph.nodes] == [[], ["create_purchase_order"], []]
    assert not [edge for edge in graph.edges if edge.kind == "reference"]  # no reference joins the two sections

    excerpt = sent["## 2. Buying Hardware"][0]
    assert GOVERNING_HEADING in excerpt and RULES in excerpt
    assert RULES in sent["## 1. Standing Rules"][0] and GOVERNING_HEADING not in sent["## 1. Standing Rules"][0]
    relevance = ToolRelevance.model_validate_json((tmp_path / "run" / "relevance" / "s000.json").read_text("utf-8"))
    assert relevance.tools == ["get_employee", "check_inventory", "create_purchase_order"]  # the rule's look-up added
    assert relevance.governing == ["c01"]
    assert "tool_relevance/s000/governing#0" in PROVIDER.served

    from mantra_env.generators.review.run import ReviewRun

    (tmp_path / "run" / "validation").mkdir()  # the review opens validated runs; the excerpt needs no result
    shown = ReviewRun(tmp_path / "run", given_config=config).excerpt("s000")
    assert shown == excerpt  # the reviewer reads what the writers read


@pytest.mark.slow  # a pipeline run on recorded answers (litellm's import alone takes seconds)
def test_without_the_key_the_governing_section_stays_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sent = _run(_config("responses-off.yaml"), tmp_path / "run", monkeypatch)
    excerpt = sent["## 2. Buying Hardware"][0]
    assert RULES not in excerpt and GOVERNING_HEADING not in excerpt
    assert "governs" not in (tmp_path / "run" / "graph" / "graph.json").read_text("utf-8")
    relevance = (tmp_path / "run" / "relevance" / "s000.json").read_text("utf-8")
    assert "governing" not in relevance and "get_employee" not in relevance
    assert not any("governing" in key for key in PROVIDER.served)


def test_the_references_requests_are_the_same_with_the_key() -> None:
    """The key asks a request of its own; the references stage's requests (and so the graph and the samples of a
    recording a re-audit continues) do not change."""
    tools = load_domain("operations").tool_specs()
    check = ReferencesCheck(node_id="c01", known=["c00", "c01"], related=[])
    assert "governs" not in json.dumps(check.output().model_json_schema())
    assert "governs" not in json.dumps(prompts.references("c01", "text", "toc", {}))
    asked = prompts.governing_rules("c01", "text", "toc", tools)
    assert "governs" in asked[0]["content"] and "create_purchase_order" in asked[1]["content"]
    governing = GoverningCheck(tool_names=[t.name for t in tools])
    assert "governs" in json.dumps(governing.output().model_json_schema())
    with pytest.raises(Exception, match="not a tool; did you mean 'create_purchase_order'"):
        governing.check(governing.output().model_validate({"governs": ["create_purchase_ordr"]}))


@pytest.mark.slow  # two pipeline runs on recorded answers
def test_the_key_keeps_the_graph_and_the_samples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _run(_config("responses-off.yaml"), tmp_path / "off", monkeypatch)
    off_served = sorted(key for key in PROVIDER.served if key.startswith("document_extraction/"))  # asked in parallel
    PROVIDER.served.clear()
    _run(_config("responses-on.yaml", references=ReferenceSettings(governing_rules=True)), tmp_path / "on", monkeypatch)
    assert sorted(key for key in PROVIDER.served if key.startswith("document_extraction/")) == off_served
    assert sorted(key for key in PROVIDER.served if key.startswith("governing_rules/")) == [
        f"governing_rules/c0{i}#0" for i in range(3)
    ]
    graphs = [
        DocumentGraph.model_validate_json((tmp_path / run / "graph" / "graph.json").read_text("utf-8"))
        for run in ("off", "on")
    ]
    assert graphs[0].edges == graphs[1].edges
    assert [chunk.model_copy(update={"governs": []}) for chunk in graphs[1].nodes] == graphs[0].nodes
    samples = [(tmp_path / run / "samples" / "samples.json").read_text("utf-8") for run in ("off", "on")]
    assert samples[0] == samples[1]


@pytest.mark.slow  # a pipeline run on recorded answers (litellm's import alone takes seconds)
def test_the_outcome_mix_is_asked_for_and_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config("responses-mix.yaml", scenarios=ScenarioSettings.model_validate({"outcome_mix": MIX}))
    sent = _run(config, tmp_path / "run", monkeypatch)
    system = sent["## 2. Buying Hardware"][1][0]["content"]
    assert "60 % action, 25 % refusal, 15 % information" in system
    artifact = json.loads((tmp_path / "run" / "scenarios" / "s000.json").read_text("utf-8"))
    assert [scenario["outcome"] for scenario in artifact["scenarios"]] == ["action"]
    assert "outcome" not in artifact["scenarios"][0]["draft"]


@pytest.mark.slow  # a pipeline run on recorded answers (litellm's import alone takes seconds)
def test_without_the_mix_the_scenario_request_is_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sent = _run(_config("responses-off.yaml"), tmp_path / "run", monkeypatch)
    assert "intended outcomes" not in sent["## 2. Buying Hardware"][1][0]["content"]
    assert "outcome" not in (tmp_path / "run" / "scenarios" / "s000.json").read_text("utf-8")


@pytest.mark.parametrize("mix", ["{action: 0.5, refusal: 0.25}", "{action: 1.2, refusal: -0.2}", "{actions: 1}"])
def test_an_unusable_outcome_mix_is_refused(mix: str) -> None:
    with pytest.raises(ConfigError, match="outcome_mix"):
        parse_config(f"document_path: m.md\ndomain: operations\nscenarios:\n  outcome_mix: {mix}\n")


def _retail_cases(count: int | None = None) -> tuple[Domain, list[Case]]:
    domain = load_domain("retail")
    return domain, load_suite(domain.suite_dirs["generated"]).cases[:count]


def test_the_refusal_share_counts_the_cases_whose_oracle_writes_nothing() -> None:
    domain, cases = _retail_cases()
    counts = outcome_counts(cases, domain, {cases[0].id: "refusal", cases[1].id: "action"})
    # the shipped retail suite (v5, v6; v4 held 62 refusals of 160 cases, v3 46 of 80): 90 of its 260 are refusals
    assert (counts["refusals"], len(cases)) == (90, 260)
    assert (counts["intended_refusal"], counts["intended_action"], counts["intended_information"]) == (1, 1, 0)


@pytest.mark.slow
def test_the_manifest_reports_outcomes_only_with_the_mix() -> None:
    domain, cases = _retail_cases(3)
    plain, _ = export_suite("x", domain, 0, "", cases, {})
    mixed, _ = export_suite("x", domain, 0, "", cases, {}, intended={case.id: "action" for case in cases})
    assert not {"refusals", "intended_action"} & set(plain.manifest.stage_counts)
    writes = {spec.name for spec in domain.tool_specs() if spec.kind == "write"}
    expected = sum(not any(call.tool in writes for call in case.oracle_plan or []) for case in mixed.cases)
    assert mixed.manifest.stage_counts["refusals"] == expected
    assert mixed.manifest.stage_counts["intended_action"] == len(mixed.cases)


@pytest.mark.slow
def test_a_case_asked_as_an_action_whose_oracle_writes_nothing_is_screened_out_only_with_the_key() -> None:
    domain, shipped = _retail_cases()
    writes = {spec.name for spec in domain.tool_specs() if spec.kind == "write"}
    writing = [case for case in shipped if any(call.tool in writes for call in case.oracle_plan or [])]
    reading = [case for case in shipped if not any(call.tool in writes for call in case.oracle_plan or [])]
    cases = [*writing[:2], *reading[:2]]
    intended: dict[str, Outcome | None] = {case.id: "action" for case in cases}
    intended[cases[3].id] = "refusal"  # asked as a refusal: a plan without a write is what was asked
    plain, _ = export_suite("x", domain, 0, "", cases, {}, intended=intended)
    screened, why = export_suite("x", domain, 0, "", cases, {}, intended=intended, screen_unwritten_actions=True)
    assert [case.id for case in plain.cases] == [case.id for case in cases]
    assert "intent_refused" not in plain.manifest.stage_counts  # off: the manifest keeps its bytes
    assert [case.id for case in screened.cases] == [cases[0].id, cases[1].id, cases[3].id]
    assert why == {
        cases[2].id: f"{UNWRITTEN_ACTION}: the scenario asks for an action, but the oracle's plan makes no write"
    }
    assert screened.manifest.stage_counts["intent_refused"] == 1
    assert screened.manifest.stage_counts["trivially_passed"] == 0
    assert screened.manifest.screening == {UNWRITTEN_ACTION: 1}


@pytest.mark.slow
def test_a_run_with_the_mix_reports_outcomes_in_its_manifest(tmp_path: Path) -> None:
    ops_mini = Path(__file__).parent / "fixtures" / "ops-mini"
    recorded = yaml.safe_load((ops_mini / "responses.yaml").read_text(encoding="utf-8"))
    for key, answer in recorded["responses"].items():
        if key.startswith("scenario_generation/"):
            for scenario in answer["scenarios"]:
                scenario["outcome"] = "action"
    (tmp_path / "responses.yaml").write_text(yaml.safe_dump(recorded), encoding="utf-8")
    config = load_config(ops_mini / "config.yaml")
    replay = config.llm.replay.model_copy(update={"path": tmp_path / "responses.yaml"})
    mix = ScenarioSettings.model_validate({"outcome_mix": MIX})
    config = config.model_copy(update={"llm": config.llm.model_copy(update={"replay": replay}), "scenarios": mix})
    result = run_pipeline(config, tmp_path / "run")
    assert result.suite is not None
    counts = result.suite.manifest.stage_counts
    assert counts["intended_action"] == counts["final"] > 0
    assert 0 <= counts["refusals"] <= counts["final"]
