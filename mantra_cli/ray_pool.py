"""Run a pure function over items on Ray workers, with the results in the items' order: the one module that meets
Ray (the optional extra ``mantra-env[ray]``); ``--ray [ADDRESS]`` of ``mantra validate``, ``mantra generate`` and
``mantra run`` comes here.

Only pure work goes to a worker: a function of picklable values (cases, a suite, a solver's arguments) that
returns pydantic records. Whatever writes (the DuckDB store, the solver memo, the LLM cache, exchange files,
recordings) stays in the driver, which receives the results and writes them as a local run does.

The workers get the driver's own code and the user's domains through Ray's runtime environment, so a cluster's
nodes need only mantra-env's dependencies (``pip install 'mantra-env[ray]'``): the ``working_dir`` (on the workers'
import path) carries a copy of the packages the driver imported (``mantra_env``, ``generators``, ``agents``,
``graders``, ``mantra_cli``) and, under ``domains/``, of every domain found on ``MANTRA_DOMAINS_PATH``, which the
workers' ``MANTRA_DOMAINS_PATH`` names. A worker that dies mid-task (killed, out of memory, its node lost) has its
task run again, up to :data:`MAX_RETRIES` times.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from mantra_env.domains.discovery import PATH_VARIABLE, domain_sources
from mantra_env.errors import MantraError
from mantra_env.offload import Offload

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])

INSTALL_HINT = "install the extra mantra-env[ray] (pip install 'mantra-env[ray]')"
MAX_RETRIES = 3
"""Runs of a task whose worker died (not of one that raised: an error in the work is its result)."""
CODE_PACKAGES = ("mantra_env",)
"""The packages a worker imports, shipped from the driver so that the workers run the driver's code (the outer
packages come inside ``mantra_env``: its links to their folders are copied as folders)."""
STAGED_DOMAINS = "domains"
"""The folder of the working directory that holds the user's domains (the workers' ``MANTRA_DOMAINS_PATH``)."""
CONNECT_TIMEOUT_S = 10.0


class RayError(MantraError, RuntimeError):
    """Ray is not installed, its cluster cannot be reached, or a task's worker kept dying."""


def import_ray() -> ModuleType:
    """The ``ray`` module, or :class:`RayError` saying how to install it."""
    try:
        import ray
    except ImportError as error:
        raise RayError(f"--ray needs Ray, which is not installed ({error}); {INSTALL_HINT}") from None
    return ray


def _apply(fn: Callable[..., R], *args: Any) -> R:
    """What a worker runs: ``fn(*args)``, with the staged domains found from the task's working directory."""
    staged = os.environ.get(PATH_VARIABLE, "")
    if staged == STAGED_DOMAINS:  # relative to the runtime environment's working directory, the worker's cwd
        os.environ[PATH_VARIABLE] = str(Path(staged).resolve())
    return fn(*args)


@dataclass(frozen=True)
class RayWorkers:
    """Ray's workers, connected: :meth:`map` (a command's loop) and :meth:`call` (one task, awaited)."""

    task: Any
    """:func:`_apply` as a Ray remote function (with its retries)."""
    shared: dict[int, tuple[Any, Any]] = field(default_factory=dict)
    """``id(value)`` -> (the value, kept alive; its object reference) for :meth:`call`'s ``shared`` values."""

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        """``fn(item)`` for each item, computed on the workers, yielded in the items' order as each is ready;
        the tasks not finished when the caller stops (an interruption) are cancelled."""
        ray = import_ray()
        fn = by_module(fn)
        refs = [self.task.remote(fn, item) for item in items]
        taken = 0
        try:
            for ref in refs:
                yield _result(ray, ref)
                taken += 1
        finally:
            if taken < len(refs):  # stopped early (interrupted, or an error): drop what is still to run
                _cancel(ray, refs[taken:])

    async def call(self, fn: Callable[[S, T], R], shared: S, item: T) -> R:
        """``fn(shared, item)`` on a worker, awaited (an :class:`~mantra_env.offload.Offload`); ``shared`` goes to
        Ray's object store once, however many calls name it."""
        ray = import_ray()
        held = self.shared.get(id(shared))
        if held is None or held[0] is not shared:
            held = self.shared[id(shared)] = (shared, ray.put(shared))
        ref = self.task.remote(by_module(fn), held[1], item)
        try:
            await asyncio.wrap_future(ref.future())
        except asyncio.CancelledError:
            ray.cancel(ref)
            raise
        except Exception:
            pass  # _result says what went wrong
        result: R = _result(ray, ref)
        return result


def _cancel(ray: ModuleType, refs: list[Any]) -> None:
    """Cancel the tasks of ``refs`` that have not finished (cancelling a finished one can trip Ray 2.60's task
    manager: "Tried to complete task that was not pending", which aborts the driver)."""
    _, unfinished = ray.wait(refs, num_returns=len(refs), timeout=0)
    for ref in unfinished:
        ray.cancel(ref)


