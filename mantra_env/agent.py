"""What the runner needs of an agent: drive one episode of a :class:`~mantra_env.env.MantraEnv` and report
what it cost. The environment holds the trace and grades it; the agent only acts.

Who is to blame decides what an episode's failure becomes:

- the *model* (a malformed call, an unusable answer, a request its own output made invalid): the agent returns
  an :class:`AgentReport` with ``model_fault`` saying what happened, and the episode is graded as it stands
  (a failed attempt that counts);
- the *infrastructure* (provider, network, key, configuration): the agent raises :class:`InfrastructureError`
  with a ``kind``; the runner retries the kinds in :data:`RETRYABLE_KINDS` and stores the episode as an
  ``error`` that no score counts;
- anything else escaping an agent is a harness bug: stored as an ``error`` of kind ``internal``.

This module is the core's side of that contract; the classification of provider exceptions lives with the
agents (``agents/provider_errors.py``), so the core never imports a provider library.

An agent takes its steps with ``await mantra_env.stepper.step(env, action)``: under the runner the step runs in
the episode's worker thread, so a domain tool that blocks or raises ends that episode only (a direct
``env.step`` works too, but runs the tool on the event loop).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from mantra_env.errors import MantraError
from mantra_env.store.records import Usage

if TYPE_CHECKING:
    from mantra_env.env import MantraEnv

#: Kinds of :class:`InfrastructureError` worth retrying: the same request may succeed a moment later.
RETRYABLE_KINDS = frozenset({"connection", "timeout", "rate_limit", "server", "bad_output"})
#: Kinds that no retry fixes: the key, the model name or the request the harness builds is wrong.
CONFIGURATION_KINDS = frozenset({"auth", "not_found", "configuration"})
#: Every kind an ``error`` episode may carry (``internal``: an unexpected exception, a harness bug).
ERROR_KINDS = RETRYABLE_KINDS | CONFIGURATION_KINDS | {"internal"}


class InfrastructureError(MantraError, RuntimeError):
    """The agent's model or transport failed; ``kind`` is one of :data:`ERROR_KINDS` (e.g. timeout,
    rate_limit, connection, server, auth, not_found, configuration, bad_output)."""

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        super().__init__(f"{kind}: {message}")

    @property
    def retryable(self) -> bool:
        """Whether a retry of the episode may succeed (a provider hiccup rather than a wrong key or model)."""
        return self.kind in RETRYABLE_KINDS


@dataclass
class AgentReport:
    """What an agent tells the runner after an episode (the trace and verdict live in the env).

    ``model_fault`` is set when the episode ended because of the model's own output (e.g. a request its
    tool call made unencodable, a context-window overflow, an empty answer): the episode is still graded, and
    the reason is stored with it.
    """

    usage: Usage = field(default_factory=Usage)
    messages: list[Any] = field(default_factory=list)
    step_latencies_s: list[float] = field(default_factory=list)
    final_answer: str = ""
    model_fault: str = ""


class EpisodeAgent(Protocol):
    """Drives one episode: the env is reset to ``case_id`` by the agent, which acts until it answers."""

    name: str

    async def run(self, env: MantraEnv, case_id: str, seed: int) -> AgentReport: ...
