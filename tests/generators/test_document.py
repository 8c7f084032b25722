"""Document chunking: the operations manual, markdown corner cases, bad input and property tests."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mantra_env.errors import MantraError
from mantra_env.generators.document import (
    Chunk,
    DocumentError,
    DocumentGraph,
    Edge,
    UnknownChunkError,
    chunk_document,
    count_tokens,
    heading_length,
)

MANUAL = Path(__file__).parents[2] / "mantra_env" / "domains" / "operations" / "manual.md"

OPERATIONS_TITLES = [
    "Operations Desk Standard Operating Procedure (SOP) v4.2",
    "1. Introduction",
    "2. Digital Asset Acquisition (Software & Licenses)",
    "3. Travel & Expense Branching Logic",
    "3.1. Regional Overrides",
    '3.2. The "Over-Budget" Protocol',
    "4. Hardware Procurement & Logistics",
    "4.1. Inventory Check Logic",
    "4.2. Delivery Requirements",
    "5. Compliance & Termination States",
]


def operations_graph(max_chunk_tokens: int = 4000, always_split_headings: bool = True) -> DocumentGraph:
    return chunk_document(MANUAL.read_text(), max_chunk_tokens, "operations", always_split_headings)


def synthetic_manual(sections: int = 12, subsections: int = 4) -> str:
    """A manual with ``1 + sections * (1 + subsections)`` headings, each with a short deterministic paragraph."""
    words = ["check", "verify", "escalate", "book", "order", "assign", "reject", "approve", "record", "notify"]

    def paragraph(n: int) -> str:
        return " ".join(words[(n * 7 + i * 3) % len(words)] for i in range(12 + n % 9)).capitalize() + "."

    out = ["# Synthetic Manual\n\n", paragraph(0), "\n\n"]
    for i in range(1, sections + 1):
        out += [f"## {i}. Topic {i}\n\n", paragraph(i), "\n\n"]
        for j in range(1, subsections + 1):
            out += [f"### {i}.{j}. Rule {i}.{j}\n\n", paragraph(i * 10 + j), "\n\n"]
    return "".join(out)


# --- the operations manual ---------------------------------------------------------------------------------


def test_operations_manual_one_chunk_per_heading() -> None:
    graph = operations_graph()
    assert [c.title for c in graph.nodes] == OPERATIONS_TITLES
    assert [c.id for c in graph.nodes] == [f"c{i:02d}" for i in range(10)]
    assert [c.level for c in graph.nodes] == [0, 2, 2, 2, 3, 3, 2, 3, 3, 2]
    assert graph.node("c00").children == ["c01", "c02", "c03", "c06", "c09"]
    assert graph.node("c07").path == [OPERATIONS_TITLES[0], "4. Hardware Procurement & Logistics", OPERATIONS_TITLES[7]]
    assert graph.node("c06").text == "## 4. Hardware Procurement & Logistics\n\n"
    assert graph.node("c07").text.startswith("### 4.1. Inventory Check Logic\n\nAlways `check_inventory` first.")
    assert "".join(c.text for c in graph.nodes) == MANUAL.read_text()
    assert len(graph.edges) == 9 and all(e.kind == "hierarchy" and e.explicit is None for e in graph.edges)


def test_operations_toc() -> None:
    lines = operations_graph().toc().splitlines()
    assert lines[0] == "c00  Operations Desk Standard Operating Procedure (SOP) v4.2 (15 tokens)"
    assert lines[7] == "    c07  4.1. Inventory Check Logic (263 tokens)"
    assert len(lines) == 10


def test_operations_manual_unsplit_fits_in_one_chunk() -> None:
    graph = operations_graph(always_split_headings=False)
    assert [(c.id, c.title, c.tokens) for c in graph.nodes] == [("c00", OPERATIONS_TITLES[0], 1101)]
    assert graph.edges == []


def test_small_limit_splits_only_what_is_too_long() -> None:
    graph = operations_graph(max_chunk_tokens=300, always_split_headings=False)
    # Section 3 (193 tokens with its subsections) stays whole; section 4 (353) is split into 4.1 and 4.2.
    assert [c.title for c in graph.nodes] == OPERATIONS_TITLES[:4] + OPERATIONS_TITLES[6:]
    assert [c.tokens for c in graph.nodes] == [15, 184, 154, 193, 10, 263, 80, 202]
    assert graph.node("c03").text.endswith(
        "before booking. Book with `book_travel` and set the request status to `booked`.\n\n"
    )
    assert all(c.tokens <= 300 for c in graph.nodes)


def test_long_section_is_cut_into_parts_at_paragraphs() -> None:
    graph = operations_graph(max_chunk_tokens=60)
    parts = [c for c in graph.nodes if c.title.startswith("4.1.")]
    assert [(c.title, c.part, c.parent) for c in parts] == [
        (f"4.1. Inventory Check Logic (part {i}/5)", i, "c14") for i in range(1, 6)
    ]
    # The list paragraph is too long for one part, so it is cut at line ends.
    assert parts[0].text.startswith(
        "### 4.1. Inventory Check Logic\n\nAlways `check_inventory` first.\n\n- **In stock**"
    )
    assert parts[0].text.endswith("  Never create a purchase order for an in-stock item.\n")
    assert parts[1].text.startswith("- **Out of stock, lead time of 7 days or less**")
    assert [c.tokens for c in parts] == [59, 52, 56, 53, 43]
    assert all(c.tokens <= 60 for c in graph.nodes)
    assert "".join(c.text for c in graph.nodes) == MANUAL.read_text()


# --- markdown corner cases ---------------------------------------------------------------------------------


def titles(markdown: str, **kwargs: object) -> list[str]:
    graph = chunk_document(markdown, 4000, "doc", **kwargs)  # type: ignore[arg-type]
    assert "".join(c.text for c in graph.nodes) == markdown
    return [c.title for c in graph.nodes]


def test_headings_in_fenced_code_are_not_headings() -> None:
    markdown = "# T\n\n```python\n# a comment\nX\n===\n```\n\n~~~~\n## still code\n~~~\n~~~~\n\n## Real\n\nbody\n"
    assert titles(markdown) == ["T", "Real"]


def test_unclosed_fence_runs_to_the_end() -> None:
    assert titles("# T\n\n```\n## code\n") == ["T"]


def test_setext_headings() -> None:
    markdown = "Title\n=====\n\nIntro.\n\nSub A\n-----\n\nBody.\n\nline one\nline two\n---\n\n- item\n---\n"
    # "line one / line two" is a two-line paragraph (not recognised) and a list item is not a paragraph.
    assert titles(markdown) == ["Title", "Sub A"]


def test_front_matter_is_not_a_heading() -> None:
    assert titles("---\ntitle: x\n---\n# Real\n\ntext\n") == ["Real"]


def test_atx_details() -> None:
    markdown = "# T #\n\n#NoSpace\n\n    # indented code\n\n##   Spaced   ##\n\n#\n\n####### seven\n"
    assert titles(markdown) == ["T", "Spaced"]


def test_crlf_line_endings() -> None:
    assert titles("# T\r\n\r\ntext\r\n\r\n## S\r\n\r\nbody\r\n") == ["T", "S"]


def test_root_without_single_h1_is_named_after_the_document() -> None:
    assert titles("# A\n\ntext\n\n# B\n\nmore\n") == ["doc", "A", "B"]
    assert titles("Preface.\n\n## Only h2\n\ntext\n") == ["doc", "Only h2"]


def test_skipped_levels_nest_under_the_nearest_lower_heading() -> None:
    graph = chunk_document("# T\n\n#### deep\n\nx\n\n## S\n\n### S.1\n\ny\n", 4000)
    assert [(c.title, c.level, c.parent) for c in graph.nodes] == [
        ("T", 0, None),
        ("deep", 4, "c00"),
        ("S", 2, "c00"),
        ("S.1", 3, "c02"),
    ]


def test_document_without_headings() -> None:
    assert titles("Just one paragraph.\n") == ["doc"]
    graph = chunk_document("No headings at all. " * 50, 30, "flat")
    assert [c.title for c in graph.nodes] == [f"flat (part {i}/10)" for i in range(1, 11)]
    assert [c.parent for c in graph.nodes] == [None] + ["c00"] * 9  # later root parts hang under part 1
    assert all(c.tokens <= 30 for c in graph.nodes)


def test_hard_cut_and_the_one_character_exception() -> None:
    graph = chunk_document("a" * 80, 2)  # no whitespace to cut at: the longest prefixes within 2 tokens
    assert [(len(c.text), c.tokens) for c in graph.nodes] == [(16, 2), (12, 2), (12, 2), (16, 2), (12, 2), (12, 2)]
    assert "".join(c.text for c in graph.nodes) == "a" * 80
    emoji = chunk_document("🎉🎉", 1)  # one character is 3 tokens: it cannot be cut further
    assert [(c.text, c.tokens) for c in emoji.nodes] == [("🎉", 3), ("🎉", 3)]


def test_over_long_preamble_parts_become_first_children() -> None:
    markdown = "# T\n\n## S\n\n" + "Sentence one is here. " * 20 + "\n\n### S.1\n\nbody\n"
    graph = chunk_document(markdown, 40)
    assert [(c.title, c.parent) for c in graph.nodes] == [
        ("T", None),
        ("S (part 1/3)", "c00"),
        ("S (part 2/3)", "c01"),
        ("S (part 3/3)", "c01"),
        ("S.1", "c01"),
    ]
    assert graph.toc().splitlines()[2] == "    c02  S (part 2/3) (36 tokens)"
    assert graph.node("c02").text.startswith("Sentence one")  # cut at a sentence end


def test_heading_length_and_part_numbers() -> None:
    graph = chunk_document("# T\n\n## S\n\nbody one.\n\nbody two.\n", 5)
    assert [(c.title, heading_length(c)) for c in graph.nodes] == [
        ("T", 4),
        ("S (part 1/3)", 5),
        ("S (part 2/3)", 0),
        ("S (part 3/3)", 0),
    ]


def test_count_tokens_is_cl100k() -> None:
    assert count_tokens("") == 0
    assert count_tokens("Hello world") == 2
    assert count_tokens("<|endoftext|>") == 7  # special-token text counts as ordinary text


def test_count_tokens_matches_tiktokens_own_cl100k(monkeypatch: pytest.MonkeyPatch) -> None:
    import tiktoken

    spec = importlib.util.find_spec("litellm")
    assert spec is not None and spec.submodule_search_locations
    bundled = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(bundled))  # tiktoken's own loader, offline from the same file
    reference = tiktoken.get_encoding("cl100k_base")
    for text in [MANUAL.read_text(), "Ünïcödé ✓ 🎉\r\n\ttabs  and   spaces", "x = 2150.0 # c'est l'été"]:
        assert count_tokens(text) == len(reference.encode_ordinary(text))


# --- bad input ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("markdown", ["", "  \n\n\t"])
def test_empty_manual(markdown: str) -> None:
    with pytest.raises(DocumentError, match="manual 'doc' is empty"):
        chunk_document(markdown, 100, "doc")


@pytest.mark.parametrize("limit", [0, -5, 1.5, True])
def test_bad_limit(limit: object) -> None:
    with pytest.raises(DocumentError, match="max_chunk_tokens must be an integer of at least 1"):
        chunk_document("# T\n", limit)  # type: ignore[arg-type]


def test_unknown_chunk_has_did_you_mean() -> None:
    graph = operations_graph()
    with pytest.raises(UnknownChunkError, match=r"no chunk 'c7' in document graph 'operations'; did you mean 'c07'\?"):
        graph.node("c7")
    with pytest.raises(KeyError):
        graph.neighbours("x99")
    assert isinstance(UnknownChunkError("m"), MantraError) and str(UnknownChunkError("m")) == "m"


# --- graph operations --------------------------------------------------------------------------------------


def test_references_validated_and_merged() -> None:
    graph = operations_graph().with_references(
        [
            Edge(source="c08", target="c07", kind="reference", explicit=False, note="delivery after fulfilment"),
            Edge(source="c07", target="c08", kind="reference", explicit=True, note="see 4.2"),
            Edge(source="c02", target="c09", kind="reference", explicit=True, note="reason codes"),
        ]
    )
    references = [e for e in graph.edges if e.kind == "reference"]
    assert references == [
        Edge(source="c02", target="c09", kind="reference", explicit=True, note="reason codes"),
        Edge(source="c08", target="c07", kind="reference", explicit=True, note="delivery after fulfilment; see 4.2"),
    ]
    assert graph.neighbours("c07") == ["c06", "c08"]
    assert graph.neighbours("c09") == ["c00", "c02"]
    again = graph.with_references([Edge(source="c09", target="c02", kind="reference", note="reason codes")])
    assert again == graph


@pytest.mark.parametrize(
    ("edge", "error", "message"),
    [
        (Edge(source="c01", target="c01", kind="reference"), DocumentError, "self loop"),
        (Edge(source="c01", target="c02", kind="hierarchy"), DocumentError, "expected 'reference'"),
        (Edge(source="c01", target="c99", kind="reference"), UnknownChunkError, "no chunk 'c99'"),
    ],
)
def test_bad_references(edge: Edge, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        operations_graph().with_references([edge])


def test_text_of_is_in_document_order() -> None:
    graph = operations_graph()
    assert graph.text_of(["c05", "c04"]) == graph.node("c04").text + graph.node("c05").text
    assert graph.text_of([c.id for c in reversed(graph.nodes)]) == MANUAL.read_text()
    gap = chunk_document("# T\n## A\na\n## B\nb\n## C\nc\n", 100)
    assert gap.text_of(["c03", "c01"]) == "## A\na\n\n## C\nc\n"  # a blank line where a chunk is skipped


def test_json_round_trip_and_invalid_graphs() -> None:
    graph = operations_graph().with_references([Edge(source="c02", target="c09", kind="reference", explicit=True)])
    again = DocumentGraph.model_validate_json(graph.model_dump_json())
    assert again == graph and again.neighbours("c02") == ["c00", "c09"]
    data = graph.model_dump()
    data["edges"].append({"source": "c01", "target": "c42", "kind": "reference"})
    with pytest.raises(ValueError, match="unknown chunk 'c42'"):
        DocumentGraph.model_validate(data)
    with pytest.raises(ValueError, match="neither explicit nor implicit"):
        Edge(source="c00", target="c01", kind="hierarchy", explicit=True)
    with pytest.raises(ValueError, match="extra"):
        Chunk.model_validate({**graph.nodes[0].model_dump(), "surprise": 1})


def test_synthetic_manual_shape() -> None:
    graph = chunk_document(synthetic_manual(), 4000, "synthetic")
    assert len(graph.nodes) == 61 and graph.nodes[-1].id == "c60"
    assert graph.node("c06").title == "2. Topic 2"


# --- properties --------------------------------------------------------------------------------------------

WORD = st.text("abcdefghij", min_size=1, max_size=8)
TITLE = st.builds(lambda a, b: f"{a.capitalize()} {b}", WORD, WORD)
PARAGRAPH = st.lists(st.lists(WORD, min_size=1, max_size=12).map(" ".join), min_size=1, max_size=3).map(
    lambda lines: "\n".join(line.capitalize() + "." for line in lines)
)


@st.composite
def blocks(draw: st.DrawFn) -> tuple[str, tuple[int, str] | None]:
    """One markdown block and the heading it declares (level, title), if any."""
    kind = draw(st.sampled_from(["atx", "atx", "setext", "paragraph", "paragraph", "list", "fence"]))
    if kind == "atx":
        level, title = draw(st.integers(1, 4)), draw(TITLE)
        return f"{'#' * level} {title}", (level, title)
    if kind == "setext":
        level, title = draw(st.integers(1, 2)), draw(TITLE)
        return f"{title}\n{('=' if level == 1 else '-') * draw(st.integers(1, 6))}", (level, title)
    if kind == "list":
        return "\n".join(f"- {item}" for item in draw(st.lists(WORD, min_size=1, max_size=4))), None
    if kind == "fence":
        fake = draw(TITLE)
        return f"```\n# Fake {fake}\nFake {fake}\n===\n```", None
    return draw(PARAGRAPH), None


@st.composite
def manuals(draw: st.DrawFn) -> tuple[str, list[tuple[int, str]]]:
    parts = draw(st.lists(blocks(), min_size=1, max_size=25))
    separators = draw(st.lists(st.sampled_from(["\n\n", "\n\n\n", "\n \n"]), min_size=len(parts), max_size=len(parts)))
    text = "".join(block + sep for (block, _), sep in zip(parts, separators, strict=True))
    return text, [heading for _, heading in parts if heading is not None]


def check_tree(graph: DocumentGraph) -> None:
    assert [c.id for c in graph.nodes] == [
        f"c{i:0{max(2, len(str(len(graph.nodes) - 1)))}d}" for i in range(len(graph.nodes))
    ]
    assert [c.parent for c in graph.nodes].count(None) == 1 and graph.nodes[0].parent is None
    for chunk in graph.nodes:
        assert chunk.path[-1] == chunk.title and chunk.tokens == count_tokens(chunk.text)
        for child in chunk.children:
            assert graph.node(child).parent == chunk.id
            assert graph.node(child).path[:-1] == chunk.path
    assert [(e.source, e.target) for e in graph.edges] == [(c.parent, c.id) for c in graph.nodes if c.parent]


@settings(max_examples=150, deadline=None)
@given(manuals())
def test_every_heading_is_one_chunk(manual: tuple[str, list[tuple[int, str]]]) -> None:
    text, headings = manual
    graph = chunk_document(text, 100_000, "manual")
    assert "".join(c.text for c in graph.nodes) == text
    got = Counter(c.title for c in graph.nodes[1:])
    if graph.nodes[0].title != "manual":  # the root took the only top-level heading, an H1
        got[graph.nodes[0].title] += 1
    assert got == Counter(title for _, title in headings)
    assert all(c.part is None for c in graph.nodes)
    check_tree(graph)


@settings(max_examples=150, deadline=None)
@given(manuals(), st.integers(3, 80), st.booleans())
def test_chunks_within_limit_and_reproduce_the_manual(
    manual: tuple[str, list[tuple[int, str]]], limit: int, always_split: bool
) -> None:
    text, _ = manual
    graph = chunk_document(text, limit, "manual", always_split)
    assert "".join(c.text for c in graph.nodes) == text
    assert all(c.tokens <= limit for c in graph.nodes)
    check_tree(graph)
    for chunk in graph.nodes:
        if chunk.part is not None:
            assert chunk.title.endswith(f" (part {chunk.part}/{chunk.title.rsplit('/', 1)[1]}")
    assert chunk_document(text, limit, "manual", always_split).model_dump_json() == graph.model_dump_json()
    assert DocumentGraph.model_validate_json(graph.model_dump_json()) == graph


def test_an_excerpt_carries_the_sections_its_chunks_refer_to_explicitly() -> None:
    """A chunk that says "the allowance table above" gets that table as context; implicit links do not count,
    and a referred chunk the sample holds is not repeated."""
    manual = "# A\n\nintro\n\n## Table\n\nrows\n\n## Bags\n\nsee the table above\n\n## Other\n\nmore\n"
    graph = chunk_document(manual, 500, "m")
    table, bags, other = (n.id for n in graph.nodes if n.title in ("Table", "Bags", "Other"))
    graph = graph.with_references(
        [
            Edge(source=bags, target=table, kind="reference", explicit=True),
            Edge(source=bags, target=other, kind="reference", explicit=False),
        ]
    )
    text = graph.excerpt([bags])
    assert text.startswith(graph.text_of([bags]).rstrip())
    assert text.endswith(graph.text_of([table])) and "for context" in text and "more" not in text
    assert graph.excerpt([bags, table]) == graph.text_of([bags, table])
    assert graph.excerpt([table]) == graph.text_of([table])  # references count from the sample's chunks only
