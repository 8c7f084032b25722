"""The exchange provider: a stage's model is whoever answers request files in a folder (``exchange/<dir>``).

Every request the pipeline would send to a model is written as a file, and an answer file placed beside it is
read as that model's answer (the same parsing, schema, answer check and repair loop as any model's)::

    <dir>/<stage>/<subject>#<attempt>.request.json    what to answer (written by the pipeline, atomically)
    <dir>/<stage>/<subject>#<attempt>.answer.json     the answer: the reply text, usually one JSON object
    <dir>/pending.json                                the requests still waiting, with their roles
    RUN_DIR/recorded.jsonl                            every answer read, in the replay format (unless
                                                      llm.replay.record_to says where)

The key ``<stage>/<subject>#<attempt>`` is the request key of :mod:`mantra_env.generators.llm`; its ``/`` are folders,
so a file sits under its stage and subject (``check_generation/s000-2#1.request.json``). A request file holds the key,
the writer's role (:data:`ROLES`), the stage, the messages, the JSON schema of the answer, a plain-language
statement of the answer check and the check's context (what :mod:`mantra_env.generators.answers` rebuilds the check
from, so ``mantra exchange check DIR KEY`` runs the pipeline's own check on an answer file).

A missing answer is :class:`AnswerPending`, never a failure: the stages let it through (it is no
``GenerationError``), the pipeline advances every other sample and stops with every pending request written.

Half-written answers. Answer files are written by outside helpers that take no lock, so the pipeline may find one
while it is being written. An answer file is *unfinished* (:func:`unfinished`) when it is empty or blank, when its
bytes end inside a UTF-8 character, or when the JSON object it opens (its first ``{``) is not closed by the end
of the text. An unfinished answer changed less than :data:`ANSWER_SETTLE_S` seconds ago is pending, like a
missing one; any other answer is read as it is: a complete answer that fails the stage's checks (prose, JSON with
a syntax error inside a closed object, a schema or check failure) comes back as the next attempt, and an
unfinished one that has not changed for that long is read too (its writer is gone: it comes back as the next
attempt with its problem). Writers avoid the wait by writing a temporary name and renaming it into place.
``check`` reads the answer as it is now, finished or not.

The command that checks an answer, lists the pending requests and restores a recording is ``mantra exchange``
(:mod:`mantra_env.mantra_cli.exchange`; ``python -m mantra_env.generators.exchange`` still runs it): checking needs
every stage's answer check, and this module, which every stage imports, imports none of them.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from mantra_env.errors import MantraError
from mantra_env.generators.rundir import write_text
from mantra_env.generators.stages import ROLES as ROLES  # the writer's role per model stage, re-exported
from mantra_env.limits import bounded, bracket_depths, is_unicode

EXCHANGE_PROVIDER = "exchange"
T = TypeVar("T")

REQUEST_SUFFIX = ".request.json"
ANSWER_SUFFIX = ".answer.json"
ANSWER_SETTLE_S = 30.0
"""An unfinished answer file (:func:`unfinished`) is pending until it has not changed for this long."""


class ExchangeError(MantraError, ValueError):
    """A request key or an exchange folder that cannot be used."""


class AnswerPending(MantraError, LookupError):
    """Requests whose answers are not written yet (not a failure: the run stops or waits for them)."""

    def __init__(self, keys: Iterable[str]) -> None:
        self.keys = sorted(set(keys))
        super().__init__(f"{len(self.keys)} request(s) pending: {', '.join(self.keys[:5])}")


def role_of(stage: str) -> str:
    return ROLES.get(stage, stage)


@dataclass(frozen=True)
class ExchangeDir:
    """One exchange folder: where each key's request and answer files are."""

    root: Path

    def _base(self, key: str) -> Path:
        parts = key.split("/")
        if "#" not in parts[-1] or any(part in ("", ".", "..") or "\\" in part for part in parts):
            raise ExchangeError(f"{key!r} is not a request key; keys look like check_generation/s000-2#0")
        if "\x00" in key or not is_unicode(key):
            raise ExchangeError(f"{bounded(key)!r} is not a request key: it holds a NUL or a lone surrogate")
        return self.root.joinpath(*parts)

    def request_path(self, key: str) -> Path:
        base = self._base(key)
        return base.with_name(base.name + REQUEST_SUFFIX)

    def answer_path(self, key: str) -> Path:
        base = self._base(key)
        return base.with_name(base.name + ANSWER_SUFFIX)

    def answer(self, key: str, settle: bool = True) -> str | None:
        """The answer text for ``key``, or None if none is written; with ``settle``, also None while the file is
        unfinished and recent (see "Half-written answers" in the module docstring).

        Raises:
            ExchangeError: the answer path is a folder or cannot be read, or the answer is not UTF-8 text.
        """
        path = self.answer_path(key)
        try:
            with path.open("rb") as file:
                age = time.time() - os.fstat(file.fileno()).st_mtime
                data = file.read()
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            raise ExchangeError(f"{path}: is a folder, not an answer file; remove it and write the answer") from None
        except OSError as error:
            raise ExchangeError(f"{path}: cannot read the answer: {error.strerror}") from None
        if settle and age < ANSWER_SETTLE_S and unfinished(data):
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ExchangeError(f"{path}: not UTF-8 text; save the answer as UTF-8") from None

    def answered(self, key: str) -> bool:
        """Whether ``key`` has an answer the pipeline would read now (an unreadable one counts: reading it says
        what is wrong)."""
        try:
            return self.answer(key) is not None
        except ExchangeError:
            return True

    def ask(self, request: dict[str, Any]) -> str:
        """The answer to ``request`` if its file is there; else the request file is written (atomically, unless
        it is already there as is) and :class:`AnswerPending` raised."""
        key = str(request["key"])
        text = self.answer(key)
        if text is not None:
            return text
        path = self.request_path(key)
        content = json.dumps(request, indent=2, ensure_ascii=False) + "\n"
        try:
            if not path.is_file() or path.read_bytes() != content.encode("utf-8"):
                write_text(path, content)
        except OSError as error:  # e.g. a folder where the request file goes
            raise ExchangeError(f"{path}: cannot write the request: {error.strerror or error}") from None
        raise AnswerPending([key])

    def request(self, key: str) -> dict[str, Any]:
        path = self.request_path(key)
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ExchangeError(f"{path}: no such request; `mantra exchange pending DIR` lists them") from None
        except (ValueError, RecursionError) as error:
            raise ExchangeError(f"{path}: not a request file ({error})") from None
        except OSError as error:
            raise ExchangeError(f"{path}: cannot read the request: {error.strerror or error}") from None
        if not isinstance(loaded, dict):
            raise ExchangeError(f"{path}: not a request file (expected a JSON object)")
        return loaded

    def requests(self) -> list[str]:
        """Keys of every request file, sorted."""
        if not self.root.is_dir():
            what = "is not a folder" if self.root.exists() else "does not exist"
            raise ExchangeError(
                f"{self.root} {what}: give the exchange folder of a run (RUN_DIR/exchange, or the <dir> of its "
                "exchange/<dir> models)"
            )
        found = []
        for path in self.root.rglob(f"*{REQUEST_SUFFIX}"):
            found.append(str(path.relative_to(self.root))[: -len(REQUEST_SUFFIX)].replace("\\", "/"))
        return sorted(found)

    def unanswered(self, keys: Iterable[str] | None = None) -> list[str]:
        return [key for key in (self.requests() if keys is None else keys) if not self.answered(key)]

    def write_pending(self, keys: Sequence[str]) -> None:
        """``pending.json``: the keys waiting for an answer (sorted), each with its role and files."""
        listing = [
            {
                "key": key,
                "role": role_of(key.split("/")[0]),
                "request": str(self.request_path(key).relative_to(self.root)),
                "answer": str(self.answer_path(key).relative_to(self.root)),
            }
            for key in sorted(keys)
        ]
        write_text(self.root / "pending.json", json.dumps(listing, indent=2) + "\n")


