"""Draw a document graph (matplotlib, headless): a layered tree with reference arcs and optional coverage.

Layout: the root at the top, one row per depth. Leaves take consecutive slots in document order and every
parent is centred over its children, so two chunks of one row are at least one slot apart; the figure is one
slot (1.05 in) wider per leaf, which keeps labels (id, then the title wrapped to two lines of 16 characters)
from overlapping at any size. Hierarchy edges are solid grey lines, reference edges dashed orange arcs with
arrows. With a coverage, chunks are coloured by how often they were sampled; heading-only chunks (never
sampled) have a white, dashed box.
"""

from __future__ import annotations

import math
import re
import textwrap
from pathlib import Path

from matplotlib import colormaps
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize, to_rgb
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Patch
from matplotlib.text import Text
from matplotlib.ticker import MaxNLocator

from mantra_env.generators.document import Chunk, DocumentGraph
from mantra_env.generators.sampling import Coverage, eligible_nodes

__all__ = ["plot_graph"]

SLOT = 1.05  # inches per leaf slot: two 16-character lines at 7 pt fit with a margin
ROW = 1.0  # inches per depth level
MARGIN = 0.6  # inches left and right of the tree
TOP = 0.9  # inches above the tree for the title and the legend
BOTTOM = 0.5
BULGE = 0.35  # inches a reference arc bulges out of the straight line
BOX_HALF_HEIGHT = 0.21  # inches: half a three-line 7 pt label box
COLOURBAR = 1.1  # inches to the right for the colour bar
HIERARCHY_COLOUR = "#8c8c8c"
REFERENCE_COLOUR = "#e07b00"
PLAIN_FILL = "#dbe9f6"
COVERAGE_MAP = "YlGnBu"


def _label(chunk: Chunk) -> str:
    """``c07`` (and ``part 2/3``) over the title wrapped to two short lines, cut with an ellipsis."""
    title = re.sub(r" \(part \d+/\d+\)$", "", chunk.title)
    head = chunk.id if chunk.part is None else f"{chunk.id} · part {chunk.part}"
    lines = textwrap.wrap(title, 16) or [""]
    if len(lines) > 2:
        lines = [lines[0], textwrap.shorten(lines[1] + " " + " ".join(lines[2:]), 16, placeholder="…")]
        if len(lines[1]) > 16 or lines[1] == "…":
            lines[1] = lines[1][:15] + "…"
    return "\n".join([head, *lines])


def _layout(graph: DocumentGraph) -> dict[str, tuple[float, int]]:
    """(slot, depth) of every chunk: leaves in document order, parents centred over their children."""
    place: dict[str, tuple[float, int]] = {}
    next_slot = 0

    def visit(node_id: str, depth: int) -> float:
        nonlocal next_slot
        children = graph.node(node_id).children
        if children:
            xs = [visit(child, depth + 1) for child in children]
            x = (xs[0] + xs[-1]) / 2
        else:
            x, next_slot = float(next_slot), next_slot + 1
        place[node_id] = (x, depth)
        return x

    for chunk in graph.nodes:
        if chunk.parent is None:
            visit(chunk.id, 0)
    return place


def _text_colour(fill: str | tuple[float, float, float, float]) -> str:
    red, green, blue = to_rgb(fill)
    return "black" if 0.299 * red + 0.587 * green + 0.114 * blue > 0.5 else "white"


def plot_graph(graph: DocumentGraph, out: Path, coverage: Coverage | None = None) -> list[Path]:
    """Plot the graph to ``<out>.png`` and ``<out>.svg`` (a ``.png``/``.svg`` suffix on ``out`` is dropped).

    Args:
        graph: the document graph.
        out: the output path without suffix; its folder is created.
        coverage: colour chunks by how often they were sampled (with a "times sampled" colour bar).

    Returns:
        The PNG and SVG paths.
    """
    place = _layout(graph)
    slots = max(x for x, _ in place.values()) + 1
    depth = max(d for _, d in place.values()) + 1
    right = COLOURBAR if coverage is not None else 0.0
    width, height = max(slots * SLOT + 2 * MARGIN + right, 6.5), depth * ROW + TOP + BOTTOM
    figure = Figure(figsize=(width, height))
    tree_width = width - 2 * MARGIN - right
    axes = figure.add_axes((MARGIN / width, BOTTOM / height, tree_width / width, depth * ROW / height))
    axes.set_xlim(-0.5, max(slots, tree_width / SLOT) - 0.5)
    axes.set_ylim(depth - 0.5, -0.5)
    axes.set_axis_off()

    for edge in graph.edges:
        if edge.kind == "hierarchy":
            (x0, y0), (x1, y1) = place[edge.source], place[edge.target]
            axes.plot([x0, x1], [y0, y1], color=HIERARCHY_COLOUR, linewidth=1.0, zorder=1)
    counts = {c.id: coverage.count(c.id) for c in graph.nodes} if coverage is not None else None
    norm = Normalize(vmin=0, vmax=max([1, *(counts or {}).values()]))
    eligible = set(eligible_nodes(graph))
    boxes = {c.id: _box(axes, c, place[c.id], c.id in eligible, counts, norm) for c in graph.nodes}
    for edge in graph.edges:
        if edge.kind == "reference":
            axes.add_patch(_arrow(place, boxes, edge.source, edge.target))

    figure.text(0.5 * MARGIN / width, 1 - 0.3 / height, _title(graph), fontsize=10, va="center")
    figure.legend(
        handles=_legend(),
        loc="center left",
        bbox_to_anchor=(0.5 * MARGIN / width, 1 - 0.65 / height),
        ncols=3,
        fontsize=8,
        frameon=False,
    )
    if counts is not None:
        bar = figure.add_axes(
            ((width - 0.8) / width, (BOTTOM + 0.1) / height, 0.15 / width, 0.8 * depth * ROW / height)
        )
        figure.colorbar(ScalarMappable(norm=norm, cmap=colormaps[COVERAGE_MAP]), cax=bar, label="times sampled")
        bar.yaxis.set_major_locator(MaxNLocator(integer=True))
    return _save(figure, out)


