"""An endpoint that nothing can answer fails the preflight at once, from one TCP connection, before litellm (whose
import alone took 16 s on a loaded machine) is loaded and without retries (issue 34, point 10)."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from mantra_env.agents import preflight as module
from mantra_env.agents.models import ModelConfig
from mantra_env.agents.preflight import PreflightError, preflight
from mantra_env.agents.strands_agent import StrandsAgent
from mantra_env.domains import find_suite

DOMAIN, SUITE = find_suite("operations")
assert DOMAIN is not None
CONFIG = ModelConfig(alias="gone", model="openai/gpt-4o-mini", api_key="not-a-key")


def closed_port() -> int:
    """A loopback port on which nothing listens (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_refused_port_fails_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    async def no_request(*_: Any) -> None:
        raise AssertionError("the preflight sent a request to an endpoint where nothing listens")

    monkeypatch.setattr(module, "_first_request", no_request)
    port = closed_port()
    agent = StrandsAgent(CONFIG, api_base=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(PreflightError, match=rf"cannot reach the endpoint.*nothing listens on 127\.0\.0\.1:{port}"):
        preflight(agent, SUITE, DOMAIN)


def test_the_probe_names_an_unknown_host_and_passes_a_listening_one() -> None:
    assert module._unreachable("http://no-such-host.invalid:8000/v1", 5.0) is not None
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        assert module._unreachable(f"http://127.0.0.1:{listening.getsockname()[1]}/v1", 5.0) is None
    assert module._unreachable(None, 5.0) is None  # a provider's default endpoint: the request decides
    assert module._unreachable("http://127.0.0.1:notaport/v1", 5.0) is None  # inconclusive: the request decides
