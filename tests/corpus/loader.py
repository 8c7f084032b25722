"""Loading the golden corpus: one ``<name>.json`` per entry, its model text in ``<name>.wm`` beside it.

See ``README.md`` in this folder for the entry format. Loading is strict: an unknown key, a missing model file
or a malformed expectation is an error, so a typo cannot turn an entry into a silent pass.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from mantra_env.domains import load_domain
from mantra_env.smt import DEFAULT_MODE, MODES
from mantra_env.tools import ToolSpec
from tests.list_tools import IDS, ORDERED_IDS, list_tool
from tests.worldmodel.paper import PAPER_TOOLS

CORPUS_DIR = Path(__file__).parent
ToolsName = Literal["paper", "operations", "lists"]
TOOL_SETS: tuple[ToolsName, ...] = ("paper", "operations", "lists")
_ENTRY_KEYS = {"description", "model_file", "tools", "checks", "initial", "bound", "expect", "xfail", "kind"}
# The kinds of conflict entries (``conflict_*``, issue 14).
CONFLICT_KINDS = (
    "repeated",
    "junk",
    "ordering",
    "never",
    "contradictory",
    "overrestrictive",
    "insensitive",
    "list",
)
PENDING_KINDS: tuple[str, ...] = ()
CONFLICT_MAX_BOUND = 4  # conflict entries are brute-forced: every trace up to the bound
STAGES = ("parser", "checker", "solver", "grader")
_FORWARD = ("consistent", "conflict")
_WITNESS = ("found", "infeasible")


class CorpusFormatError(ValueError):
    """An entry file that does not follow the corpus format (the message names the file)."""


@dataclass(frozen=True)
class ParseErrorExpect:
    """The model does not parse: the first problem's code and 1-based position (``None`` for no span)."""

    code: str
    line: int | None
    column: int | None


@dataclass(frozen=True)
class TypeErrorExpect:
    """The model parses but does not type-check: every diagnostic code in order, and the first one's position."""

    codes: tuple[str, ...]
    line: int | None
    column: int | None


@dataclass(frozen=True)
class SolverExpect:
    """The statuses of the forward query, of each backward query (one per check, in order) and of the witness."""

    forward: str
    backward: tuple[str, ...]
    witness: str


@dataclass(frozen=True)
class ModeExpects:
    """The solver statuses expected in each query mode (``mantra_env.smt.MODES``)."""

    modes: Mapping[str, SolverExpect]

    def of(self, mode: str = DEFAULT_MODE) -> SolverExpect:
        return self.modes[mode]


Expect = ParseErrorExpect | TypeErrorExpect | ModeExpects


@dataclass(frozen=True)
class KnownBug:
    """An engine bug this entry documents: the stages whose tests fail until it is fixed (they are marked
    ``xfail(strict=True)``, so a fix shows up as an unexpected pass)."""

    reason: str
    stages: tuple[str, ...]


@dataclass(frozen=True)
class CorpusEntry:
    """One corpus entry."""

    name: str
    description: str
    model_file: str
    model: str
    tools_name: ToolsName | None
    expect: Expect
    checks: tuple[str, ...] = ()
    initial: Mapping[str, Any] = field(default_factory=dict)
    bound: int = 8
    xfail: KnownBug | None = None
    conflict_kind: str | None = None

    def known_bug(self, stage: str) -> KnownBug | None:
        """The known engine bug that makes ``stage`` fail for this entry, if any."""
        return self.xfail if self.xfail is not None and stage in self.xfail.stages else None

    @property
    def kind(self) -> Literal["parse_error", "type_error", "solver"]:
        if isinstance(self.expect, ParseErrorExpect):
            return "parse_error"
        if isinstance(self.expect, TypeErrorExpect):
            return "type_error"
        return "solver"

    def statuses(self, mode: str = DEFAULT_MODE) -> SolverExpect:
        """The expected statuses of a solver entry in ``mode``."""
        assert isinstance(self.expect, ModeExpects), f"{self.name} is not a solver entry"
        return self.expect.of(mode)

    def tools(self) -> list[ToolSpec] | None:
        """The tool specs the entry is checked against (``None``: parameters are typed by use)."""
        if self.tools_name is None:
            return None
        if self.tools_name == "paper":
            return list(PAPER_TOOLS)
        if self.tools_name == "lists":
            return list(LIST_TOOLS)
        return list(_operations_tools())


