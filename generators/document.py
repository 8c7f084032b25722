"""The document graph: deterministic hierarchical chunking of a markdown manual (paper App. "Graph generation").

**Headings.** ATX headings (``#`` to ``######``, at most 3 spaces of indentation, a non-empty title, so a bare
``#`` is text; a closing ``#`` run is dropped from the title) and single-line setext headings (a one-line
paragraph underlined with ``===`` for level 1 or ``---`` for level 2) are headings. Nothing inside a fenced code
block (```` ``` ```` or ``~~~``, closed by a fence of the same character at least as long; an unclosed fence runs
to the end) and nothing inside a leading YAML front-matter block (``---`` ... ``---``) is a heading. Not
recognised: setext headings whose text spans several lines (the underline stays body text) and headings inside
HTML blocks.

**Sections.** A heading's section runs to the next heading of the same or a higher level. The parent of a
heading is the nearest preceding heading of a lower level (so ``##`` directly followed by ``####`` makes the
``####`` a child of the ``##``). The root is the whole document (level 0). If the document's only top-level
heading is an H1, the root *is* that H1 section: its title is the H1's and its children are the H1's
subsections; otherwise the root's title is the document ``name`` and its children are the top-level sections.

**Splitting.** Starting from the root, a section with subsections is split into them when
``always_split_headings`` is True (the default: one chunk per heading, as in the paper's operations graph) or when
its whole text is over ``max_chunk_tokens``. A split node owns its heading line(s) plus the body before its first
subsection (its preamble); an unsplit node owns its whole section, sub-headings included. A node whose own text is
still over the limit is cut into parts: it is broken into units (paragraphs, each owning the blank lines after it;
a paragraph over the limit into lines; a line into sentences; a sentence into words; a word by a hard character
cut) and consecutive units are packed into parts, each the longest run that fits. Parts are chunks titled
``"<title> (part i/n)"`` with ``part`` set; part 1 holds the heading (possibly alone, when the first paragraph
does not fit beside it). Later parts are siblings of part 1, except when part 1 has subsections or is the root:
then they are its first children, so that the table of contents, read in document order by indentation, shows
every chunk under its parent and the graph keeps a single root. The root's own text is empty when the manual
starts with its first section and has several top-level sections.

**Invariants.** Chunk ids ``c00``, ``c01``, ... follow document order; concatenating every chunk's ``text``
in id order gives back the manual character for character (nothing is stripped); every chunk has at most
``max_chunk_tokens`` tokens, except a single character that alone counts more (only possible for limits
below ~4 tokens). The same input always gives the same graph (and the same JSON).

**Tokens.** :func:`count_tokens` is exact OpenAI ``cl100k_base`` BPE (tiktoken), loaded from the copy of
the encoding that litellm bundles, so it works offline and never downloads; special-token text such as
``<|endoftext|>`` counts as ordinary text.

Reference edges (explicit and implicit cross-references between chunks) come from an LLM and are added with
:meth:`DocumentGraph.with_references`.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from mantra_env.errors import MantraError, did_you_mean

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "Chunk",
    "DocumentError",
    "DocumentGraph",
    "Edge",
    "UnknownChunkError",
    "chunk_document",
    "count_tokens",
    "heading_length",
]


class DocumentError(MantraError, ValueError):
    """A manual or a document graph is unusable (empty manual, bad limit, bad reference edge, ...)."""


class UnknownChunkError(MantraError, KeyError):
    """A chunk id that is not in the document graph."""

    def __str__(self) -> str:
        # KeyError's str() would show the message quoted.
        return str(self.args[0])


# --- tokens ------------------------------------------------------------------------------------------------

# The cl100k_base file as tiktoken caches it (name: sha1 of its URL) and its published sha256.
_CL100K_FILE = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
_CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|"""
    r"""\s+(?!\S)|\s"""
)


