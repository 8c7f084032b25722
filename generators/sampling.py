"""Coverage-driven sampling of document-graph nodes (paper App. "Graph sampling strategies").

A sample is a set of eligible chunks (:func:`eligible_nodes`: chunks with body text beyond their heading) whose
text (:meth:`DocumentGraph.text_of`) prompts scenario generation. :func:`draw_samples` draws samples one after
another, each followed by a coverage update (``Coverage.record``), so later samples favour what earlier ones
missed.

**Sample size.** ``k`` is drawn uniformly from ``[min_nodes_per_sample, max_nodes_per_sample]`` and clamped to
the number of eligible chunks.

**Sampling adjacency** (:func:`sampling_adjacency`), used to grow samples and to form islands: two eligible
chunks are adjacent when an edge (hierarchy or reference, either direction) joins them, when a path through
ineligible chunks other than the root joins them (a heading-only section such as ``## 4. Hardware`` joins its
subsections to each other and to its parent; the root is excluded because being in the same document is not
locality), or when they are consecutive parts of one section.

**Diversity.** The distance of a chunk from a set is the undirected shortest-path length over all edges of the
graph (every chunk, eligible or not) to the nearest chunk of the set; infinite when the set is empty or
unreachable. A *diverse seed* among candidates is chosen as: lowest coverage count first; then, among those
with that count ``t``, the one farthest from the *crowded set* (eligible chunks counted more than ``t`` times,
plus the chunks already in the sample); remaining ties at random. In a first pass (``t = 0``) the crowded set is
simply what was sampled before.

**Strategies.**

- ``uniform``: ``k`` eligible chunks uniformly at random; coverage is ignored.
- ``coverage_driven``: eligible chunks ordered by coverage count, ties at random; the first ``k``.
- ``connected_diverse_coverage``: a diverse seed, then repeatedly the least-covered chunk adjacent to the
  sample (ties at random); when no unchosen chunk is adjacent, a new diverse seed.
- ``coverage_islands``: a diverse seed; then at each step let ``f`` be the least-covered chunk adjacent to the
  sample and ``d`` the least count among unchosen chunks not adjacent to it. Grow locally with ``f`` unless
  there is no ``f`` or ``count(f) > d`` (a fresh island would cover something less covered); then start a new
  island with a diverse seed among the non-adjacent chunks. Every step thus takes a least-covered chunk, so
  coverage grows as fast as with ``coverage_driven`` while samples stay in coherent clusters.

``Sample.islands`` are the connected components of the sample under the sampling adjacency, for every strategy.

**Determinism.** Each sample has its own ``random.Random`` seeded with the settings' seed and strategy, the
sample's index and a hash of the coverage before it. Samples therefore depend only on (graph, settings,
coverage, index): drawing 12 at once or 6 and then 6 more from the returned coverage with ``first_index=6``
gives the same samples.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import random
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mantra_env.errors import MantraError
from mantra_env.generators.document import DocumentGraph, heading_length

__all__ = [
    "Coverage",
    "CoverageStats",
    "Sample",
    "SamplingError",
    "SamplingSettings",
    "Strategy",
    "draw_samples",
    "eligible_nodes",
    "sampling_adjacency",
]

Strategy = Literal["uniform", "coverage_driven", "connected_diverse_coverage", "coverage_islands"]


class SamplingError(MantraError, ValueError):
    """Samples cannot be drawn (no eligible chunk, negative count or index)."""


class Sample(BaseModel):
    """One sample: chunk ids in document order, the strategy that drew it and its connected islands."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^s\d{3,}$")
    node_ids: list[str] = Field(min_length=1)
    strategy: Strategy
    islands: list[list[str]]


