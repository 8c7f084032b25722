"""One table of what a model provider's exception means, shared by the agents and the generators' LLM client.

A provider call fails for one of three parties, and each is handled differently:

- the **provider** (network, 5xx, 429, time-out, a 200 whose body is unusable): retried with backoff, then an
  ``error`` episode of that kind, not scored;
- the **configuration** (wrong or missing key, unknown model, an endpoint that rejects the harness's very first
  request, e.g. one without tool calling): retrying cannot help; the preflight turns these into one line before a
  run, and mid-run they are ``error`` episodes (and enough consecutive ``auth`` errors stop the run);
- the **model** (its tool call cannot be sent back, its context overflowed, a 400 caused by what it wrote, its
  answer was cut off): a failed attempt that counts, with the reason kept in the episode.

Exception types alone are not enough (litellm raises ``InternalServerError`` for a missing API key, and an
``APIConnectionError`` carries status 500), so :func:`classify` walks the whole cause chain (``__cause__``,
``__context__``, strands' ``EventLoopException.original_exception``) and reads type names, status codes and a
few messages. Types are matched by name along the MRO, so nothing here imports litellm, openai or httpx.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

#: What a provider exception means. ``kind`` is an infrastructure-error kind (see ``mantra_env.agent``) or
#: ``model`` (the model's own fault: scored as a failed attempt).
MODEL = "model"


@dataclass(frozen=True)
class Fault:
    """A classified provider exception: its ``kind``, whether a retry may succeed, and a one-line ``reason``."""

    kind: str
    retry: bool
    reason: str

    @property
    def model_fault(self) -> bool:
        return self.kind == MODEL


_SERVER_STATUSES = frozenset({500, 502, 503, 504})
# Statuses only an HTTP answer carries (litellm gives a dropped connection status 500): never a time-out or a lost
# connection, whatever the exception's type says.
_GATEWAY_STATUSES = frozenset({502, 503, 504})

# Rows of the table, in the order they are tried; each is (kind, retry?, type names, status codes).
# A row matches a link of the cause chain if the link's type (or a base class) has one of the names or the link
# carries one of the status codes. Model faults and missing keys are looked for first, anywhere in the chain.
_ROWS: tuple[tuple[str, bool, frozenset[str], frozenset[int]], ...] = (
    ("auth", False, frozenset({"AuthenticationError", "PermissionDeniedError"}), frozenset({401, 403})),
    ("not_found", False, frozenset({"NotFoundError"}), frozenset({404})),
    ("rate_limit", True, frozenset({"RateLimitError", "ModelThrottledException"}), frozenset({429})),
    ("timeout", True, frozenset({"Timeout", "APITimeoutError", "TimeoutException", "TimeoutError"}), frozenset({408})),
    ("bad_request", False, frozenset({"BadRequestError", "UnprocessableEntityError"}), frozenset({400, 422})),
    (
        "connection",
        True,
        frozenset(
            {"APIConnectionError", "ConnectError", "RemoteProtocolError", "ReadError", "ConnectionError", "gaierror"}
        ),
        frozenset(),
    ),
    ("bad_output", True, frozenset({"APIResponseValidationError", "JSONDecodeError"}), frozenset()),
    (
        "server",
        True,
        frozenset({"InternalServerError", "ServiceUnavailableError", "BadGatewayError", "APIError"}),
        _SERVER_STATUSES,
    ),
)

# Raised while strands encodes the next request: the model's tool call holds a lone surrogate (not UTF-8) or
# is nested too deep to serialise. The model wrote it; the request it makes can never be sent.
_UNSENDABLE = frozenset({"UnicodeEncodeError", "RecursionError"})
_CONTEXT_OVERFLOW = frozenset({"ContextWindowOverflowException", "ContextWindowExceededError"})
_CUT_OFF = frozenset({"MaxTokensReachedException"})
_EMPTY = frozenset({"EmptyResponseError"})
_MISSING_KEY = ("missing credentials", "api_key client option must be set", "missing api key", "no api key")
# litellm's words for a 200 whose body is no chat completion and not JSON-typed (an HTML page from a proxy, an empty
# body): an InternalServerError (status 500) with no decoding error in its chain. The provider's unusable output.
_BAD_BODY = ("empty or invalid response from llm endpoint",)
# Python's words for a number too long to read (litellm parsing a model's tool call of 5000 digits): the model's.
_HUGE_NUMBER = "for integer string conversion"


class EmptyResponseError(ValueError):
    """A 200 response without a single choice (raised by the agent's model adapter, which sees the response
    before strands turns it into an empty turn). A chat completion always holds a choice, even an empty answer
    is one, so this is the provider's unusable output, not the model's doing."""


def cause_chain(error: BaseException) -> Iterator[BaseException]:
    """``error`` and every exception it wraps (``__cause__``, ``__context__``, ``original_exception``), each
    once, outermost first."""
    seen: set[int] = set()
    todo = [error]
    while todo:
        link = todo.pop(0)
        if id(link) in seen:
            continue
        seen.add(id(link))
        yield link
        for inner in (getattr(link, "original_exception", None), link.__cause__, link.__context__):
            if isinstance(inner, BaseException):
                todo.append(inner)


def _names(error: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(error).__mro__}


def _status(error: BaseException) -> int | None:
    for attribute in ("status_code", "status"):
        value = getattr(error, attribute, None)
        if isinstance(value, int) and 100 <= value < 600:
            return value
    response = getattr(error, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) else None


def _text(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}"[:500]


def classify(error: BaseException, *, after_model_turn: bool = False) -> Fault | None:
    """What ``error`` (raised by a model call, possibly wrapped) means, or None if it is not a provider error.

    ``after_model_turn`` says whether the model already answered in this conversation: a 400 then was caused
    by what the model wrote (scored), while a 400 on the first request is the harness's configuration (an
    endpoint without tool calling, an unsupported parameter).
    """
    chain = list(cause_chain(error))
    whole = " ".join(str(link).lower() for link in chain)
    for link in chain:
        names = _names(link)
        if names & _UNSENDABLE:
            return Fault(MODEL, False, f"the model's tool call cannot be processed or sent back to it ({_text(link)})")
        if isinstance(link, ValueError) and _HUGE_NUMBER in str(link):
            return Fault(MODEL, False, f"the model's tool call holds a number too long to read ({_text(link)})")
        if names & _CONTEXT_OVERFLOW or "context_length_exceeded" in whole or "context window" in whole:
            return Fault(MODEL, False, f"the conversation overflowed the model's context window ({_text(link)})")
        if names & _CUT_OFF:
            return Fault(MODEL, False, f"the model's answer was cut off at its token limit ({_text(link)})")
        if names & _EMPTY:  # the provider broke the protocol: a completion must hold a choice (D11)
            return Fault("bad_output", True, f"the provider's response held no choice ({_text(link)})")
    if any(phrase in whole for phrase in _MISSING_KEY):
        return Fault("auth", False, f"no API key ({_text(error)})")
    if any(phrase in whole for phrase in _BAD_BODY):
        return Fault("bad_output", True, f"the provider's response is not a chat completion ({_text(error)})")
    # Row by row over the whole chain: a dropped connection is a litellm "InternalServerError" (status 500) that
    # wraps an APIConnectionError, and a junk body one that wraps a JSONDecodeError; the inner cause decides.
    for kind, retry, types, statuses in _ROWS:
        for link in chain:
            if not (_names(link) & types or _status(link) in statuses):
                continue
            if kind in ("timeout", "connection") and _status(link) in _GATEWAY_STATUSES:
                continue  # an HTTP answer came: litellm's Timeout for a 504 (an APIConnectionError) is the server's
            if kind != "bad_request":
                return Fault(kind, retry, _text(link))
            if after_model_turn:
                reason = f"the provider rejected a request made of the model's output ({_text(link)})"
                return Fault(MODEL, False, reason)
            return Fault("configuration", False, f"the endpoint rejected the first request ({_text(link)})")
    return None


def retryable(error: BaseException) -> bool:
    """Whether a retry of the call that raised ``error`` may succeed (the table's "retry?" column)."""
    fault = classify(error)
    return fault is not None and fault.retry
