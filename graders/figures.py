"""Report figures (matplotlib): Pass@k and Pass^k curves, failure-category bars, premature-write heatmap, and the
validation funnel and validated-by-round curves of generated suites.

Importing this module leaves the backend alone, so a notebook shows its figures inline; the report CLI chooses the
headless Agg backend itself (:func:`mantra_env.graders.report.main`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from mantra_env.graders.analysis import CategoryCount
from mantra_env.graders.generation import ROUNDS, STAGE_LABELS, STAGES

CATEGORY_ORDER = (
    "missing_required_call",
    "missing_anchor",
    "forbidden_call",
    "ordering_violation",
    "or_all_branches_failed",
    "missing_answer_fact",
    "unrequested_write",
)
CATEGORY_LABELS = {
    "missing_required_call": "Missing required call",
    "missing_anchor": "Missing anchor",
    "forbidden_call": "Forbidden call",
    "ordering_violation": "Ordering violation",
    "or_all_branches_failed": "OR: all branches failed",
    "missing_answer_fact": "Missing answer fact",
    "unrequested_write": "Unrequested write",
}

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINESTYLES = ("-", "--", "-.", ":")


def pass_at_k_curves(
    curves: Mapping[str, Mapping[str, Sequence[float]]], domains: Mapping[str, str] | None = None
) -> Figure:
    """One row of panels per metric (``{"Pass@k": {label: values}, "Pass^k": ...}``) and one column per domain
    (``domains``: label → domain; without it one column), one line per label (model @ suite) in its domain's
    panel: the metric in % for k = 1, 2, ... (NaN points are left out). Faceting by domain keeps each panel to the
    few models of one domain instead of every model and suite on top of each other.

    Models with equal curves (scripted baselines all at 0 %) would hide each other, so every line gets its own
    hollow marker, shrinking from the first line to the last, and its own dash pattern; each panel's legend sits
    below it so it never covers a curve.
    """
    labels = sorted({label for lines in curves.values() for label in lines})
    of = {label: (domains or {}).get(label, "") for label in labels}
    facets = sorted(set(of.values())) or [""]
    figure, panels = plt.subplots(
        len(curves) or 1,
        len(facets),
        figsize=(max(5.2 * len(facets), 6.4), 5.2 * max(len(curves), 1)),
        layout="constrained",
        squeeze=False,
    )
    for row, (metric, lines) in enumerate(curves.items()):
        for column, domain in enumerate(facets):
            axes = panels[row][column]
            chosen = sorted((label, values) for label, values in lines.items() if of[label] == domain)
            for position, (label, values) in enumerate(chosen):
                points = [(k, 100 * v) for k, v in enumerate(values, start=1) if not math.isnan(v)]
                if points:
                    axes.plot(*zip(*points, strict=True), label=label, marker=MARKERS[position % len(MARKERS)],
                              markersize=max(4.0, 11.0 - 2.0 * position), markerfacecolor="none",
                              markeredgewidth=1.5, linestyle=LINESTYLES[position % len(LINESTYLES)],
                              clip_on=False)  # fmt: skip
            axes.xaxis.set_major_locator(MaxNLocator(integer=True))
            axes.set_xlabel("k (attempts)")
            axes.set_ylabel(f"{metric} (%)")
            axes.set_ylim(-2, 102)  # lines at 0 % and 100 % stay visible
            axes.set_yticks(range(0, 101, 20))
            kind = " (all k attempts pass)" if metric == "Pass^k" else " (any of k)"
            axes.set_title((f"{domain}: " if domain else "") + metric + kind, fontsize="medium")
            axes.grid(alpha=0.3)
            if axes.lines:
                axes.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.16), ncols=1)
    return figure


def category_bars(counts: Sequence[CategoryCount]) -> Figure:
    """Stacked horizontal bars: share of failures (failed checks and unrequested writes) per category, one bar per
    (model, suite) with failures; segments of at least 8 % are labelled with their share."""
    groups = sorted({(c.model, c.suite) for c in counts})
    figure, axes = plt.subplots(figsize=(7.2, 1.9 + 0.5 * max(len(groups), 1)), layout="constrained")
    left = [0.0] * len(groups)
    for category in CATEGORY_ORDER:
        shares = [
            100 * sum(c.share for c in counts if (c.model, c.suite) == group and c.category == category)
            for group in groups
        ]
        bars = axes.barh([f"{m} @ {s}" for m, s in groups], shares, left=left, label=CATEGORY_LABELS[category])
        axes.bar_label(bars, labels=[f"{v:.0f}%" if v >= 8 else "" for v in shares], label_type="center",
                       color="white", fontsize="small")  # fmt: skip
        left = [a + b for a, b in zip(left, shares, strict=True)]
    axes.set_xlabel("share of failures: failed checks and unrequested writes (%)")
    axes.set_xlim(0, 100)
    axes.set_title("Failure categories (models without a failure are not shown)", fontsize="medium")
    axes.invert_yaxis()
    figure.legend(fontsize="small", ncols=3, loc="outside lower center")
    return figure


def premature_write_heatmap(rates: dict[tuple[str, str], float]) -> Figure:
    """Model x suite heatmap of the premature-write rate in % of scored attempts (blank where no data)."""
    models = sorted({m for m, _ in rates})
    suites = sorted({s for _, s in rates})
    grid = [[100 * rates.get((m, s), math.nan) for s in suites] for m in models]
    figure, axes = plt.subplots(
        figsize=(max(5.6, 3.4 + 1.6 * len(suites)), 1.6 + 0.5 * max(len(models), 1)), layout="constrained"
    )
    image = axes.imshow(grid, cmap="Reds", vmin=0, vmax=100, aspect="auto")
    axes.set_xticks(
        range(len(suites)), suites, rotation=20 if len(suites) > 3 else 0, ha="right" if len(suites) > 3 else "center"
    )
    axes.set_yticks(range(len(models)), models)
    for row, model_rates in enumerate(grid):
        for col, value in enumerate(model_rates):
            if not math.isnan(value):
                colour = "white" if value > 55 else "black"  # legible on the dark end of the scale
                axes.text(col, row, f"{value:.0f}%", ha="center", va="center", color=colour)
    axes.set_xlabel("suite")
    axes.set_title("Premature-write rate\n(a write call before any read call)", fontsize="medium")
    figure.colorbar(image, ax=axes, label="% of scored attempts")
    return figure


def validation_funnel(funnels: Mapping[str, Sequence[int | None]]) -> Figure:
    """Grouped bars per suite (label ``domain / suite``): cases left after each generation stage, counted on the
    bars; ``None`` (a stage the manifest omits) leaves a gap."""
    labels = list(funnels)
    stages = len(STAGES)
    width = 0.8 / stages
    figure, axes = plt.subplots(figsize=(max(6.4, 1.2 + 1.9 * len(labels)), 4.4), layout="constrained")
    colours = plt.get_cmap("Blues")([0.9 - 0.55 * i / (stages - 1) for i in range(stages)])
    for position, stage in enumerate(STAGES):
        xs = [i + (position - (stages - 1) / 2) * width for i in range(len(labels))]
        counts = [funnels[label][position] for label in labels]
        bars = axes.bar(xs, [0 if n is None else n for n in counts], width, label=STAGE_LABELS[stage],
                        color=colours[position], edgecolor="#333", linewidth=0.5)  # fmt: skip
        axes.bar_label(bars, labels=["" if n is None else str(n) for n in counts], padding=2, fontsize="small")
    ticks = []
    for label in labels:
        generated, final = funnels[label][0], funnels[label][-1]
        share = f"\nfinal = {100 * final / generated:.0f}% of generated" if generated and final is not None else ""
        ticks.append(label + share)
    axes.set_xticks(range(len(labels)), ticks)
    highest = max((n for counts in funnels.values() for n in counts if n is not None), default=0)
    axes.set_ylim(0, max(1, highest) * 1.15)
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_ylabel("test cases (count)")
    axes.set_xlabel("domain / suite")
    axes.set_title("Validation funnel: generated cases kept by each stage")
    axes.grid(axis="y", alpha=0.3)
    figure.legend(fontsize="small", ncols=stages, loc="outside lower center")
    return figure


def validated_by_round(rounds: Mapping[str, Sequence[int]], generated: Mapping[str, int | None]) -> Figure:
    """Cumulative validated cases by round R1..R5 per suite (label ``domain / suite``): absolute counts on the
    left, fraction of generated cases on the right (left out where the generated count is unknown)."""
    figure, (counts, shares) = plt.subplots(1, 2, figsize=(10.4, 4.4), layout="constrained")
    xs = list(range(1, ROUNDS + 1))
    for position, (label, values) in enumerate(sorted(rounds.items())):
        style = {"marker": MARKERS[position % len(MARKERS)], "linestyle": LINESTYLES[position % len(LINESTYLES)]}
        n = generated.get(label)
        counts.plot(xs, values, label=f"{label} (n = {n if n is not None else '?'})", **style)
        if n:
            shares.plot(xs, [100 * v / n for v in values], **style)
    for axes in (counts, shares):
        axes.set_xticks(xs, [f"R{x}" for x in xs])
        axes.set_xlabel("validation round")
        axes.grid(alpha=0.3)
    counts.yaxis.set_major_locator(MaxNLocator(integer=True))
    counts.set_ylim(bottom=0)
    counts.set_ylabel("validated cases (cumulative count)")
    counts.set_title("Validated by round")
    shares.set_ylim(0, 100)
    shares.set_ylabel("% of generated cases")
    shares.set_title("Validated by round, fraction of generated")
    figure.legend(fontsize="small", loc="outside lower center", ncols=min(3, max(1, len(rounds))))
    return figure


def save(figure: Figure, folder: Path, name: str) -> dict[str, Path]:
    """Save as PNG and SVG; returns the paths by format."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {fmt: folder / f"{name}.{fmt}" for fmt in ("png", "svg")}
    for fmt, path in paths.items():
        figure.savefig(path, format=fmt, dpi=130)
    plt.close(figure)
    return paths