async def gather_all(awaitables: Iterable[Awaitable[T]]) -> list[T]:
    """Every result, running them all to the end even when some are pending: the pending keys of all of them
    raise together as one :class:`AnswerPending`; any other error is raised as is (after all have ended)."""
    outcomes = await asyncio.gather(*awaitables, return_exceptions=True)
    pending: list[str] = []
    for outcome in outcomes:
        if isinstance(outcome, AnswerPending):
            pending += outcome.keys
        elif isinstance(outcome, BaseException):
            raise outcome
    if pending:
        raise AnswerPending(pending)
    return [outcome for outcome in outcomes if not isinstance(outcome, BaseException)]


def unfinished(data: bytes) -> bool:
    """Whether ``data`` may be an answer its writer has not finished (see "Half-written answers" in the module
    docstring): blank, cut inside a UTF-8 character, or with its first JSON object not closed by the end."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.reason == "unexpected end of data"  # cut inside a character; else simply not UTF-8
    start = text.find("{")
    if start < 0:
        return not text.strip()
    return all(depth > 0 for depth in bracket_depths(text[start:]))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m mantra_env.generators.exchange``: the ``mantra exchange`` command
    (:mod:`mantra_env.mantra_cli.exchange`) under its old name, kept for the scripts and notes that use it."""
    from mantra_env.cli import invoked_as, program_name
    from mantra_env.mantra_cli.exchange import main as command

    with invoked_as(program_name("mantra_env.generators.exchange")):
        return command(argv)


if __name__ == "__main__":
    sys.exit(main())
