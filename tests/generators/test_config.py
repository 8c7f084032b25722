"""The generation config: the paper's example parses, values are validated with errors that say where and how
to fix them, ``${VAR:-default}`` is expanded, and the shipped example config loads."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mantra_env.generators.config import ConfigError, load_config, parse_config

PAPER_CONFIG = Path(__file__).parent / "fixtures" / "paper-example-config.yaml"
SHIPPED = Path(__file__).parents[2] / "mantra_env" / "domains" / "operations" / "generation.yaml"
RETAIL = SHIPPED.parents[1] / "retail" / "generation.yaml"
TELECOM = SHIPPED.parents[1] / "telecom" / "generation.yaml"


def _paper_config() -> str:
    """The paper's example config (a fixture of ours mirroring App. "Pipeline Configuration") plus the domain."""
    return PAPER_CONFIG.read_text(encoding="utf-8") + "domain: operations\n"


def test_the_papers_example_config_parses() -> None:
    config = parse_config(_paper_config(), "paper", Path("/tmp"), env={})
    assert config.llm.stage_overrides["smt_full_pass"].model == "gpt-5.4"
    assert config.sampling.strategy == "coverage_islands" and config.sampling.scenarios_per_sample == 4
    assert config.validation.n_rounds == 5 and config.validation.z3_trace_bound == 16
    assert config.llm.ollama_base_url == "http://localhost:11434"
    assert config.chunking.max_chunk_tokens == 4000 and config.web_ui.port == 8080
    assert not config.llm.cache.enabled and config.llm.retry.max_attempts == 16
    assert config.document_path == Path("/tmp/environments/operations/instructions.md")
    assert config.run_dir_base == Path("runs")


def test_environment_variables_are_expanded() -> None:
    text = _paper_config().replace("default_model: gpt-5.4", "default_model: ${MODEL:-fallback}")
    assert parse_config(text, "c", env={"MODEL": "openai/x"}).llm.default_model == "openai/x"
    assert parse_config(text, "c", env={}).llm.default_model == "fallback"
    with_key = parse_config(_paper_config(), "c", env={"OPENAI_API_KEY": "sk-1"})
    assert with_key.llm.openai_api_key == "sk-1"


