"""Recorded LLM responses: a litellm provider that serves them, and a recorder that writes them.

A model named ``replay/<anything>`` is served by :class:`ReplayProvider`, registered with litellm as a custom
provider, so the pipeline reaches it through litellm exactly like a real endpoint. Responses are looked up by
the request key the client sends (``<stage>/<subject>#<attempt>``, see :mod:`mantra_env.generators.llm`), not by the
prompt text, so a fixture survives prompt wording changes; a missing key is an error that names it.

Fixture files: YAML (``responses:`` mapping key → answer; an answer may be a mapping, dumped as JSON, or a
string sent verbatim, e.g. to plant a syntax error) or JSONL (``{"key": ..., "response": ..., "role": ...}`` per
line, which is what :class:`Recorder` appends while a real model or an exchange folder answers; ``role`` is the
writer's role, :data:`mantra_env.generators.exchange.ROLES`, and is not needed to replay).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import yaml

from mantra_env.errors import MantraError
from mantra_env.limits import bounded, json_problem, lone_surrogate_text
from mantra_env.userfiles import read_text

REPLAY_PROVIDER = "replay"


class ReplayMissing(MantraError, LookupError):
    """No recorded response for a request key."""


class ReplayFixtureError(MantraError, ValueError):
    """A replay fixture (or a recording) that cannot be read; the message names the file and line."""


def load_fixture(path: Path) -> dict[str, str]:
    """Key → response text of a fixture file (YAML or JSONL).

    Raises:
        ReplayFixtureError: the file cannot be read, is not UTF-8, or a line or entry is not a recorded answer
            (not JSON, nested too deep, a response that is not valid Unicode text).
    """
    text = read_text(path, "replay fixture", ReplayFixtureError)
    answers: dict[str, Any] = {}
    if path.suffix == ".jsonl":
        for lineno, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    entry = json.loads(line)
                    key, response = entry["key"], entry["response"]
                except RecursionError:
                    raise ReplayFixtureError(f"{path}:{lineno}: the entry nests too deep to read") from None
                except (ValueError, KeyError, TypeError):
                    raise ReplayFixtureError(f'{path}:{lineno}: expected {{"key": ..., "response": ...}}') from None
                problem = json_problem(entry)
                if problem is not None:
                    raise ReplayFixtureError(f"{path}:{lineno}: the entry {problem}")
                answers[str(key)] = response
    else:
        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as error:
            raise ReplayFixtureError(f"{path}: not valid YAML: {error}") from None
        except RecursionError:
            raise ReplayFixtureError(f"{path}: not valid YAML: it nests too deep") from None
        if not isinstance(data, dict) or not isinstance(data.get("responses"), dict):
            raise ReplayFixtureError(f"{path}: expected a mapping 'responses:' of request key -> answer")
        answers = {str(key): value for key, value in data["responses"].items()}
        bad = next((key for key, value in answers.items() if lone_surrogate_text([key, value]) is not None), None)
        if bad is not None:
            raise ReplayFixtureError(
                f"{path}: the response of {bounded(bad)!r} holds a lone surrogate (not valid Unicode)"
            )
    try:
        return {
            key: value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            for key, value in answers.items()
        }
    except (ValueError, RecursionError):
        raise ReplayFixtureError(f"{path}: a response cannot be written as JSON (it nests too deep)") from None


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

    def record(self, key: str, text: str, role: str, model: str | None = None) -> None:
        """Append one answer with its writer's role and, when given, the model id the stage declared (the
        loader reads only key and response, so older recordings and these read alike)."""
        entry = {"key": key, "response": text, "role": role, **({"model": model} if model is not None else {})}
        line = json.dumps(entry, ensure_ascii=False)
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
