"""How a caller runs pure work elsewhere, without the core knowing where: an :class:`Offload` runs
``fn(shared, item)`` and returns an awaitable of its result. The runner and the generation pipeline's validation
take one; ``mantra_env.mantra_cli.ray_pool`` gives one that runs the work on a Ray worker (the core never imports Ray).

``fn`` must be a module-level function and its arguments picklable values; whatever it returns is handed back
to the caller, which alone writes (the store, memos, recordings). ``shared`` is the same object across many
calls (a suite, a tool list): an offload may send it once and reuse it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

S = TypeVar("S")
A = TypeVar("A")
R = TypeVar("R")


class Offload(Protocol):
    """Runs ``fn(shared, item)`` somewhere and returns an awaitable of its result (or of its exception)."""

    def __call__(self, fn: Callable[[S, A], R], shared: S, item: A, /) -> Awaitable[R]: ...


async def in_thread(fn: Callable[[S, A], R], shared: S, item: A, /) -> R:
    """The offload that runs the work here, in a thread (the default): :func:`asyncio.to_thread`."""
    return await asyncio.to_thread(fn, shared, item)