@lru_cache(maxsize=1)
def _encoding() -> tiktoken.Encoding:
    import tiktoken  # a litellm dependency; imported lazily because loading the ranks takes ~0.3 s

    spec = importlib.util.find_spec("litellm")
    locations = list(spec.submodule_search_locations or []) if spec else []
    candidates = [Path(p) / "litellm_core_utils" / "tokenizers" / _CL100K_FILE for p in locations]
    path = next((c for c in candidates if c.is_file()), None)
    if path is None:
        raise DocumentError("count_tokens needs litellm's bundled cl100k_base tokenizer; reinstall litellm")
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != _CL100K_SHA256:
        raise DocumentError(f"{path} is not the cl100k_base tokenizer (sha256 mismatch); reinstall litellm")
    ranks = {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in data.splitlines() if line)}
    return tiktoken.Encoding(name="cl100k_base", pat_str=_CL100K_PATTERN, mergeable_ranks=ranks, special_tokens={})


def count_tokens(text: str) -> int:
    """Number of ``cl100k_base`` tokens in ``text`` (exact, offline, deterministic)."""
    if not text:
        return 0
    return len(_encoding().encode_ordinary(text))


# --- models ------------------------------------------------------------------------------------------------


class Chunk(BaseModel):
    """One node of the document graph: a section (or part of one) of the manual."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^c\d{2,}$")
    title: str
    path: list[str]
    level: int = Field(ge=0, le=6)
    text: str
    tokens: int = Field(ge=0)
    parent: str | None
    children: list[str]
    part: int | None = Field(default=None, ge=1)
    governs: list[str] = Field(
        default_factory=list,
        exclude_if=lambda tools: not tools,  # a graph built without governing rules keeps its bytes
        description="Tools whose every call this chunk's rules govern (config references.governing_rules).",
    )


REFERRED_HEADING = "(Sections the excerpt above refers to, for context:)"
GOVERNING_HEADING = "(Rules from other sections that govern the actions of the excerpt above:)"


class Edge(BaseModel):
    """A directed edge: ``hierarchy`` (parent to child) or ``reference`` (LLM-found cross-reference)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    target: str
    kind: Literal["hierarchy", "reference"]
    explicit: bool | None = None
    note: str = ""

    @model_validator(mode="after")
    def _hierarchy_is_neither(self) -> Edge:
        if self.kind == "hierarchy" and self.explicit is not None:
            raise ValueError("a hierarchy edge is neither explicit nor implicit; leave `explicit` unset")
        return self


