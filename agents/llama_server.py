"""Entry point of the bundled model server: llama-cpp-python's OpenAI-compatible server with one fix.

llama-cpp-python's ``chatml-function-calling`` handler generates the assistant message and the tool-call
arguments with ``max_tokens=None`` whatever the request says, so a small model that rambles fills the whole
context (minutes of CPU per request). Here a completion without a limit gets ``MANTRA_LOCAL_MAX_TOKENS``
(default 96: a tool call of the domains here fits).

Run as ``python -m mantra_env.agents.llama_server <llama_cpp.server arguments>`` (``agents/local_server.py`` does).
"""

from __future__ import annotations

import os
import runpy
from typing import Any

from llama_cpp import llama

CAP = int(os.environ.get("MANTRA_LOCAL_MAX_TOKENS", "96"))
_create_completion = llama.Llama.create_completion


def _capped(self: llama.Llama, *args: Any, **kwargs: Any) -> Any:
    if kwargs.get("max_tokens") is None and len(args) < 3:  # max_tokens is the third positional parameter
        kwargs["max_tokens"] = CAP
    return _create_completion(self, *args, **kwargs)


llama.Llama.create_completion = _capped  # type: ignore[method-assign]

if __name__ == "__main__":
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
