"""The provider-error table, row by row, on litellm's real exception types and the chains strands and the
OpenAI client wrap them in."""

from __future__ import annotations

import json
import socket

import httpx
import pytest
from litellm import exceptions as llm

from mantra_env.agents.provider_errors import MODEL, EmptyResponseError, classify, retryable

Made = dict(llm_provider="openai", model="x")


def chained(outer: BaseException, inner: BaseException) -> BaseException:
    """``outer`` raised while handling ``inner`` (``raise outer from inner``), as the clients do."""
    outer.__cause__ = inner
    return outer


def event_loop(error: BaseException) -> BaseException:
    """What strands raises when ``error`` happens in a later cycle of the agent loop."""
    from strands.types.exceptions import EventLoopException

    return EventLoopException(error)  # type: ignore[arg-type]


def kind(error: BaseException, after_model_turn: bool = True) -> tuple[str, bool] | None:
    fault = classify(error, after_model_turn=after_model_turn)
    return None if fault is None else (fault.kind, fault.retry)


def test_connection_refused_dropped_and_dns_are_connection_errors() -> None:
    dropped = chained(llm.InternalServerError("Connection error.", **Made), llm.APIConnectionError("x", **Made))
    assert kind(event_loop(dropped)) == ("connection", True)  # status 500 outside, the connection inside
    assert kind(ConnectionRefusedError(111, "Connection refused")) == ("connection", True)
    assert kind(httpx.ConnectError("[Errno -2] Name or service not known")) == ("connection", True)
    assert kind(socket.gaierror(-2, "Name or service not known")) == ("connection", True)


def test_timeouts() -> None:
    assert kind(event_loop(llm.Timeout("timed out", **Made))) == ("timeout", True)
    assert kind(TimeoutError()) == ("timeout", True)
    assert kind(httpx.ReadTimeout("read")) == ("timeout", True)


def test_rate_limits() -> None:
    assert kind(event_loop(llm.RateLimitError("slow down", **Made))) == ("rate_limit", True)


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_server_errors_by_status(status: int) -> None:
    assert kind(llm.APIError(status_code=status, message="m", **Made)) == ("server", True)


def test_server_errors_by_type() -> None:
    assert kind(event_loop(llm.InternalServerError("status 500", **Made))) == ("server", True)
    assert kind(llm.ServiceUnavailableError("status 503", **Made)) == ("server", True)
    assert kind(llm.BadGatewayError("status 502", **Made)) == ("server", True)


def test_a_missing_key_is_auth_although_litellm_calls_it_a_server_error() -> None:
    missing = llm.InternalServerError("OpenAIException - Missing credentials. Please pass an `api_key`", **Made)
    assert kind(missing) == ("auth", False)


def test_refused_keys_are_auth() -> None:
    assert kind(event_loop(llm.AuthenticationError("status 401", **Made))) == ("auth", False)
    forbidden = httpx.Response(403, request=httpx.Request("POST", "http://x"))
    assert kind(llm.PermissionDeniedError("status 403", response=forbidden, **Made)) == ("auth", False)


def test_unknown_models_are_not_found() -> None:
    assert kind(event_loop(llm.NotFoundError("status 404", **Made))) == ("not_found", False)


def test_a_400_on_the_first_request_is_configuration_and_after_a_model_turn_the_models() -> None:
    error = event_loop(llm.BadRequestError("tools are not supported", **Made))
    assert kind(error, after_model_turn=False) == ("configuration", False)
    assert kind(error, after_model_turn=True) == (MODEL, False)


def test_context_window_overflow_is_the_models() -> None:
    from strands.types.exceptions import ContextWindowOverflowException

    overflow = llm.ContextWindowExceededError("too long", **Made)
    assert kind(event_loop(chained(ContextWindowOverflowException(overflow), overflow))) == (MODEL, False)
    assert kind(overflow, after_model_turn=False) == (MODEL, False)  # a 400, but not configuration


def test_unsendable_tool_calls_and_empty_answers_are_the_models() -> None:
    try:
        "\ud800".encode()
    except UnicodeEncodeError as error:
        surrogate = chained(llm.InternalServerError("can't encode", **Made), error)
    assert kind(event_loop(surrogate)) == (MODEL, False)
    deep: list[object] = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(RecursionError) as too_deep:
        json.dumps(deep)
    assert kind(event_loop(too_deep.value)) == (MODEL, False)


def test_a_response_without_choices_is_the_providers_bad_output() -> None:
    assert kind(EmptyResponseError("no choices")) == ("bad_output", True)
    assert kind(event_loop(EmptyResponseError("no choices"))) == ("bad_output", True)


def test_junk_bodies_are_bad_output() -> None:
    try:
        json.loads("<html>")
    except json.JSONDecodeError as error:
        junk = chained(llm.InternalServerError("Expecting value", **Made), error)
    assert kind(event_loop(junk)) == ("bad_output", True)


def test_other_exceptions_are_not_provider_errors_and_the_retry_column() -> None:
    assert classify(ValueError("a bug")) is None
    assert not retryable(ValueError("a bug"))
    assert retryable(llm.RateLimitError("slow down", **Made))
    assert not retryable(llm.InternalServerError("Missing credentials", **Made))


# Recorded from litellm 1.x against the stub OpenAI-compatible server of the second reliability probe (N8).
HTML_BODY = (
    "litellm.InternalServerError: InternalServerError: OpenAIException - Empty or invalid response from LLM "
    "endpoint. Received: '<html><body>502 Bad Gateway</body></html>'. Check the reverse proxy or model server "
    "configuration."
)


def test_n8_an_html_body_on_a_200_is_bad_output_a_504_is_server_and_a_huge_number_the_models() -> None:
    html = llm.InternalServerError(HTML_BODY, **Made)
    assert html.status_code == 500 and kind(event_loop(html)) == ("bad_output", True)
    gateway = chained(
        llm.Timeout("Timeout Error: OpenAIException - status 504", **Made),
        llm.InternalServerError("Error code: 504", **Made),
    )
    gateway.status_code = 504  # litellm's Timeout keeps the response's status
    assert kind(event_loop(gateway)) == ("server", True)
    assert kind(llm.Timeout("timed out", **Made)) == ("timeout", True)  # a real time-out stays one
    try:
        int("9" * 5000)
    except ValueError as error:
        parsing = chained(Exception("Invalid response object Traceback (most recent call last): ..."), error)
        huge = chained(llm.InternalServerError("OpenAIException - Invalid response object", **Made), parsing)
    for after_model_turn in (False, True):  # the model wrote it, on the first request as on any later one
        assert kind(event_loop(huge), after_model_turn) == (MODEL, False)