def test_stage_model_falls_back_to_the_defaults() -> None:
    text = "document_path: m.md\ndomain: operations\nllm:\n  default_model: openai/a\n  judge_model: openai/j\n"
    text += "  stage_overrides:\n    check_generation: {model: openai/c, params: {max_tokens: 9}}\n"
    config = parse_config(text, "c", env={})
    assert config.stage_model("scenario_generation").model == "openai/a"
    assert config.stage_model("conflict_resolution").model == "openai/j"
    assert config.stage_model("check_generation").model == "openai/c"
    assert config.stage_model("check_generation").params == {"max_tokens": 9}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("domain: operations\n", "document_path: Field required"),
        ("document_path: m.md\ndomain: operations\nsampling:\n  stratgy: uniform\n",
         "sampling.stratgy: unknown key; did you mean 'strategy'"),
        ("document_path: m.md\ndomain: operations\nsampling:\n  strategy: random\n",
         "sampling.strategy: Input should be 'uniform', 'coverage_driven'"),
        ("document_path: m.md\ndomain: operations\nllm:\n  stage_overrides:\n    check_gen: {model: x}\n",
         "unknown stage 'check_gen' in stage_overrides; did you mean 'check_generation'"),
        ("document_path: m.md\ndomain: operations\nsampling:\n  min_nodes_per_sample: 5\n  max_nodes_per_sample: 2\n",
         re.escape("min_nodes_per_sample (5) is larger than max_nodes_per_sample (2)")),
        ("document_path: m.md\ndomain: operations\nvalidation:\n  z3_trace_bound: 0\n",
         "validation.z3_trace_bound: Input should be greater than or equal to 1"),
        ("- a\n- b\n", "expected a mapping of settings"),
        ("document_path: [unclosed\n", "not valid YAML"),
    ],
)  # fmt: skip
def test_bad_configs_are_clear_errors(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(text, "bad.yaml", env={})


def test_missing_manual_is_named(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("document_path: nowhere.md\ndomain: operations\n")
    with pytest.raises(ConfigError, match=r"document_path .*nowhere.md does not exist"):
        load_config(path)


def test_shipped_example_config_loads() -> None:
    config = load_config(SHIPPED, env={})
    assert config.document_path.name == "manual.md" and config.document_path.is_file()
    assert config.env_bindings.path is not None and config.env_bindings.path.is_file()
    assert config.llm.default_model == "role:generator" and config.llm.judge_model == "role:judge"


@pytest.mark.parametrize("path", [RETAIL, TELECOM], ids=["retail", "telecom"])
def test_domain_configs_have_the_papers_settings_and_answer_through_files(path: Path) -> None:
    config = load_config(path, env={})
    assert config.domain == path.parent.name and config.document_path == path.parent / "manual.md"
    assert config.env_bindings.path == path.parent / "bindings.yaml" and config.env_bindings.path.is_file()
    assert config.sampling.strategy == "coverage_islands" and config.sampling.scenarios_per_sample == 4
    assert config.validation.z3_trace_bound == 16 and config.validation.n_rounds == 5
    assert config.llm.default_model == "exchange/exchange"
    assert config.llm.judge_model in (
        "exchange/exchange",
        "exchange/judge",
    )  # retail v4: judges in a folder of their own
    other = load_config(path, env={"MANTRA_GENERATOR_MODEL": "exchange/writers", "MANTRA_JUDGE_MODEL": "qwen"})
    assert (other.llm.default_model, other.llm.judge_model) == ("exchange/writers", "qwen")
    # a model named in the environment answers every stage, the stages with folders of their own too
    assert {stage.model for stage in other.llm.stage_overrides.values()} <= {"exchange/writers"}


def test_airline_config_has_the_papers_settings_and_enough_samples_for_60_cases() -> None:
    airline = RETAIL.parents[1] / "airline" / "generation.yaml"
    config = load_config(airline, env={})
    assert config.domain == "airline" and config.document_path == airline.parent / "manual.md"
    assert config.env_bindings.path == airline.parent / "bindings.yaml" and config.env_bindings.path.is_file()
    assert config.sampling.strategy == "coverage_islands" and config.sampling.scenarios_per_sample == 4
    assert config.validation.z3_trace_bound == 16 and config.validation.n_rounds == 5
    assert config.llm.default_model == config.llm.judge_model == "exchange/exchange"
    kept = 57 / 92  # the paper's airline keep rate
    assert config.sampling.max_samples * config.sampling.scenarios_per_sample * kept >= 60


def test_tool_sources(tmp_path: Path) -> None:
    from mantra_env.domains import load_domain
    from mantra_env.generators.config import ConfigError, domain_tools

    domain = load_domain("operations")
    base = "document_path: m.md\ndomain: operations\n"
    names = [spec.name for spec in domain.tool_specs()]
    callable_config = parse_config(base + "tools: {format: python_callable, source: mantra_env.domains.operations}\n")
    assert [spec.name for spec in domain_tools(callable_config, domain)] == names
    (tmp_path / "tools.json").write_text(json.dumps([domain.tool_specs()[0].model_dump(mode="json")]))
    json_config = parse_config(base + "tools: {format: json, source: tools.json}\n", "c", tmp_path)
    assert [spec.name for spec in domain_tools(json_config, domain)] == names[:1]
    for text, message in [
        ("tools: {format: json, source: missing.json}\n", "cannot read a list of tool specs"),
        ("tools: {format: json}\n", "names no file"),
        ("tools: {format: python_callable, source: no.such.module}\n", "cannot import it"),
        ("tools: {format: python_callable, source: json}\n", "has no DOMAIN"),
        ("tools: {format: domain, source: railway}\n", "railway"),
    ]:
        with pytest.raises((ConfigError, LookupError), match=message):
            domain_tools(parse_config(base + text, "c", tmp_path), domain)


def test_d12_a_non_utf8_config_is_named(tmp_path: Path) -> None:
    path = tmp_path / "generation.yaml"
    path.write_bytes(b"domain: operations\ndocument_path: caf\xe9.md\n")
    with pytest.raises(ConfigError, match=r"generation.yaml:2:19: the config is not UTF-8 text"):
        load_config(path)


def test_d14_a_duplicate_key_in_the_config_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"c:2:1: not valid YAML: the key 'domain' is given twice"):
        parse_config("domain: operations\ndomain: retail\n", "c", env={})
