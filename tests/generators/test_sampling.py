"""Sampling strategies: golden samples, determinism, coverage growth, islands, sizes and bad input."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from functools import cache
from typing import get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from mantra_env.generators.document import DocumentGraph, Edge, chunk_document
from mantra_env.generators.sampling import (
    Coverage,
    CoverageStats,
    Sample,
    SamplingError,
    SamplingSettings,
    Strategy,
    draw_samples,
    eligible_nodes,
    sampling_adjacency,
)
from tests.generators.test_document import operations_graph, synthetic_manual

STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)
COVERING: tuple[Strategy, ...] = ("coverage_driven", "connected_diverse_coverage", "coverage_islands")
OPS_ELIGIBLE = ["c01", "c02", "c03", "c04", "c05", "c07", "c08", "c09"]


@cache
def ops() -> DocumentGraph:
    return operations_graph()


@cache
def synthetic() -> DocumentGraph:
    """61 chunks (root, 12 topics with 4 rules each), every one eligible, plus three reference edges."""
    graph = chunk_document(synthetic_manual(), 4000, "synthetic")
    return graph.with_references(
        [
            Edge(source="c07", target="c42", kind="reference", explicit=True, note="see 8.1"),
            Edge(source="c13", target="c55", kind="reference", explicit=False),
            Edge(source="c20", target="c33", kind="reference", explicit=True),
        ]
    )


def run(graph: DocumentGraph, strategy: Strategy, **kwargs: int) -> tuple[list[Sample], Coverage]:
    return draw_samples(graph, SamplingSettings(strategy=strategy, **kwargs))


# --- eligibility and adjacency -----------------------------------------------------------------------------


def test_heading_only_chunks_are_not_eligible() -> None:
    assert eligible_nodes(ops()) == OPS_ELIGIBLE  # c00 (the title) and c06 ("## 4. Hardware ...") are headings only
    assert len(eligible_nodes(synthetic())) == 61


def test_sampling_adjacency_bridges_heading_only_sections_but_not_the_root() -> None:
    assert sampling_adjacency(ops()) == {
        "c01": [],
        "c02": [],
        "c03": ["c04", "c05"],
        "c04": ["c03"],
        "c05": ["c03"],
        "c07": ["c08"],  # joined through the heading-only "4. Hardware Procurement & Logistics"
        "c08": ["c07"],
        "c09": [],
    }
    with_reference = ops().with_references([Edge(source="c02", target="c09", kind="reference")])
    assert sampling_adjacency(with_reference)["c02"] == ["c09"]


def test_consecutive_parts_are_adjacent() -> None:
    graph = chunk_document("# T\n\n## A\n\none two.\n\nthree four.\n\n## B\n\nfive.\n", 6)
    assert [c.title for c in graph.nodes] == ["T", "A (part 1/2)", "A (part 2/2)", "B"]
    assert sampling_adjacency(graph) == {"c01": ["c02"], "c02": ["c01"], "c03": []}


# --- golden samples ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        ("uniform", [["c02", "c03", "c04", "c08"], ["c01", "c04"], ["c03", "c09"], ["c03", "c08", "c09"]]),
        (
            "coverage_driven",
            [["c01", "c02", "c03"], ["c04", "c05", "c09"], ["c07", "c08"], ["c01", "c03", "c07", "c08"]],
        ),
        (
            "connected_diverse_coverage",
            [["c04", "c07", "c08", "c09"], ["c01", "c02", "c05"], ["c03", "c04", "c05"], ["c01", "c07", "c08", "c09"]],
        ),
        (
            "coverage_islands",
            [["c03", "c04", "c05"], ["c02", "c07", "c08", "c09"], ["c01", "c03", "c04"], ["c02", "c07", "c08"]],
        ),
    ],
)
def test_golden_operations_samples(strategy: Strategy, expected: list[list[str]]) -> None:
    samples, _ = draw_samples(ops(), SamplingSettings(strategy=strategy), count=4)
    assert [s.node_ids for s in samples] == expected
    assert [s.id for s in samples] == ["s000", "s001", "s002", "s003"]


def test_coverage_islands_starts_a_new_island_only_for_a_coverage_win() -> None:
    exact = SamplingSettings(min_nodes_per_sample=2, max_nodes_per_sample=2)
    # c03's neighbours were sampled 5 times, c09 once: a fresh island on c09 beats expanding around c03.
    crowded = Coverage(counts={**dict.fromkeys(OPS_ELIGIBLE, 5), "c03": 0, "c09": 1})
    (sample,), _ = draw_samples(ops(), exact, crowded, count=1)
    assert sample.islands == [["c03"], ["c09"]]
    (connected,), _ = draw_samples(
        ops(), exact.model_copy(update={"strategy": "connected_diverse_coverage"}), crowded, 1
    )
    assert connected.node_ids in (["c03", "c04"], ["c03", "c05"])
    # A neighbour as little covered as anything else: grow locally.
    fresh_pair = Coverage(counts={**dict.fromkeys(OPS_ELIGIBLE, 3), "c07": 0, "c08": 0})
    (local,), _ = draw_samples(ops(), exact, fresh_pair, count=1)
    assert local.islands == [["c07", "c08"]]


@pytest.mark.parametrize("seed", range(5))
def test_diverse_seed_is_far_from_what_was_sampled(seed: int) -> None:
    one = SamplingSettings(
        strategy="connected_diverse_coverage", min_nodes_per_sample=1, max_nodes_per_sample=1, seed=seed
    )
    (sample,), _ = draw_samples(ops(), one, Coverage(counts={"c04": 1}), count=1)
    assert sample.node_ids in (["c07"], ["c08"])  # 4 edges from c04; every other uncovered chunk is nearer


# --- determinism -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_same_seed_same_samples_other_seed_other_samples(strategy: Strategy) -> None:
    first, coverage = run(synthetic(), strategy)
    again, coverage_again = run(synthetic(), strategy)
    assert first == again and coverage == coverage_again
    other, _ = run(synthetic(), strategy, seed=7)
    assert [s.node_ids for s in other] != [s.node_ids for s in first]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_resuming_from_saved_coverage_continues_identically(strategy: Strategy) -> None:
    whole, coverage = run(synthetic(), strategy, max_samples=12)
    head, middle = draw_samples(synthetic(), SamplingSettings(strategy=strategy), count=5)
    saved = Coverage.model_validate_json(middle.model_dump_json())
    tail, end = draw_samples(synthetic(), SamplingSettings(strategy=strategy), saved, first_index=5)
    assert head + tail == whole and end == coverage
    assert [s.id for s in tail] == [f"s{i:03d}" for i in range(5, 12)]


# --- coverage ----------------------------------------------------------------------------------------------


def covered_after_each(samples: list[Sample], eligible: list[str]) -> list[int]:
    seen: set[str] = set()
    out = []
    for sample in samples:
        seen |= set(sample.node_ids)
        out.append(len(seen & set(eligible)))
    return out


@pytest.mark.parametrize(
    ("strategy", "slack"), [("coverage_driven", 0), ("coverage_islands", 0), ("connected_diverse_coverage", 3)]
)
@pytest.mark.parametrize("graph", [ops, synthetic], ids=["operations", "synthetic"])
def test_covering_strategies_reach_every_eligible_chunk(
    strategy: Strategy, slack: int, graph: Callable[[], DocumentGraph]
) -> None:
    document = graph()
    eligible = eligible_nodes(document)
    bound = math.ceil(len(eligible) / 2) + slack
    samples, coverage = run(document, strategy, max_samples=bound)
    growth = covered_after_each(samples, eligible)
    assert growth == sorted(growth) and growth[-1] == len(eligible)
    assert coverage.stats(document).never_covered == []


def test_uniform_coverage_only_grows() -> None:
    samples, _ = run(synthetic(), "uniform", max_samples=20)
    growth = covered_after_each(samples, eligible_nodes(synthetic()))
    assert growth == sorted(growth) and growth[-1] < 61


def test_coverage_driven_batches_cover_disjoint_chunks_first() -> None:
    samples, _ = run(synthetic(), "coverage_driven", max_samples=10)
    chosen = [n for s in samples for n in s.node_ids]
    assert len(chosen) == len(set(chosen)) <= 61  # nothing sampled twice before everything was sampled


def test_coverage_record_and_stats() -> None:
    sample = Sample(id="s000", node_ids=["c01", "c03"], strategy="uniform", islands=[["c01"], ["c03"]])
    empty = Coverage()
    once = empty.record(sample)
    twice = once.record(sample.model_copy(update={"node_ids": ["c03", "c09"]}))
    assert empty.counts == {} and once.counts == {"c01": 1, "c03": 1}
    assert twice.counts == {"c01": 1, "c03": 2, "c09": 1}
    assert twice.stats(ops()) == CoverageStats(
        eligible=8,
        covered=3,
        fraction=0.375,
        min_count=0,
        mean_count=0.5,
        max_count=2,
        never_covered=["c02", "c04", "c05", "c07", "c08"],
    )


# --- sizes, islands and other invariants -------------------------------------------------------------------


def test_sizes_are_clamped_to_the_eligible_count() -> None:
    samples, coverage = draw_samples(ops(), SamplingSettings(min_nodes_per_sample=10, max_nodes_per_sample=12), count=3)
    assert [s.node_ids for s in samples] == [OPS_ELIGIBLE] * 3
    assert coverage.counts == dict.fromkeys(OPS_ELIGIBLE, 3)


@settings(max_examples=60, deadline=None)
@given(
    strategy=st.sampled_from(STRATEGIES),
    low=st.integers(1, 5),
    extra=st.integers(0, 4),
    seed=st.integers(0, 2**32),
    count=st.integers(1, 6),
    use_ops=st.booleans(),
)
def test_sample_invariants(strategy: Strategy, low: int, extra: int, seed: int, count: int, use_ops: bool) -> None:
    graph = ops() if use_ops else synthetic()
    config = SamplingSettings(strategy=strategy, min_nodes_per_sample=low, max_nodes_per_sample=low + extra, seed=seed)
    samples, coverage = draw_samples(graph, config, count=count)
    eligible = eligible_nodes(graph)
    adjacency = sampling_adjacency(graph)
    assert len(samples) == count
    for sample in samples:
        assert min(low, len(eligible)) <= len(sample.node_ids) <= min(low + extra, len(eligible))
        assert len(set(sample.node_ids)) == len(sample.node_ids) and set(sample.node_ids) <= set(eligible)
        assert sample.node_ids == sorted(sample.node_ids, key=graph.position)
        assert sorted(n for island in sample.islands for n in island) == sorted(sample.node_ids)
        for island in sample.islands:
            reached, todo = {island[0]}, [island[0]]
            while todo:
                for other in adjacency[todo.pop()]:
                    if other in island and other not in reached:
                        reached.add(other)
                        todo.append(other)
            assert reached == set(island)  # connected
        for one, two in itertools.combinations(sample.islands, 2):
            assert not any(b in adjacency[a] for a in one for b in two)  # maximal: components, not fragments
    assert sum(coverage.counts.values()) == sum(len(s.node_ids) for s in samples)


# --- bad input ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"min_nodes_per_sample": 5, "max_nodes_per_sample": 3}, "min_nodes_per_sample \\(5\\) is larger than"),
        ({"min_nodes_per_sample": 0}, "greater than or equal to 1"),
        ({"max_samples": 0}, "greater than or equal to 1"),
        ({"strategy": "random"}, "Input should be 'uniform', 'coverage_driven'"),
        ({"nodes_per_sample": 3}, "Extra inputs are not permitted"),
    ],
)
def test_bad_settings(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        SamplingSettings.model_validate(fields)


def test_bad_coverage() -> None:
    with pytest.raises(ValidationError, match="greater than or equal to 0"):
        Coverage(counts={"c01": -1})


def test_bad_draws() -> None:
    with pytest.raises(SamplingError, match="count must be 0 or more, got -1"):
        draw_samples(ops(), SamplingSettings(), count=-1)
    with pytest.raises(SamplingError, match="first_index must be 0 or more"):
        draw_samples(ops(), SamplingSettings(), first_index=-2)
    headings_only = chunk_document("# T\n\n## A\n\n## B\n", 100, "bare")
    with pytest.raises(SamplingError, match="'bare' has no chunk with text beyond its heading"):
        draw_samples(headings_only, SamplingSettings())
    assert draw_samples(ops(), SamplingSettings(), count=0) == ([], Coverage())
    assert draw_samples(ops(), SamplingSettings(max_samples=3), first_index=5)[0] == []  # the run is complete