class CoverageStats(BaseModel):
    """Coverage of the eligible chunks of a graph."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    eligible: int
    covered: int
    fraction: float
    min_count: int
    mean_count: float
    max_count: int
    never_covered: list[str]


class Coverage(BaseModel):
    """How many times each chunk has been sampled (absent: never)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    counts: dict[str, Annotated[int, Field(ge=0)]] = Field(default_factory=dict)

    def count(self, node_id: str) -> int:
        """Times ``node_id`` was sampled."""
        return self.counts.get(node_id, 0)

    def record(self, sample: Sample) -> Coverage:
        """A copy with every chunk of ``sample`` counted once more (keys kept sorted for stable JSON)."""
        counts = dict(self.counts)
        for node_id in sample.node_ids:
            counts[node_id] = counts.get(node_id, 0) + 1
        return Coverage(counts=dict(sorted(counts.items())))

    def stats(self, graph: DocumentGraph) -> CoverageStats:
        """Covered count and fraction, min/mean/max count and never-covered ids, over the eligible chunks."""
        eligible = eligible_nodes(graph)
        counts = [self.count(n) for n in eligible]
        covered = sum(1 for c in counts if c > 0)
        return CoverageStats(
            eligible=len(eligible),
            covered=covered,
            fraction=covered / len(eligible) if eligible else 0.0,
            min_count=min(counts, default=0),
            mean_count=sum(counts) / len(counts) if counts else 0.0,
            max_count=max(counts, default=0),
            never_covered=[n for n, c in zip(eligible, counts, strict=True) if c == 0],
        )

    def fingerprint(self) -> str:
        """A hash of the positive counts: what a sample's random stream depends on."""
        positive = sorted((k, v) for k, v in self.counts.items() if v > 0)
        return hashlib.sha256(json.dumps(positive).encode()).hexdigest()[:16]


