"""Fixtures of the domain tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import gymnasium as gym
import pytest


@pytest.fixture
def forget_user_domains() -> Iterator[None]:
    """After the test: drop the gymnasium ids it registered and the domains it imported from MANTRA_DOMAINS_PATH
    (their folders are gone with the test's tmp_path)."""
    registered = set(gym.registry)
    yield
    for identifier in set(gym.registry) - registered:
        del gym.registry[identifier]
    for module in [name for name in sys.modules if name.startswith("mantra_user_domains.")]:
        del sys.modules[module]