class DocumentGraph(BaseModel):
    """Chunks of a manual in document order with hierarchy and reference edges."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    max_chunk_tokens: int = Field(ge=1)
    nodes: list[Chunk]
    edges: list[Edge]
    _index: dict[str, int] = PrivateAttr(default_factory=dict)
    _adjacent: dict[str, list[str]] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> DocumentGraph:
        index = {chunk.id: i for i, chunk in enumerate(self.nodes)}
        if len(index) != len(self.nodes):
            raise DocumentError("document graph has duplicate chunk ids")
        for chunk in self.nodes:
            for other in [*([chunk.parent] if chunk.parent else []), *chunk.children]:
                if other not in index:
                    raise DocumentError(f"chunk {chunk.id} names unknown chunk {other!r} as parent or child")
        adjacent: dict[str, set[str]] = {chunk.id: set() for chunk in self.nodes}
        for edge in self.edges:
            for end in (edge.source, edge.target):
                if end not in index:
                    raise DocumentError(f"edge {edge.source} -> {edge.target}: unknown chunk {end!r}")
            adjacent[edge.source].add(edge.target)
            adjacent[edge.target].add(edge.source)
        self._index = index
        self._adjacent = {key: sorted(value, key=index.__getitem__) for key, value in adjacent.items()}
        return self

    def node(self, id: str) -> Chunk:
        """The chunk with this id; :class:`UnknownChunkError` (with a did-you-mean) if there is none."""
        position = self._index.get(id)
        if position is None:
            hint = did_you_mean(id, self._index)
            raise UnknownChunkError(f"no chunk {id!r} in document graph {self.name!r}" + (f"; {hint}" if hint else ""))
        return self.nodes[position]

    def position(self, id: str) -> int:
        """The chunk's 0-based position in document order."""
        self.node(id)
        return self._index[id]

    def toc(self) -> str:
        """Table of contents: one line per chunk in document order, indented two spaces per depth."""
        return "\n".join(f"{'  ' * (len(c.path) - 1)}{c.id}  {c.title} ({c.tokens} tokens)" for c in self.nodes)

    def neighbours(self, id: str) -> list[str]:
        """Chunks joined to ``id`` by any edge, either direction, in document order, without duplicates."""
        self.node(id)
        return list(self._adjacent[id])

    def text_of(self, ids: Iterable[str]) -> str:
        """The chunks' texts in document order: the manual's own characters.

        Where two chosen chunks are not consecutive in the manual, the earlier text is ended with a blank line
        so that the next heading starts a block; all chunks together give back the manual exactly.
        """
        positions = sorted({self.position(i) for i in ids})
        out: list[str] = []
        for before, after in zip(positions, [*positions[1:], None], strict=True):
            text = self.nodes[before].text
            if after is not None and after != before + 1 and not text.endswith("\n\n"):
                text += "\n" if text.endswith("\n") else "\n\n"
            out.append(text)
        return "".join(out)

    def excerpt(self, ids: Iterable[str], governing: Iterable[str] = ()) -> str:
        """What a sample's writers read: its chunks (:meth:`text_of`), then the chunks they refer to explicitly
        ("the allowance table above", "payment, below") that the sample does not hold, under a heading that marks
        them as context. Without them a writer is told to apply a table it cannot see. Then the ``governing``
        chunks (:meth:`governing`) not shown yet, under a heading of their own."""
        chosen = set(ids)
        referred = sorted(
            {e.target for e in self.edges if e.kind == "reference" and e.explicit and e.source in chosen} - chosen,
            key=self.position,
        )
        ruling = sorted(set(governing) - chosen - set(referred), key=self.position)
        text = self.text_of(chosen)
        if referred:
            text = f"{text.rstrip()}\n\n{REFERRED_HEADING}\n\n{self.text_of(referred)}"
        if ruling:
            text = f"{text.rstrip()}\n\n{GOVERNING_HEADING}\n\n{self.text_of(ruling)}"
        return text

    def governing(self, ids: Iterable[str], tools: Iterable[str]) -> list[str]:
        """Chunks outside ``ids`` whose rules govern one of ``tools`` (:attr:`Chunk.governs`), in document order:
        a rule such as "confirm before any change" reaches every sample whose actions it governs, though the
        sample's text shares no word with it."""
        chosen, wanted = set(ids), set(tools)
        return [c.id for c in self.nodes if c.id not in chosen and wanted.intersection(c.governs)]

    def with_governs(self, governs: Mapping[str, Sequence[str]]) -> DocumentGraph:
        """A copy whose chunks govern the tools ``governs`` gives by chunk id (others keep theirs)."""
        for chunk_id in governs:
            self.node(chunk_id)
        nodes = [c.model_copy(update={"governs": list(governs[c.id])}) if c.id in governs else c for c in self.nodes]
        return DocumentGraph(name=self.name, max_chunk_tokens=self.max_chunk_tokens, nodes=nodes, edges=self.edges)

    def with_references(self, refs: Sequence[Edge]) -> DocumentGraph:
        """A copy with these reference edges added to the existing ones.

        Each edge must be a ``reference`` between two different known chunks. Edges on the same unordered pair
        (new or existing) are merged into one: the first one's direction, explicit if any of them is, their
        distinct notes joined by ``"; "``. Reference edges are listed after the hierarchy edges in document order.

        Raises:
            DocumentError: an edge is not a reference or is a self loop.
            UnknownChunkError: an edge names an unknown chunk.
        """
        merged: dict[frozenset[str], Edge] = {}
        for edge in [*(e for e in self.edges if e.kind == "reference"), *refs]:
            if edge.kind != "reference":
                raise DocumentError(f"edge {edge.source} -> {edge.target} has kind {edge.kind!r}; expected 'reference'")
            self.node(edge.source)
            self.node(edge.target)
            if edge.source == edge.target:
                raise DocumentError(f"reference edge {edge.source} -> {edge.target} is a self loop")
            key = frozenset((edge.source, edge.target))
            merged[key] = _merge(merged[key], edge) if key in merged else edge
        references = sorted(merged.values(), key=lambda e: (self._index[e.source], self._index[e.target]))
        hierarchy = [e for e in self.edges if e.kind == "hierarchy"]
        # Built anew (not model_copy) so that the validator rebuilds the adjacency.
        return DocumentGraph(
            name=self.name, max_chunk_tokens=self.max_chunk_tokens, nodes=self.nodes, edges=[*hierarchy, *references]
        )


