from pathlib import Path

import pytest

from mantra_env.agents.models import ModelConfigError, expand_env, load_models, resolve_model


def test_default_is_the_bundled_local_model() -> None:
    config = resolve_model(None, env={})
    assert config.alias == "local" and config.local_server


def test_alias_expands_environment_variables() -> None:
    config = resolve_model("qwen", env={"OLLAMA_BASE_URL": "http://gpu-box:11434", "MANTRA_QWEN_MODEL": "qwen3:14b"})
    assert config.model == "ollama_chat/qwen3:14b"
    assert config.api_base == "http://gpu-box:11434"
    assert resolve_model("qwen", env={}).api_base == "http://localhost:11434"


def test_any_litellm_string_is_accepted() -> None:
    assert resolve_model("anthropic/claude-3-haiku", env={}).model == "anthropic/claude-3-haiku"


def test_unknown_alias_suggests_the_closest() -> None:
    with pytest.raises(ModelConfigError, match="unknown model 'qwn': did you mean 'qwen'"):
        resolve_model("qwn", env={})


def test_user_models_file_extends_and_overrides(tmp_path: Path) -> None:
    user = tmp_path / "models.yaml"
    user.write_text("default: mine\nmodels:\n  mine:\n    model: openai/my-model\n    api_base: http://x/v1\n")
    default, models = load_models(env={"MANTRA_MODELS_FILE": str(user)})
    assert default == "mine" and "qwen" in models and models["mine"].api_base == "http://x/v1"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("models: [1, 2]", "expected a mapping"),
        ("models:\n  bad:\n    api_base: x\n", "models.bad: model: Field required"),
        ("models:\n  bad: just-a-string\n", "models.bad must be a mapping"),
        ("models: {a: {model: x/y}}\n  - :", "not valid YAML"),
    ],
)
def test_bad_user_models_file_names_the_problem(tmp_path: Path, content: str, message: str) -> None:
    user = tmp_path / "models.yaml"
    user.write_text(content)
    with pytest.raises(ModelConfigError, match=message):
        load_models(env={"MANTRA_MODELS_FILE": str(user)})


def test_missing_user_file() -> None:
    with pytest.raises(ModelConfigError, match=r"models.yaml: cannot read the models file named by MANTRA_MODELS_FILE"):
        load_models(env={"MANTRA_MODELS_FILE": "/nonexistent/models.yaml"})


def test_expand_env() -> None:
    assert expand_env("${A:-x}-${B}-${C:-}", {"B": "b"}) == "x-b-"


def test_a_provider_limit_caps_the_episodes_in_flight(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_model("local", env={}).max_concurrency == 1  # one llama.cpp slot
    assert resolve_model("qwen", env={"MANTRA_QWEN_CONCURRENCY": "2"}).max_concurrency == 2

    from mantra_env.mantra_cli.run import _agent_factory, parser

    monkeypatch.setenv("MANTRA_QWEN_CONCURRENCY", "2")
    args = parser().parse_args(["--model", "qwen", "--concurrency", "8"])
    name, make_agent = _agent_factory(args.model, args, [])
    assert (name, args.concurrency, make_agent().name) == ("qwen", 2, "strands:qwen")


def test_roles_name_the_generator_and_judge_models(tmp_path: Path) -> None:
    assert resolve_model("role:judge", env={}).alias == "local"
    user = tmp_path / "models.yaml"
    user.write_text("roles:\n  judge: qwen\n  generator: openai/gpt-5.4\n")
    env = {"MANTRA_MODELS_FILE": str(user)}
    assert resolve_model("role:judge", env=env).alias == "qwen"
    assert resolve_model("role:generator", env=env).model == "openai/gpt-5.4"
    assert resolve_model("role:agent", env=env).alias == "local"  # the shipped role stays
    assert resolve_model(None, env=env).alias == "local"


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        ("roles:\n  juge: qwen\n", None, "unknown role 'juge'; did you mean 'judge'"),
        ("roles:\n  judge: nothing\n", None, "role 'judge' names 'nothing', which is neither an alias"),
        ("roles: [judge]\n", None, "'roles' must map a role"),
        ("default: local\n", "role:jugde", "unknown role 'jugde' in 'role:jugde'; did you mean 'judge'"),
    ],
)
def test_bad_roles_are_clear_errors(tmp_path: Path, content: str, name: str | None, message: str) -> None:
    user = tmp_path / "models.yaml"
    user.write_text(content)
    with pytest.raises(ModelConfigError, match=message):
        resolve_model(name, env={"MANTRA_MODELS_FILE": str(user)})


def test_d12_a_non_utf8_models_file_is_named(tmp_path: Path) -> None:
    user = tmp_path / "models.yaml"
    user.write_bytes(b"models:\n  x:\n    model: openai/\xff\n")
    with pytest.raises(ModelConfigError, match=r"models.yaml:3:19: the models file named by MANTRA_MODELS_FILE is not"):
        load_models(env={"MANTRA_MODELS_FILE": str(user)})


def test_d14_a_duplicate_alias_is_refused(tmp_path: Path) -> None:
    user = tmp_path / "models.yaml"
    user.write_text("models:\n  x:\n    model: openai/a\n  x:\n    model: openai/b\n")
    with pytest.raises(ModelConfigError, match=r"models.yaml:4:3: not valid YAML: the key 'x' is given twice"):
        load_models(env={"MANTRA_MODELS_FILE": str(user)})


def test_d17_an_environment_variable_cannot_change_the_models_file_structure(tmp_path: Path) -> None:
    user = tmp_path / "models.yaml"
    user.write_text("models:\n  x:\n    model: openai/x\n    api_base: ${BASE}\n    max_concurrency: ${N:-4}\n")
    env = {"MANTRA_MODELS_FILE": str(user), "BASE": "http://x\n    max_concurrency: 0"}
    _, models = load_models(env=env)
    assert models["x"].api_base == "http://x\n    max_concurrency: 0" and models["x"].max_concurrency == 4
