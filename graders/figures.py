"""Report figures (matplotlib, headless): Pass@k curves, failure-category bars, premature-write heatmap."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: reports are written to files

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from graders.analysis import CategoryCount

CATEGORY_ORDER = (
    "missing_required_call",
    "missing_anchor",
    "forbidden_call",
    "ordering_violation",
    "or_all_branches_failed",
)
CATEGORY_LABELS = {
    "missing_required_call": "Missing required call",
    "missing_anchor": "Missing anchor",
    "forbidden_call": "Forbidden call",
    "ordering_violation": "Ordering violation",
    "or_all_branches_failed": "OR: all branches failed",
}


def pass_at_k_curves(curves: Mapping[str, Sequence[float]]) -> Figure:
    """One line per label (model @ suite): Pass@k in % for k = 1, 2, ... (NaN points are left out)."""
    figure, axes = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
    for label, values in sorted(curves.items()):
        points = [(k, 100 * v) for k, v in enumerate(values, start=1) if not math.isnan(v)]
        if points:
            axes.plot(*zip(*points, strict=True), marker="o", label=label)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("k (attempts)")
    axes.set_ylabel("Pass@k (%)")
    axes.set_ylim(0, 100)
    axes.set_title("Pass@k by model")
    axes.grid(alpha=0.3)
    if axes.lines:
        axes.legend(fontsize="small", loc="lower right")
    return figure


def category_bars(counts: Sequence[CategoryCount]) -> Figure:
    """Stacked horizontal bars: share of failed checks per category, one bar per (model, suite)."""
    groups = sorted({(c.model, c.suite) for c in counts})
    figure, axes = plt.subplots(figsize=(7.2, 1.2 + 0.5 * max(len(groups), 1)), layout="constrained")
    left = [0.0] * len(groups)
    for category in CATEGORY_ORDER:
        shares = [
            100 * sum(c.share for c in counts if (c.model, c.suite) == group and c.category == category)
            for group in groups
        ]
        axes.barh([f"{m} @ {s}" for m, s in groups], shares, left=left, label=CATEGORY_LABELS[category])
        left = [a + b for a, b in zip(left, shares, strict=True)]
    axes.set_xlabel("share of failed checks (%)")
    axes.set_xlim(0, 100)
    axes.set_title("Failure categories")
    axes.invert_yaxis()
    axes.legend(fontsize="small", ncols=3, loc="upper center", bbox_to_anchor=(0.5, -0.25 if groups else 0))
    return figure


def premature_write_heatmap(rates: dict[tuple[str, str], float]) -> Figure:
    """Model x suite heatmap of the premature-write rate in % (blank where no data)."""
    models = sorted({m for m, _ in rates})
    suites = sorted({s for _, s in rates})
    grid = [[100 * rates.get((m, s), math.nan) for s in suites] for m in models]
    figure, axes = plt.subplots(
        figsize=(1.8 + 1.3 * max(len(suites), 1), 1.2 + 0.5 * max(len(models), 1)), layout="constrained"
    )
    image = axes.imshow(grid, cmap="Reds", vmin=0, vmax=100, aspect="auto")
    axes.set_xticks(range(len(suites)), suites)
    axes.set_yticks(range(len(models)), models)
    for row, model_rates in enumerate(grid):
        for col, value in enumerate(model_rates):
            if not math.isnan(value):
                axes.text(col, row, f"{value:.0f}%", ha="center", va="center", color="black")
    axes.set_title("Premature-write rate (write before any read)")
    figure.colorbar(image, ax=axes, label="% of attempts")
    return figure


def save(figure: Figure, folder: Path, name: str) -> dict[str, Path]:
    """Save as PNG and SVG; returns the paths by format."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {fmt: folder / f"{name}.{fmt}" for fmt in ("png", "svg")}
    for fmt, path in paths.items():
        figure.savefig(path, format=fmt, dpi=130)
    plt.close(figure)
    return paths