def _merge(first: Edge, second: Edge) -> Edge:
    flags = [f for f in (first.explicit, second.explicit) if f is not None]
    notes = list(dict.fromkeys(n for n in (first.note, second.note) if n))
    return first.model_copy(update={"explicit": any(flags) if flags else None, "note": "; ".join(notes)})


# --- markdown headings -------------------------------------------------------------------------------------

_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_UNDERLINE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
_THEMATIC = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
# Lines that cannot start a paragraph: indented code, block quotes, list items, HTML.
_NOT_TEXT = re.compile(r"^(?: {4}|\t| {0,3}(?:>|[-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|<))")


@dataclass
class _Heading:
    start: int  # offset of the heading's first character
    end: int  # offset just after its last line (a setext underline included)
    level: int
    title: str


def _lines(text: str) -> list[tuple[int, int, str]]:
    """(start offset, end offset, line without its line break) for every line."""
    out: list[tuple[int, int, str]] = []
    offset = 0
    for raw in re.findall(r"[^\n]*\n|[^\n]+", text):
        out.append((offset, offset + len(raw), raw.rstrip("\r\n")))
        offset += len(raw)
    return out


def _front_matter_end(lines: list[tuple[int, int, str]]) -> int:
    """Index of the first line after a leading YAML front-matter block (0 if there is none)."""
    if lines and lines[0][2].rstrip() == "---":
        for i in range(1, len(lines)):
            if lines[i][2].rstrip() in ("---", "..."):
                return i + 1
    return 0


def _headings(text: str) -> list[_Heading]:
    """Every ATX and single-line setext heading outside fenced code and front matter, in document order."""
    lines = _lines(text)
    found: list[_Heading] = []
    fence: tuple[str, int] | None = None  # (character, length) of the open code fence
    boundary = True  # the previous line ended a block, so a text line here starts a paragraph
    one_line_paragraph = False  # the previous line started a paragraph: an underline now makes it a heading
    for i in range(_front_matter_end(lines), len(lines)):
        start, end, line = lines[i]
        fence_match = _FENCE.match(line)
        if fence is not None:
            if fence_match and _closes(fence, fence_match):
                fence, boundary = None, True
            continue
        if fence_match and not (fence_match.group(1)[0] == "`" and "`" in fence_match.group(2)):
            fence, one_line_paragraph = (fence_match.group(1)[0], len(fence_match.group(1))), False
            continue
        atx = _ATX.match(line)
        if atx and atx.group(2).strip():
            found.append(_Heading(start, end, len(atx.group(1)), atx.group(2).strip()))
            boundary, one_line_paragraph = True, False
            continue
        if one_line_paragraph and _UNDERLINE.match(line):
            title_start, _, title = lines[i - 1]
            found.append(_Heading(title_start, end, 1 if line.strip()[0] == "=" else 2, title.strip()))
            boundary, one_line_paragraph = True, False
            continue
        blank = not line.strip()
        thematic = bool(_THEMATIC.match(line))
        one_line_paragraph = boundary and not blank and not thematic and not _NOT_TEXT.match(line)
        boundary = blank or thematic
    return found


