"""Document graph plots: PNG and SVG files for the operations graph and a 61-chunk graph."""

from __future__ import annotations

import itertools
from pathlib import Path

from mantra_env.generators.document import Edge, chunk_document
from mantra_env.generators.graph_plot import _label, _layout, plot_graph
from mantra_env.generators.sampling import Coverage, SamplingSettings, draw_samples
from tests.generators.test_document import operations_graph, synthetic_manual


def test_operations_graph_with_coverage(tmp_path: Path) -> None:
    graph = operations_graph().with_references([Edge(source="c02", target="c09", kind="reference", explicit=True)])
    _, coverage = draw_samples(graph, SamplingSettings(), count=5)
    paths = plot_graph(graph, tmp_path / "figures" / "operations", coverage)
    assert paths == [tmp_path / "figures" / "operations.png", tmp_path / "figures" / "operations.svg"]
    assert paths[0].read_bytes().startswith(b"\x89PNG") and paths[0].stat().st_size > 20_000
    svg = paths[1].read_text()
    assert "times sampled" in svg and "c07" in svg and "reference" in svg


def test_large_graph_without_coverage(tmp_path: Path) -> None:
    graph = chunk_document(synthetic_manual(), 4000, "synthetic")
    graph = graph.with_references(
        [Edge(source="c07", target="c42", kind="reference"), Edge(source="c13", target="c55", kind="reference")]
    )
    png, svg = plot_graph(graph, tmp_path / "synthetic.png")  # a suffix on `out` is dropped
    assert png.name == "synthetic.png" and svg.name == "synthetic.svg"
    assert png.stat().st_size > 50_000 and "times sampled" not in svg.read_text()


def test_layout_keeps_one_slot_between_chunks_of_a_row() -> None:
    graph = chunk_document(synthetic_manual(), 4000, "synthetic")
    place = _layout(graph)
    assert place["c00"] == (23.5, 0)  # centred over 48 leaves
    rows: dict[int, list[float]] = {}
    for x, depth in place.values():
        rows.setdefault(depth, []).append(x)
    for xs in rows.values():
        xs.sort()
        assert all(b - a >= 1 for a, b in itertools.pairwise(xs))


def test_labels_are_short() -> None:
    graph = operations_graph(max_chunk_tokens=60)
    assert _label(graph.node("c00")) == "c00\nOperations Desk\nStandard…"
    assert _label(graph.node("c16")) == "c16 · part 2\n4.1. Inventory\nCheck Logic"
    assert all(len(line) <= 16 for chunk in graph.nodes for line in _label(chunk).splitlines()[1:])


def test_single_chunk_graph(tmp_path: Path) -> None:
    graph = chunk_document("Just one paragraph.\n", 100, "tiny")
    png, _ = plot_graph(graph, tmp_path / "tiny", Coverage(counts={"c00": 2}))
    assert png.stat().st_size > 5_000
