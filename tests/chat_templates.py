"""Real chat templates for the export tests, and a renderer that applies them as Hugging Face does.

The templates are Qwen2.5's, Qwen3's and Llama 3.1's as llama.cpp ships them (``models/templates/*.jinja``),
read at test time from the source distribution of the llama-cpp-python release pyproject.toml pins (it vendors
llama.cpp). ``make templates`` downloads that archive into ``.cache/templates`` (``make test`` does it first); it
is never copied into the repository. Without it the tests skip, saying the command, except under ``make test``
(``MANTRA_REQUIRE_TEMPLATES=1``), where a missing template fails.

:func:`render` is what ``transformers``' ``apply_chat_template`` does with a template (its
``_compile_jinja_template``): a sandboxed Jinja environment with ``trim_blocks`` and ``lstrip_blocks``, the
``loopcontrols`` extension, a ``tojson`` filter that is ``json.dumps`` (non-ASCII kept, no sorting), the globals
``raise_exception`` (a template's own refusal, raised as ``TemplateError``) and ``strftime_now``, and the
messages, tools and special tokens as variables.
"""

from __future__ import annotations

import json
import os
import re
import tarfile
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
import jinja2.ext
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("MANTRA_TEMPLATES_DIR", ROOT / ".cache" / "templates"))
TEMPLATES = {
    "qwen2.5": "Qwen-Qwen2.5-7B-Instruct.jinja",
    "qwen3": "Qwen-Qwen3-0.6B.jinja",
    "llama3.1": "meta-llama-Llama-3.1-8B-Instruct.jinja",
}
SPECIAL_TOKENS = {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}  # Llama's; Qwen's use none
FETCH = "make templates"


def pinned_version() -> str:
    """The llama-cpp-python version pyproject.toml pins (the ``local`` extra)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    match = re.search(r"llama-cpp-python\[server\]==([0-9.]+)", text)
    assert match is not None, "pyproject.toml no longer pins llama-cpp-python[server]==X"
    return match.group(1)


def sdist() -> Path:
    return CACHE / f"llama_cpp_python-{pinned_version()}.tar.gz"


def template_text(name: str) -> str:
    """The text of template ``name`` (a key of :data:`TEMPLATES`), read from the cached source archive; fails
    under ``MANTRA_REQUIRE_TEMPLATES=1`` and skips elsewhere when the archive is absent."""
    return _templates(sdist())[name]


@cache
def _templates(archive: Path) -> dict[str, str]:
    """Every template of :data:`TEMPLATES` from ``archive``, in one pass (a 76 MB gzip read once)."""
    if not archive.is_file():
        message = f"{archive} is missing: run `{FETCH}` (downloads the pinned llama-cpp-python source archive)"
        if os.environ.get("MANTRA_REQUIRE_TEMPLATES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    folder = f"{archive.name.removesuffix('.tar.gz')}/vendor/llama.cpp/models/templates/"
    wanted = {folder + file: name for name, file in TEMPLATES.items()}
    found: dict[str, str] = {}
    with tarfile.open(archive) as tar:
        for member in tar:
            if member.name in wanted:
                file = tar.extractfile(member)
                assert file is not None, f"{member.name} is not a file in {archive}"
                found[wanted[member.name]] = file.read().decode("utf-8")
                if len(found) == len(wanted):
                    break
    missing = sorted(set(wanted) - {folder + TEMPLATES[name] for name in found})
    assert not missing, f"{archive} lacks {missing}: did llama.cpp rename them? update TEMPLATES"
    return found


def _raise_exception(message: str) -> None:
    raise jinja2.TemplateError(message)


def _tojson(
    value: Any, ensure_ascii: bool = False, indent: int | None = None, separators: Any = None, sort_keys: bool = False
) -> str:
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


@cache
def _compiled(name: str) -> jinja2.Template:
    environment = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols]
    )
    environment.filters["tojson"] = _tojson
    environment.globals["raise_exception"] = _raise_exception
    environment.globals["strftime_now"] = lambda form: datetime.now().strftime(form)
    return environment.from_string(template_text(name))


def render(name: str, messages: list[Any], tools: list[Any] | None = None) -> str:
    """``messages`` (and ``tools``) rendered by template ``name`` as ``apply_chat_template(tokenize=False)``."""
    return _compiled(name).render(messages=messages, tools=tools, add_generation_prompt=False, **SPECIAL_TOKENS)