def _closes(fence: tuple[str, int], match: re.Match[str]) -> bool:
    marker, rest = match.group(1), match.group(2)
    return marker[0] == fence[0] and len(marker) >= fence[1] and not rest.strip()


def heading_length(chunk: Chunk) -> int:
    """Number of characters of the chunk's heading (0 if its text does not start with a heading)."""
    if chunk.part is not None and chunk.part > 1:
        return 0
    found = _headings(chunk.text)
    return found[0].end if found and found[0].start == 0 else 0


# --- sections and chunks -----------------------------------------------------------------------------------


@dataclass
class _Section:
    start: int
    end: int
    level: int
    title: str
    children: list[_Section] = field(default_factory=list)


@dataclass
class _Node:
    start: int
    text: str
    title: str
    level: int
    part: int | None
    children: list[_Node] = field(default_factory=list)


def _section_tree(text: str, name: str) -> _Section:
    """The document as a tree of sections; see the module docstring for the root rule."""
    headings = _headings(text)
    root = _Section(0, len(text), 0, name)
    stack = [root]
    for i, heading in enumerate(headings):
        end = next((h.start for h in headings[i + 1 :] if h.level <= heading.level), len(text))
        while len(stack) > 1 and stack[-1].level >= heading.level:
            stack.pop()
        section = _Section(heading.start, end, heading.level, heading.title)
        stack[-1].children.append(section)
        stack.append(section)
    if len(root.children) == 1 and root.children[0].level == 1:
        return _Section(0, len(text), 0, root.children[0].title, root.children[0].children)
    return root


# Finer and finer places to cut an over-long text; each match's end is a cut point.
_CUTS = [
    re.compile(r"\n(?:[ \t\r]*\n)+"),  # paragraphs (a paragraph keeps the blank lines after it)
    re.compile(r"\n"),  # lines
    re.compile(r"[.!?][\"')\]]*[ \t]+"),  # sentences
    re.compile(r"\s+"),  # words
]


def _units(text: str, limit: int, depth: int = 0) -> list[str]:
    """``text`` cut into consecutive pieces of at most ``limit`` tokens, each cut as coarse as possible."""
    if count_tokens(text) <= limit:
        return [text]
    if depth == len(_CUTS):
        return _hard_cut(text, limit)
    points = [0, *(m.end() for m in _CUTS[depth].finditer(text) if m.end() < len(text)), len(text)]
    pieces = [text[a:b] for a, b in itertools.pairwise(points) if b > a]
    return [unit for piece in pieces for unit in _units(piece, limit, depth + 1)]


def _hard_cut(text: str, limit: int) -> list[str]:
    out: list[str] = []
    while text:
        low, high = 1, len(text)  # a single character is kept even if it alone is over the limit
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if count_tokens(text[:middle]) <= limit else (low, middle - 1)
        out.append(text[:low])
        text = text[low:]
    return out


def _parts(text: str, limit: int) -> list[str]:
    """:func:`_units` packed into consecutive parts, each the longest run of units that fits within ``limit``.

    The run is found by galloping then binary search (O(log n) token counts per part instead of one per unit);
    every accepted run was counted, so every part fits even where BPE counts are not additive.
    """
    units = _units(text, limit)
    parts: list[str] = []
    first = 0
    while first < len(units):

        def fits(stop: int, first: int = first) -> bool:
            return count_tokens("".join(units[first:stop])) <= limit

        good, step = first + 1, 1  # a single unit always fits (or is the one-character exception)
        while good + step <= len(units) and fits(good + step):
            good, step = good + step, step * 2
        bad = min(good + step, len(units) + 1)
        while bad - good > 1:
            middle = (good + bad) // 2
            good, bad = (middle, bad) if fits(middle) else (good, middle)
        parts.append("".join(units[first:good]))
        first = good
    return parts


