"""Recorded LLM responses: a litellm provider that serves them, and a recorder that writes them.

A model named ``replay/<anything>`` is served by :class:`ReplayProvider`, registered with litellm as a custom
provider, so the pipeline reaches it through litellm exactly like a real endpoint. Responses are looked up by
the request key the client sends (``<stage>/<subject>#<attempt>``, see :mod:`generators.llm`), not by the
prompt text, so a fixture survives prompt wording changes; a missing key is an error that names it.

Fixture files: YAML (``responses:`` mapping key → answer; an answer may be a mapping, dumped as JSON, or a
string sent verbatim, e.g. to plant a syntax error) or JSONL (``{"key": ..., "response": ..., "role": ...}`` per
line, which is what :class:`Recorder` appends while a real model or an exchange folder answers; ``role`` is the
writer's role, :data:`generators.exchange.ROLES`, and is not needed to replay).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import yaml

from mantra_env.errors import MantraError

REPLAY_PROVIDER = "replay"


class ReplayMissing(MantraError, LookupError):
    """No recorded response for a request key."""


def load_fixture(path: Path) -> dict[str, str]:
    """Key → response text of a fixture file (YAML or JSONL)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise MantraError(f"{path}: cannot read the replay fixture: {error.strerror}") from None
    answers: dict[str, Any] = {}
    if path.suffix == ".jsonl":
        for lineno, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    entry = json.loads(line)
                    answers[str(entry["key"])] = entry["response"]
                except (ValueError, KeyError, TypeError):
                    raise MantraError(f'{path}:{lineno}: expected {{"key": ..., "response": ...}}') from None
    else:
        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as error:
            raise MantraError(f"{path}: not valid YAML: {error}") from None
        if not isinstance(data, dict) or not isinstance(data.get("responses"), dict):
            raise MantraError(f"{path}: expected a mapping 'responses:' of request key -> answer")
        answers = {str(key): value for key, value in data["responses"].items()}
    return {
        key: value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        for key, value in answers.items()
    }


class ReplayProvider:
    """Serves recorded answers by request key; counts what it served (tests assert no request repeats)."""

    def __init__(self) -> None:
        self.answers: dict[str, str] = {}
        self.source: Path | None = None
        self.served: list[str] = []
        self.missed: list[str] = []
        """Keys asked for with no recorded answer (each became that request's failure)."""
        self._lock = threading.Lock()

    def load(self, path: Path | None) -> None:
        self.source = path
        self.answers = load_fixture(path) if path is not None else {}
        self.missed = []

    def answer(self, key: str) -> str:
        with self._lock:
            if key not in self.answers:
                where = self.source or "(no fixture: set llm.replay.path)"
                near = sorted(k for k in self.answers if k.split("#")[0] == key.split("#")[0])
                hint = f"; recorded for this request: {', '.join(near)}" if near else ""
                self.missed.append(key)
                raise ReplayMissing(f"no recorded response for request {key!r} in {where}{hint}")
            self.served.append(key)
            return self.answers[key]


PROVIDER = ReplayProvider()
_installed = False


def install_replay(path: Path | None) -> ReplayProvider:
    """Register the ``replay`` provider with litellm (once) and load ``path`` into it."""
    global _installed
    if path is not None:
        PROVIDER.load(path)
    if not _installed:
        import litellm
        from litellm.llms.custom_llm import CustomLLM
        from litellm.utils import custom_llm_setup

        class _Handler(CustomLLM):
            def completion(self, *args: Any, **kwargs: Any) -> Any:
                metadata = (kwargs.get("litellm_params") or {}).get("metadata") or {}
                text = PROVIDER.answer(str(metadata.get("mantra_request_key", "")))
                return litellm.ModelResponse(
                    model=str(kwargs.get("model", "replay")),
                    choices=[{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                    usage={"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
                )

            async def acompletion(self, *args: Any, **kwargs: Any) -> Any:
                return self.completion(*args, **kwargs)

        litellm.custom_provider_map = [
            *[p for p in litellm.custom_provider_map if p.get("provider") != REPLAY_PROVIDER],
            {"provider": REPLAY_PROVIDER, "custom_handler": _Handler()},
        ]
        custom_llm_setup()  # type: ignore[no-untyped-call]
        _installed = True
    return PROVIDER


class Recorder:
    """Appends every answer a real model gives, as a JSONL fixture the replay provider can serve."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def record(self, key: str, text: str, role: str) -> None:
        line = json.dumps({"key": key, "response": text, "role": role}, ensure_ascii=False)
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