class SamplingSettings(BaseModel):
    """The paper's ``sampling`` configuration block."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    strategy: Strategy = "coverage_islands"
    min_nodes_per_sample: int = Field(default=2, ge=1)
    max_nodes_per_sample: int = Field(default=4, ge=1)
    max_samples: int = Field(default=12, ge=1)
    seed: int = 42

    @model_validator(mode="after")
    def _ordered(self) -> SamplingSettings:
        if self.min_nodes_per_sample > self.max_nodes_per_sample:
            raise ValueError(
                f"min_nodes_per_sample ({self.min_nodes_per_sample}) is larger than "
                f"max_nodes_per_sample ({self.max_nodes_per_sample})"
            )
        return self


def eligible_nodes(graph: DocumentGraph) -> list[str]:
    """Chunks with body text beyond their heading, in document order (a heading alone is no scenario)."""
    return [c.id for c in graph.nodes if c.text[heading_length(c) :].strip()]


def sampling_adjacency(graph: DocumentGraph) -> dict[str, list[str]]:
    """Adjacency between eligible chunks used to grow samples (see the module docstring), in document order."""
    eligible = set(eligible_nodes(graph))
    root = graph.nodes[0].id
    adjacent: dict[str, set[str]] = {n: set() for n in eligible}
    for start in eligible:
        seen, todo = {start}, [start]
        while todo:
            for other in graph.neighbours(todo.pop()):
                if other in seen:
                    continue
                seen.add(other)
                if other in eligible:
                    adjacent[start].add(other)
                elif other != root:
                    todo.append(other)  # heading-only section: a bridge, not a member
    for previous, chunk in itertools.pairwise(graph.nodes):
        if chunk.part is not None and chunk.part > 1 and {previous.id, chunk.id} <= eligible:
            adjacent[previous.id].add(chunk.id)
            adjacent[chunk.id].add(previous.id)
    return {n: sorted(adjacent[n], key=graph.position) for n in sorted(eligible, key=graph.position)}


def _components(nodes: list[str], adjacency: dict[str, list[str]]) -> list[list[str]]:
    """Connected components of ``nodes`` (in their order) under ``adjacency``."""
    members, seen, out = set(nodes), set[str](), []
    for node in nodes:
        if node in seen:
            continue
        seen.add(node)
        group, todo = [node], [node]
        while todo:
            for other in adjacency[todo.pop()]:
                if other in members and other not in seen:
                    seen.add(other)
                    group.append(other)
                    todo.append(other)
        out.append(sorted(group, key=nodes.index))
    return out


def _distances(graph: DocumentGraph, sources: Iterable[str]) -> dict[str, int]:
    """Undirected shortest-path length from the nearest source to every reachable chunk."""
    distance = {s: 0 for s in sources}
    queue = deque(distance)
    while queue:
        node = queue.popleft()
        for other in graph.neighbours(node):
            if other not in distance:
                distance[other] = distance[node] + 1
                queue.append(other)
    return distance


@dataclass
class _Draw:
    """What one sample's choices see: the graph, coverage, and this sample's random tie-breakers."""

    graph: DocumentGraph
    eligible: list[str]
    adjacency: dict[str, list[str]]
    coverage: Coverage
    jitter: dict[str, float]

    def least(self, candidates: Iterable[str]) -> str:
        return min(candidates, key=lambda n: (self.coverage.count(n), self.jitter[n]))

    def frontier(self, chosen: list[str]) -> set[str]:
        return {other for node in chosen for other in self.adjacency[node]} - set(chosen)

    def diverse_seed(self, chosen: list[str], candidates: Iterable[str]) -> str:
        pool = list(candidates)
        tier = min(self.coverage.count(n) for n in pool)
        crowded = [n for n in self.eligible if self.coverage.count(n) > tier] + chosen
        distance = _distances(self.graph, crowded)
        tied = [n for n in pool if self.coverage.count(n) == tier]
        return min(tied, key=lambda n: (-distance.get(n, math.inf), self.jitter[n]))


def _uniform(draw: _Draw, k: int, rng: random.Random) -> list[str]:
    return rng.sample(draw.eligible, k)


def _coverage_driven(draw: _Draw, k: int, rng: random.Random) -> list[str]:
    return sorted(draw.eligible, key=lambda n: (draw.coverage.count(n), draw.jitter[n]))[:k]


def _connected_diverse(draw: _Draw, k: int, rng: random.Random) -> list[str]:
    chosen = [draw.diverse_seed([], draw.eligible)]
    while len(chosen) < k:
        frontier = draw.frontier(chosen)
        rest = [n for n in draw.eligible if n not in chosen]
        chosen.append(draw.least(frontier) if frontier else draw.diverse_seed(chosen, rest))
    return chosen


def _islands(draw: _Draw, k: int, rng: random.Random) -> list[str]:
    chosen = [draw.diverse_seed([], draw.eligible)]
    while len(chosen) < k:
        frontier = draw.frontier(chosen)
        detached = [n for n in draw.eligible if n not in chosen and n not in frontier]
        local = draw.least(frontier) if frontier else None
        fresh = min((draw.coverage.count(n) for n in detached), default=None)
        if local is not None and (fresh is None or draw.coverage.count(local) <= fresh):
            chosen.append(local)
        else:
            chosen.append(draw.diverse_seed(chosen, detached))
    return chosen


_STRATEGIES: dict[str, Callable[[_Draw, int, random.Random], list[str]]] = {
    "uniform": _uniform,
    "coverage_driven": _coverage_driven,
    "connected_diverse_coverage": _connected_diverse,
    "coverage_islands": _islands,
}


def _draw_one(
    graph: DocumentGraph,
    settings: SamplingSettings,
    eligible: list[str],
    adjacency: dict[str, list[str]],
    coverage: Coverage,
    index: int,
) -> Sample:
    rng = random.Random(f"{settings.seed}:{settings.strategy}:{index}:{coverage.fingerprint()}")
    k = min(rng.randint(settings.min_nodes_per_sample, settings.max_nodes_per_sample), len(eligible))
    jitter = {n: rng.random() for n in eligible}
    chosen = _STRATEGIES[settings.strategy](_Draw(graph, eligible, adjacency, coverage, jitter), k, rng)
    nodes = sorted(chosen, key=graph.position)
    return Sample(id=f"s{index:03d}", node_ids=nodes, strategy=settings.strategy, islands=_components(nodes, adjacency))


def draw_samples(
    graph: DocumentGraph,
    settings: SamplingSettings,
    coverage: Coverage | None = None,
    count: int | None = None,
    first_index: int = 0,
) -> tuple[list[Sample], Coverage]:
    """Draw samples one after another, recording each in the coverage before drawing the next.

    Args:
        graph: the document graph.
        settings: strategy, sample sizes, ``max_samples`` and seed.
        coverage: the coverage so far (none: nothing sampled yet).
        count: how many samples; default the rest of the run, ``max_samples - first_index`` (at least 0).
        first_index: the index of the first sample (its id is ``s{first_index:03d}``); pass the number of samples
            drawn so far to continue a run.

    Returns:
        The samples and the coverage after the last of them; pass both ``coverage`` and the next index on to
        continue exactly where this call stopped.

    Raises:
        SamplingError: the graph has no eligible chunk, or ``count`` or ``first_index`` is negative.
    """
    if first_index < 0:
        raise SamplingError(f"first_index must be 0 or more, got {first_index}")
    count = max(settings.max_samples - first_index, 0) if count is None else count
    if count < 0:
        raise SamplingError(f"count must be 0 or more, got {count}")
    eligible = eligible_nodes(graph)
    if not eligible:
        raise SamplingError(f"document graph {graph.name!r} has no chunk with text beyond its heading to sample")
    adjacency = sampling_adjacency(graph)
    coverage = coverage if coverage is not None else Coverage()
    samples: list[Sample] = []
    for index in range(first_index, first_index + count):
        sample = _draw_one(graph, settings, eligible, adjacency, coverage, index)
        samples.append(sample)
        coverage = coverage.record(sample)
    return samples, coverage