# Retail-like tools with list parameters (the ``lists`` tool set): item lists match up to permutation, an
# exchange's ``item_ids`` and ``new_item_ids`` (x-ordered: paired) together, up to one permutation of their rows.
LIST_TOOLS = (
    list_tool("get_order", "read", order_id={"type": "string"}),
    list_tool("return_items", item_ids=IDS),
    list_tool("refund_items", item_ids=IDS),
    list_tool("exchange_items", item_ids=ORDERED_IDS, new_item_ids=ORDERED_IDS),
)


@cache
def _operations_tools() -> tuple[ToolSpec, ...]:
    return tuple(load_domain("operations").tool_specs())


def _fail(path: Path, message: str) -> CorpusFormatError:
    return CorpusFormatError(f"{path.name}: {message}")


def _position(path: Path, data: Mapping[str, Any], key: str) -> int | None:
    value = data.get(key)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise _fail(path, f"{key} must be a positive integer or null")
    return value


def _expect(path: Path, data: Any, check_count: int) -> Expect:
    keys = set(data) if isinstance(data, dict) else None
    if keys == {"parse_error"}:
        body = data["parse_error"]
        if not isinstance(body, dict) or set(body) != {"code", "line", "column"}:
            raise _fail(path, "parse_error needs exactly code, line and column")
        return ParseErrorExpect(str(body["code"]), _position(path, body, "line"), _position(path, body, "column"))
    if keys == {"type_error"}:
        body = data["type_error"]
        if not isinstance(body, dict) or set(body) != {"codes", "line", "column"}:
            raise _fail(path, "type_error needs exactly codes, line and column")
        codes = body["codes"]
        if not isinstance(codes, list) or not codes or not all(isinstance(c, str) for c in codes):
            raise _fail(path, "type_error.codes must be a non-empty list of strings")
        return TypeErrorExpect(tuple(codes), _position(path, body, "line"), _position(path, body, "column"))
    if keys == set(MODES):
        return ModeExpects({mode: _statuses(path, data[mode], check_count) for mode in MODES})
    if keys != {"forward", "backward", "witness"}:
        raise _fail(
            path,
            "expect must be {parse_error: ...}, {type_error: ...}, {forward, backward, witness} (the same in every "
            f"mode) or one such object per mode {{{', '.join(MODES)}}}",
        )
    same = _statuses(path, data, check_count)
    return ModeExpects(dict.fromkeys(MODES, same))


def _statuses(path: Path, data: Any, check_count: int) -> SolverExpect:
    if not isinstance(data, dict) or set(data) != {"forward", "backward", "witness"}:
        raise _fail(path, "a mode's expectation needs exactly forward, backward and witness")
    backward = data["backward"]
    if data["forward"] not in _FORWARD or data["witness"] not in _WITNESS:
        raise _fail(path, f"forward must be one of {_FORWARD}, witness one of {_WITNESS}")
    if not isinstance(backward, list) or len(backward) != check_count or any(b not in _FORWARD for b in backward):
        raise _fail(path, f"backward must list one of {_FORWARD} per check ({check_count})")
    return SolverExpect(data["forward"], tuple(backward), data["witness"])


def _known_bug(path: Path, data: Any) -> KnownBug | None:
    if data is None:
        return None
    if not isinstance(data, dict) or set(data) != {"reason", "stages"}:
        raise _fail(path, "xfail needs exactly reason and stages")
    reason, stages = data["reason"], data["stages"]
    if not isinstance(reason, str) or not reason.startswith("bug: "):
        raise _fail(path, 'xfail.reason must start with "bug: "')
    if not isinstance(stages, list) or not stages or any(stage not in STAGES for stage in stages):
        raise _fail(path, f"xfail.stages must be a non-empty list of {STAGES}")
    return KnownBug(reason, tuple(stages))


