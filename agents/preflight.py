"""Fail fast, once: before a run with a model agent, check the key litellm needs and send one request with the
agent's real parameters (system prompt, tools, tool choice) to the model's endpoint.

An unreachable server, a missing or refused key, an unknown model or an endpoint that rejects the request (no
tool calling, an unsupported parameter) is then one :class:`PreflightError` line naming the alias, the URL and the
fix, before any run row or episode is written, instead of one error episode per attempt. A 429 passes (the key
works; the runner backs off); 5xx and time-outs are tried :data:`ATTEMPTS` times.

An endpoint of the models file (``api_base``) is first probed with one TCP connection, before litellm is imported:
that import alone takes seconds (16 s measured on a loaded two-core machine), so a server that is not running, a
refused port or an unknown host is reported at once and not retried (it is no transient fault).
"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any
from urllib.parse import urlsplit

from mantra_env.agents.provider_errors import Fault, classify
from mantra_env.agents.strands_agent import StrandsAgent
from mantra_env.case import Suite
from mantra_env.domains import Domain
from mantra_env.env import MantraEnv
from mantra_env.errors import MantraError

ATTEMPTS = 3
TIMEOUT_S = 30.0


class PreflightError(MantraError, RuntimeError):
    """The model agent cannot work at all: wrong key, model, endpoint or parameters (one line, with the fix)."""


def preflight(agent: object, suite: Suite, domain: Domain, timeout_s: float = TIMEOUT_S) -> None:
    """Check that ``agent`` can reach its model, or raise :class:`PreflightError`; agents without a model and the
    bundled local server (whose warm-up request is its check) pass at once."""
    if not isinstance(agent, StrandsAgent) or agent.model.local_server:
        return
    config = agent.model
    where = f"{config.alias} ({config.model} at {agent.api_base or 'the provider default endpoint'})"
    unreachable = _unreachable(agent.api_base, timeout_s)
    if unreachable is not None:
        raise PreflightError(f"{where}: {_advice(Fault('connection', False, unreachable), timeout_s)}")
    import litellm

    litellm.suppress_debug_info = True
    if not config.api_key:
        missing = litellm.validate_environment(model=config.model, api_base=agent.api_base).get("missing_keys")
        if missing:
            raise PreflightError(
                f"{where}: no API key; set {' or '.join(missing)} or api_key in the models file (MANTRA_MODELS_FILE)"
            )
    for attempt in range(ATTEMPTS):
        fault = asyncio.run(_first_request(agent, suite, domain, timeout_s))
        if fault is None or fault.kind == "rate_limit" or (fault.model_fault and "context" not in fault.reason):
            return
        if not fault.retry or attempt + 1 == ATTEMPTS:
            raise PreflightError(f"{where}: {_advice(fault, timeout_s)}")


def _unreachable(api_base: str | None, timeout_s: float) -> str | None:
    """Why nothing can answer at ``api_base`` (an unknown host, a refused port), from one TCP connection; None when
    it connects, when there is no ``api_base`` (a provider's default endpoint), or when the probe is inconclusive
    (a time-out or another error: the real request then says what is wrong)."""
    url = urlsplit(api_base or "")
    if not url.hostname:
        return None
    try:
        port = url.port or (443 if url.scheme == "https" else 80)
        with socket.create_connection((url.hostname, port), timeout=min(timeout_s, 5.0)):
            return None
    except socket.gaierror as error:
        return f"unknown host {url.hostname!r} ({error.strerror})"
    except ConnectionRefusedError:
        return f"nothing listens on {url.hostname}:{port} (connection refused)"
    except (OSError, ValueError):  # a time-out, no route, a malformed port: let the request decide
        return None


async def _first_request(agent: StrandsAgent, suite: Suite, domain: Domain, timeout_s: float) -> Fault | None:
    """Send the first request of the suite's first case through the agent's own model adapter; its fault, if any."""
    observation, _ = MantraEnv(suite, domain).reset(seed=0, options={"case": suite.cases[0].id})
    opening = json.loads(observation)
    tools = [
        {"name": spec["name"], "description": spec["description"], "inputSchema": {"json": spec["parameters"]}}
        for spec in opening["tools"]
    ]
    model: Any = agent.strands_model()
    model.client_args["timeout"] = min(timeout_s, agent.request_timeout_s)
    messages = [{"role": "user", "content": [{"text": opening["prompt"]}]}]
    try:
        async for _ in model.stream(messages, tools, opening["system"]):
            pass
    except Exception as error:  # every failure is reported as one line below, never as a traceback
        return classify(error) or Fault("unknown", False, f"{type(error).__name__}: {error}")
    return None


def _advice(fault: Fault, timeout_s: float) -> str:
    """What went wrong and how to fix it, by the kind of fault."""
    fixes = {
        "connection": "cannot reach the endpoint; start the server or fix api_base in the models file",
        "timeout": f"no answer within {timeout_s:g} s; check that the server is up and serving this model",
        "auth": "the provider refused the API key; check the key (its environment variable or api_key)",
        "not_found": "the endpoint does not know this model or path; check the model name and api_base",
        "configuration": (
            "the endpoint rejected a request with the agent's tools; use a model/endpoint with tool calling "
            "or remove the unsupported parameter from the alias's params"
        ),
        "server": "the provider keeps failing (5xx); try again later",
        "bad_output": "the endpoint does not answer like an OpenAI-compatible chat API; check api_base",
        "model": "the first request does not fit the model (context window); use a model with a larger context",
    }
    return f"{fixes.get(fault.kind, 'the first request failed')} [{fault.reason}]"