def _build(text: str, section: _Section, limit: int, always_split: bool, is_root: bool) -> list[_Node]:
    """The chunks of one section: its own node(s) to hang under the parent."""
    whole = text[section.start : section.end]
    split = bool(section.children) and (always_split or count_tokens(whole) > limit)
    own = text[section.start : section.children[0].start] if split else whole
    pieces = _parts(own, limit) if own else [own]
    nodes: list[_Node] = []
    offset = section.start
    for i, piece in enumerate(pieces, start=1):
        title = f"{section.title} (part {i}/{len(pieces)})" if len(pieces) > 1 else section.title
        nodes.append(_Node(offset, piece, title, section.level, i if len(pieces) > 1 else None))
        offset += len(piece)
    subsections = [n for child in section.children for n in _build(text, child, limit, always_split, False)]
    if split or is_root:
        nodes[0].children = [*nodes[1:], *(subsections if split else [])]
        return nodes[:1]
    return nodes


def chunk_document(
    markdown: str, max_chunk_tokens: int, name: str = "manual", always_split_headings: bool = True
) -> DocumentGraph:
    """Chunk a markdown manual into a document graph with hierarchy edges (rules in the module docstring).

    Args:
        markdown: the manual.
        max_chunk_tokens: the most tokens a chunk may have (:func:`count_tokens`).
        name: the graph's name, and the root's title when the manual has no single H1.
        always_split_headings: one chunk per heading; if False, only sections over the limit are split.

    Raises:
        DocumentError: the manual is empty or blank, or ``max_chunk_tokens`` is below 1.
    """
    if not markdown.strip():
        raise DocumentError(f"manual {name!r} is empty; a document graph needs some text")
    if isinstance(max_chunk_tokens, bool) or not isinstance(max_chunk_tokens, int) or max_chunk_tokens < 1:
        raise DocumentError(f"max_chunk_tokens must be an integer of at least 1, got {max_chunk_tokens!r}")
    (root,) = _build(markdown, _section_tree(markdown, name), max_chunk_tokens, always_split_headings, True)
    flat: list[tuple[_Node, _Node | None]] = []
    pending: list[tuple[_Node, _Node | None]] = [(root, None)]
    while pending:
        node, parent = pending.pop()
        flat.append((node, parent))
        pending.extend((child, node) for child in reversed(node.children))
    flat.sort(key=lambda pair: pair[0].start)  # stable: a parent precedes an empty-text child at the same offset
    width = max(2, len(str(len(flat) - 1)))
    ids = {id(node): f"c{i:0{width}d}" for i, (node, _) in enumerate(flat)}
    paths: dict[int, list[str]] = {}
    chunks: list[Chunk] = []
    edges: list[Edge] = []
    for node, parent in sorted(flat, key=lambda pair: ids[id(pair[0])]):
        paths[id(node)] = [*(paths[id(parent)] if parent else []), node.title]
        parent_id = ids[id(parent)] if parent else None
        children = sorted((ids[id(child)] for child in node.children), key=lambda c: int(c[1:]))
        chunks.append(
            Chunk(
                id=ids[id(node)],
                title=node.title,
                path=paths[id(node)],
                level=node.level,
                text=node.text,
                tokens=count_tokens(node.text),
                parent=parent_id,
                children=children,
                part=node.part,
            )
        )
        if parent_id is not None:
            edges.append(Edge(source=parent_id, target=ids[id(node)], kind="hierarchy"))
    return DocumentGraph(name=name, max_chunk_tokens=max_chunk_tokens, nodes=chunks, edges=edges)