def by_module(fn: F) -> F:
    """``fn`` as its module's attribute when that module runs as ``__main__`` (``python -m
    mantra_env.mantra_cli.validate``), so that it is sent by name; a worker has no such ``__main__``."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if getattr(fn, "__module__", None) != "__main__" or spec is None:
        return fn
    found: F = getattr(importlib.import_module(spec.name), fn.__qualname__)
    return found


def _result(ray: ModuleType, ref: Any) -> Any:
    try:
        return ray.get(ref)
    except ray.exceptions.WorkerCrashedError as error:
        raise RayError(
            f"a Ray worker died {MAX_RETRIES + 1} times running one task (killed, or out of memory?): {error}"
        ) from None
    except ray.exceptions.RayTaskError as error:  # the work raised: that error (a MantraError is one line)
        cause = error.cause
        if isinstance(cause, MantraError):
            raise cause from None
        raise


def ordered_map(fn: Callable[[T], R], items: Sequence[T], workers: RayWorkers | None) -> Iterator[R]:
    """``fn(item)`` for each item in order: on ``workers``, or here (``None``); the same results either way."""
    if workers is None:
        return map(fn, items)
    return workers.map(fn, items)


def runtime_env(staging: Path) -> dict[str, Any]:
    """What the workers need beside the installed dependencies, copied into ``staging`` (the ``working_dir``, on
    the workers' import path): the driver's own packages (side by side, as installed), and each domain on
    ``MANTRA_DOMAINS_PATH`` under ``domains/``, which the workers' ``MANTRA_DOMAINS_PATH`` names."""
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    (staging / STAGED_DOMAINS).mkdir()  # present even when empty: the workers' MANTRA_DOMAINS_PATH names it
    for name in CODE_PACKAGES:
        module = _imported(name)
        if module is not None:
            shutil.copytree(Path(str(module.__file__)).parent, staging / name, ignore=skip)
    for sources in domain_sources().values():
        for source in sources:
            target = staging / STAGED_DOMAINS / source.name
            if source.on_path and not target.exists():  # a name found twice: the driver refuses it when asked for
                shutil.copytree(source.folder, target, ignore=skip)
    return {"working_dir": str(staging), "env_vars": {PATH_VARIABLE: STAGED_DOMAINS}}


def _imported(name: str) -> ModuleType | None:
    try:
        module = __import__(name)
    except ImportError:  # not importable here: not needed there either
        return None
    return module if getattr(module, "__file__", None) else None


def check_reachable(address: str) -> None:
    """:class:`RayError` at once (not after Ray's own minute of retries) if ``address`` (``HOST:PORT`` or
    ``ray://HOST:PORT``) does not accept a connection; ``auto`` and other forms are left to Ray."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit() or not host:
        return
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as error:
        raise RayError(
            f"--ray {address}: nothing answers there ({error}); start a cluster with `ray start --head` on that "
            "machine, or leave ADDRESS out to start Ray on this one"
        ) from None


@contextmanager
def ray_workers(
    address: str | None, *, num_cpus: int | None = None, object_store_memory: int | None = None
) -> Iterator[RayWorkers]:
    """Ray's workers for the block: a new local Ray (``address`` ``None`` or empty; ``num_cpus`` of this machine's
    cores, default all) or the cluster at ``address`` (``auto``, ``HOST:PORT`` or ``ray://HOST:10001``). A Ray this
    process already started (a test's) is used as it is, and left running."""
    ray = import_ray()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report from a project that runs offline
    owned = not ray.is_initialized()
    with tempfile.TemporaryDirectory(prefix="mantra-ray-") as staging:
        if owned:
            _init(ray, address or None, runtime_env(Path(staging)), num_cpus, object_store_memory)
        try:
            yield RayWorkers(ray.remote(max_retries=MAX_RETRIES)(_apply))
        finally:
            if owned:
                ray.shutdown()


def _init(
    ray: ModuleType, address: str | None, env: dict[str, Any], num_cpus: int | None, object_store_memory: int | None
) -> None:
    if address is None:
        print(f"starting a local Ray ({num_cpus or os.cpu_count()} CPUs)...", file=sys.stderr)
        options: dict[str, Any] = {"num_cpus": num_cpus, "include_dashboard": False}
        if object_store_memory is not None:
            options["object_store_memory"] = object_store_memory
        # "local": a new Ray even where `ray start` left one running or RAY_ADDRESS names one (that is --ray auto)
        ray.init(address="local", runtime_env=env, **options)
        return
    check_reachable(address)
    try:
        ray.init(address=address, runtime_env=env)
    except ConnectionError as error:
        raise RayError(
            f"--ray {address}: cannot connect ({error}); is a cluster running there (`ray start --head`)?"
        ) from None


def add_ray_option(parser: argparse.ArgumentParser, what: str, note: str) -> None:
    """``--ray [ADDRESS]`` on a command's ``parser``: ``what`` runs on the workers; ``note``: what else to know."""
    parser.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help=f"{what} on Ray workers (the extra mantra-env[ray]): a new local Ray without ADDRESS, or the cluster at "
        f"ADDRESS (auto, HOST:PORT, ray://HOST:10001). {note}",
    )


@contextmanager
def offload(address: str | None, num_cpus: int | None = None) -> Iterator[Offload | None]:
    """With ``--ray`` (``address`` not ``None``): the :class:`~mantra_env.offload.Offload` onto Ray's workers,
    for the block; without: ``None`` (the caller's own way, here)."""
    if address is None:
        yield None
        return
    with ray_workers(address, num_cpus=num_cpus) as workers:
        yield workers.call
