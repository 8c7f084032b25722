"""Model aliases: ``--model`` takes an alias from the models file or any litellm model string.

The shipped file is ``agents/models.yaml``; ``MANTRA_MODELS_FILE`` names a user file whose aliases are added
to (and replace) the shipped ones. ``${VAR}`` and ``${VAR:-default}`` are expanded from the environment.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mantra_env.errors import MantraError, did_you_mean

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class ModelConfigError(MantraError, ValueError):
    """The models file or a --model value is not usable."""


class ModelConfig(BaseModel):
    """How to reach one model through litellm."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    alias: str
    model: str = Field(min_length=1, description="litellm model string, e.g. openai/gpt-4o-mini")
    description: str = ""
    api_base: str | None = None
    api_key: str | None = None
    local_server: bool = Field(default=False, description="Served by the bundled llama.cpp server.")
    params: dict[str, Any] = Field(default_factory=dict, description="Extra litellm completion parameters.")
    max_concurrency: int | None = Field(
        default=None, ge=1, description="Episodes in flight against this provider at most (caps --concurrency)."
    )


def expand_env(text: str, env: Mapping[str, str] | None = None) -> str:
    """Expand ``${VAR}`` and ``${VAR:-default}``; an unset variable without default expands to ''."""
    values = os.environ if env is None else env

    def replace(match: re.Match[str]) -> str:
        value = values.get(match.group(1))
        return value if value else (match.group(2) or "")

    return _VAR.sub(replace, text)


def _read_file(text: str, source: str, env: Mapping[str, str] | None) -> tuple[str | None, dict[str, ModelConfig]]:
    try:
        data = yaml.safe_load(expand_env(text, env))
    except yaml.YAMLError as exc:
        raise ModelConfigError(f"{source}: not valid YAML: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("models", {}), dict):
        raise ModelConfigError(f"{source}: expected a mapping with a 'models' mapping of alias -> settings")
    models: dict[str, ModelConfig] = {}
    for alias, settings in (data.get("models") or {}).items():
        if not isinstance(settings, dict):
            raise ModelConfigError(f"{source}: models.{alias} must be a mapping with at least 'model'")
        try:
            models[str(alias)] = ModelConfig(alias=str(alias), **settings)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise ModelConfigError(f"{source}: models.{alias}: {problems}") from None
    default = data.get("default")
    return (str(default) if default else None), models


def load_models(env: Mapping[str, str] | None = None) -> tuple[str, dict[str, ModelConfig]]:
    """The default alias and every alias, shipped file first, then the user's file."""
    shipped = resources.files("agents").joinpath("models.yaml").read_text(encoding="utf-8")
    default, models = _read_file(shipped, "agents/models.yaml", env)
    user_file = (os.environ if env is None else env).get("MANTRA_MODELS_FILE")
    if user_file:
        path = Path(user_file)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ModelConfigError(f"MANTRA_MODELS_FILE={user_file}: cannot read it ({exc.strerror})") from None
        user_default, user_models = _read_file(text, str(path), env)
        models.update(user_models)
        default = user_default or default
    if not default or default not in models:
        raise ModelConfigError(f"the default model alias {default!r} is not defined in the models files")
    return default, models


def resolve_model(name: str | None, env: Mapping[str, str] | None = None) -> ModelConfig:
    """An alias (or None for the default) becomes its config; anything with a '/' is a litellm model string."""
    default, models = load_models(env)
    key = name or default
    if key in models:
        return models[key]
    if "/" in key:
        return ModelConfig(alias=key, model=key)
    known = ", ".join(sorted(models))
    hint = did_you_mean(key, models)
    hint = f"{hint} " if hint else ""
    raise ModelConfigError(
        f"unknown model {key!r}: {hint}use an alias ({known}) or a litellm model string such as 'openai/gpt-4o-mini'"
    )
