"""A spy on a callable a module looks up by name (a class it constructs, a function it calls)."""

from __future__ import annotations

from typing import Any

import pytest


def keyword_calls(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[dict[str, Any]]:
    """Replace ``module.name`` for the test by a wrapper that calls the original and records each call's keyword
    arguments, in call order, in the list returned."""
    calls: list[dict[str, Any]] = []
    real = getattr(module, name)

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return calls