def _legend() -> list[Artist]:
    """Fresh proxy artists (an artist belongs to one figure)."""
    return [
        Line2D([], [], color=HIERARCHY_COLOUR, linewidth=1.0, label="hierarchy (parent to child)"),
        Line2D([], [], color=REFERENCE_COLOUR, linewidth=1.1, linestyle="--", label="reference"),
        Patch(facecolor="white", edgecolor=HIERARCHY_COLOUR, linestyle="--", label="heading only (never sampled)"),
    ]


def _box(
    axes: Axes,
    chunk: Chunk,
    at: tuple[float, int],
    eligible: bool,
    counts: dict[str, int] | None,
    norm: Normalize,
) -> Text:
    """The chunk's labelled box, filled by coverage count (white and dashed for a heading-only chunk)."""
    fill: str | tuple[float, float, float, float] = PLAIN_FILL
    style, edge = "-", "#4d4d4d"
    if not eligible:
        fill, style, edge = "white", "--", HIERARCHY_COLOUR
    elif counts is not None:
        fill = colormaps[COVERAGE_MAP](norm(counts[chunk.id]))
    return axes.text(
        *at,
        _label(chunk),
        ha="center",
        va="center",
        fontsize=7,
        color=_text_colour(fill),
        zorder=3,
        bbox={"boxstyle": "round,pad=0.3", "fc": fill, "ec": edge, "ls": style, "lw": 0.8},
    )


def _arrow(place: dict[str, tuple[float, int]], boxes: dict[str, Text], source: str, target: str) -> FancyArrowPatch:
    """A dashed arc from box to box, drawn above the boxes and clipped at their edges so the head shows.

    The arc bulges about ``BULGE`` inches upwards on screen whatever the distance (a fixed curvature would send
    arcs between far-apart chunks of one row metres below the tree).
    """
    (x0, y0), (x1, y1) = place[source], place[target]
    dx, dy = (x1 - x0) * SLOT, (y0 - y1) * ROW  # inches on screen; depth grows downwards
    bend = min(0.5, 2 * BULGE / math.hypot(dx, dy))
    start: tuple[float, float] = (x0, y0)
    end: tuple[float, float] = (x1, y1)
    patches: tuple[Patch | None, Patch | None] = (boxes[source].get_bbox_patch(), boxes[target].get_bbox_patch())
    if y0 == y1:
        # Within a row: from box top to box top, so the arc runs in the gap above the row, not through its boxes.
        start, end = (x0, y0 - BOX_HALF_HEIGHT / ROW), (x1, y1 - BOX_HALF_HEIGHT / ROW)
        patches = (None, None)
    return FancyArrowPatch(
        start,
        end,
        connectionstyle=f"arc3,rad={-bend if dx > 0 else bend:.4f}",
        patchA=patches[0],
        patchB=patches[1],
        shrinkA=0 if y0 == y1 else 2,
        shrinkB=0 if y0 == y1 else 2,
        arrowstyle="-|>",
        mutation_scale=11,
        linestyle="--",
        linewidth=1.1,
        color=REFERENCE_COLOUR,
        zorder=4,
        clip_on=False,
    )


def _title(graph: DocumentGraph) -> str:
    references = sum(1 for e in graph.edges if e.kind == "reference")
    return (
        f"{graph.name}: {len(graph.nodes)} chunks, {references} reference edges (max {graph.max_chunk_tokens} tokens)"
    )


def _save(figure: Figure, out: Path) -> list[Path]:
    stem = out.with_suffix("") if out.suffix in (".png", ".svg") else out
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.parent / f"{stem.name}.png", stem.parent / f"{stem.name}.svg"]
    figure.savefig(paths[0], format="png", dpi=130)
    figure.savefig(paths[1], format="svg")
    return paths
