"""Model aliases: ``--model`` takes an alias from the models file or any litellm model string.

The shipped file is ``agents/models.yaml``; ``MANTRA_MODELS_FILE`` names a user file whose aliases are added
to (and replace) the shipped ones. ``${VAR}`` and ``${VAR:-default}`` are expanded from the environment.

Named roles (``roles:`` in the file) say which alias plays which part where more than one model is involved:
``agent`` (the model under evaluation; the runner's default), ``generator`` (the generation pipeline's
artifact-writing stages) and ``judge`` (its repair judges). ``role:<name>`` may be given wherever a model is.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mantra_env.errors import MantraError, did_you_mean, error_path
from mantra_env.userfiles import expand_env as expand_env  # re-exported: it was defined here
from mantra_env.userfiles import load_yaml, read_text


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


ROLES = ("agent", "generator", "judge")


@dataclass(frozen=True)
class ModelsFile:
    """The merged models files: the default alias, every alias, and the alias of each role."""

    default: str
    models: dict[str, ModelConfig]
    roles: dict[str, str]


def _check_role(role: str, source: str = "", given_as: str = "") -> None:
    if role not in ROLES:
        where = f"{source}: " if source else ""
        within = f" in {given_as!r}" if given_as else ""
        hint = did_you_mean(role, ROLES)
        raise ModelConfigError(f"{where}unknown role {role!r}{within}; {hint or 'roles: ' + ', '.join(ROLES)}")


def _read_roles(data: dict[str, Any], source: str) -> dict[str, str]:
    roles = data.get("roles") or {}
    if not isinstance(roles, dict):
        raise ModelConfigError(f"{source}: 'roles' must map a role ({', '.join(ROLES)}) to a model alias")
    for role in roles:
        _check_role(str(role), source=source)
    return {str(role): str(alias) for role, alias in roles.items()}


def _read_file(
    text: str, source: str, env: Mapping[str, str] | None
) -> tuple[str | None, dict[str, ModelConfig], dict[str, str]]:
    data = load_yaml(text, source, ModelConfigError, os.environ if env is None else env)
    if not isinstance(data, dict) or not isinstance(data.get("models", {}), dict):
        raise ModelConfigError(f"{source}: expected a mapping with a 'models' mapping of alias -> settings")
    models: dict[str, ModelConfig] = {}
    for alias, settings in (data.get("models") or {}).items():
        if not isinstance(settings, dict):
            raise ModelConfigError(f"{source}: models.{alias} must be a mapping with at least 'model'")
        try:
            models[str(alias)] = ModelConfig(alias=str(alias), **settings)
        except ValidationError as exc:
            problems = "; ".join(f"{error_path(e['loc'])}: {e['msg']}" for e in exc.errors())
            raise ModelConfigError(f"{source}: models.{alias}: {problems}") from None
    default = data.get("default")
    return (str(default) if default else None), models, _read_roles(data, source)


def load_models_file(env: Mapping[str, str] | None = None) -> ModelsFile:
    """The shipped models file merged with the user's (``MANTRA_MODELS_FILE``), validated."""
    shipped = resources.files("mantra_env.agents").joinpath("models.yaml").read_text(encoding="utf-8")
    default, models, roles = _read_file(shipped, "agents/models.yaml", env)
    user_file = (os.environ if env is None else env).get("MANTRA_MODELS_FILE")
    if user_file:
        path = Path(user_file)
        text = read_text(path, "the models file named by MANTRA_MODELS_FILE", ModelConfigError)
        user_default, user_models, user_roles = _read_file(text, str(path), env)
        models.update(user_models)
        roles.update(user_roles)
        default = user_default or default
    if not default or default not in models:
        raise ModelConfigError(f"the default model alias {default!r} is not defined in the models files")
    for role, alias in roles.items():
        if alias not in models and "/" not in alias:
            raise ModelConfigError(
                f"role {role!r} names {alias!r}, which is neither an alias nor a litellm model string"
            )
    return ModelsFile(default, models, roles)


def load_models(env: Mapping[str, str] | None = None) -> tuple[str, dict[str, ModelConfig]]:
    """The default alias and every alias, shipped file first, then the user's file."""
    loaded = load_models_file(env)
    return loaded.default, loaded.models


def resolve_model(name: str | None, env: Mapping[str, str] | None = None) -> ModelConfig:
    """An alias, ``role:<role>`` (or None for the default) becomes its config; anything with a '/' is a litellm
    model string."""
    loaded = load_models_file(env)
    default, models = loaded.default, loaded.models
    key = name or loaded.roles.get("agent", default)
    if key.startswith("role:"):
        role = key.removeprefix("role:")
        _check_role(role, given_as=key)
        key = loaded.roles.get(role, default)
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