def load_entry(path: Path) -> CorpusEntry:
    """The entry in ``path`` (a ``.json`` file of the corpus)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise _fail(path, f"invalid JSON: {error}") from None
    if not isinstance(data, dict):
        raise _fail(path, "an entry is a JSON object")
    unknown = set(data) - _ENTRY_KEYS
    if unknown:
        raise _fail(path, f"unknown keys {sorted(unknown)}")
    for key in ("description", "model_file", "expect"):
        if key not in data:
            raise _fail(path, f"missing {key}")
    model_file = data["model_file"]
    if model_file != f"{path.stem}.wm":
        raise _fail(path, f'model_file must be "{path.stem}.wm" (the entry name with .wm)')
    model_path = path.with_name(model_file)
    if not model_path.is_file():
        raise _fail(path, f"{model_file} does not exist")
    tools = data.get("tools")
    if tools is not None and tools not in TOOL_SETS:
        raise _fail(path, f"tools must be null or one of {TOOL_SETS}")
    checks = data.get("checks", [])
    if not isinstance(checks, list) or not all(isinstance(c, str) for c in checks):
        raise _fail(path, "checks must be a list of check texts")
    initial = data.get("initial", {})
    if not isinstance(initial, dict):
        raise _fail(path, "initial must be an object")
    bound = data.get("bound", 8)
    if not isinstance(bound, int) or isinstance(bound, bool) or bound < 1:
        raise _fail(path, "bound must be a positive integer")
    expect = _expect(path, data["expect"], len(checks))
    if isinstance(expect, ModeExpects) and not checks:
        raise _fail(path, "a solver entry needs at least one check")
    if not isinstance(expect, ModeExpects) and (checks or initial or "bound" in data):
        raise _fail(path, "checks, initial and bound belong to solver entries only")
    xfail = _known_bug(path, data.get("xfail"))
    kind = data.get("kind")
    if path.stem.startswith("conflict_"):
        if kind not in CONFLICT_KINDS or kind in PENDING_KINDS:
            raise _fail(
                path, f"a conflict entry needs a kind, one of {[k for k in CONFLICT_KINDS if k not in PENDING_KINDS]}"
            )
        if not isinstance(expect, ModeExpects) or bound > CONFLICT_MAX_BOUND:
            raise _fail(path, f"a conflict entry is a solver entry with a bound of at most {CONFLICT_MAX_BOUND}")
        if xfail is not None or "\n" in str(data["description"]):
            raise _fail(path, "a conflict entry has a one-line description (its reason) and no xfail")
    elif kind is not None:
        raise _fail(path, "kind belongs to conflict entries (conflict_*) only")
    return CorpusEntry(
        name=path.stem,
        description=str(data["description"]),
        model_file=model_file,
        model=model_path.read_text(encoding="utf-8"),
        tools_name=tools,
        expect=expect,
        checks=tuple(checks),
        initial=initial,
        bound=bound,
        xfail=xfail,
        conflict_kind=kind,
    )


def load_entries(directory: Path = CORPUS_DIR) -> list[CorpusEntry]:
    """Every entry of the corpus, sorted by name.

    Raises:
        CorpusFormatError: for a malformed entry, or a ``.wm`` file that no entry uses.
    """
    paths = sorted(directory.glob("*.json"))
    entries = [load_entry(path) for path in paths]
    orphans = sorted({p.stem for p in directory.glob("*.wm")} - {p.stem for p in paths})
    if orphans:
        raise CorpusFormatError(f"model files without an entry: {', '.join(o + '.wm' for o in orphans)}")
    return entries


def entries_of(entries: Sequence[CorpusEntry], *kinds: str) -> list[CorpusEntry]:
    """The entries of the given kinds."""
    return [entry for entry in entries if entry.kind in kinds]
