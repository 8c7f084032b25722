"""A tiny OpenAI-compatible chat-completions server for tests: it answers with queued responses (tool calls,
text, HTTP errors, requests left hanging) and records every request, so an agent can be driven through
litellm's real HTTP path without a model."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def tool_call(name: str, arguments: dict[str, Any] | str, call_id: str = "call_1") -> dict[str, Any]:
    """A response whose message calls one tool (``arguments`` may be a raw string, e.g. malformed JSON)."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}],
    }


def text(content: str) -> dict[str, Any]:
    return {"role": "assistant", "content": content}


class StubServer:
    """Serves ``responses`` in order (or, given ``respond``, whatever it returns for each request body). A
    response is a message dict, ``{"status": 429}`` (an HTTP error), ``{"hang": True}`` (no answer until the server
    shuts down: a client's time-out fires first however slow the machine is), ``{"drop": True}`` (the connection
    is closed without an answer), ``{"body": text}`` (a raw body, e.g. junk; ``"content_type"`` sets its type) or
    ``{"choices": []}`` (a completion without a choice)."""

    def __init__(
        self, responses: list[dict[str, Any]], respond: Callable[[dict[str, Any], Any], dict[str, Any]] | None = None
    ) -> None:
        self.responses = list(responses)
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.closing = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with stub.lock:
                    stub.requests.append(body)
                    if respond is not None:
                        response = respond(body, self.headers)
                    else:
                        response = stub.responses.pop(0) if stub.responses else text("done")
                if response.get("hang"):
                    stub.closing.wait()
                    response = text("late")
                if response.get("drop"):
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                if "status" in response:
                    self.send_response(response["status"])
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    error_type = "rate_limit" if response["status"] == 429 else "stub_error"  # litellm reads it
                    self.wfile.write(json.dumps({"error": {"message": "stub error", "type": error_type}}).encode())
                    return
                choices = response.get("choices")
                if choices is None:
                    finish = "tool_calls" if response.get("tool_calls") else "stop"
                    choices = [{"index": 0, "message": response, "finish_reason": finish}]
                payload = {
                    "id": f"chatcmpl-{len(stub.requests)}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", "stub"),
                    "choices": choices,
                    "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
                }
                data = response["body"].encode() if "body" in response else json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", response.get("content_type", "application/json"))
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.handle_error = lambda request, client_address: None  # type: ignore[method-assign]  # clients that time out
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@contextmanager
def serve(
    responses: list[dict[str, Any]], respond: Callable[[dict[str, Any], Any], dict[str, Any]] | None = None
) -> Iterator[StubServer]:
    stub = StubServer(responses, respond)
    stub.thread.start()
    try:
        yield stub
    finally:
        stub.closing.set()  # lets hanging requests go, so that their threads end
        stub.server.shutdown()
        stub.server.server_close()
