"""``python -m graders.report --db results/mantra.duckdb [--run RUN ...] [--k 5] [--suite PATH ...] --out DIR``

Writes ``report.md`` and a self-contained ``report.html`` (tables, figures embedded as PNG), and every figure
as PNG and SVG under ``figures/``. Every score comes from the stored rows (:mod:`graders.analysis`).

When a suite's ``manifest.json`` holds generation records (``stage_counts`` with ``generated``,
``forward_validated``, ``backward_validated`` and ``final``, and where the others went: ``awaiting_human``,
``rejected``, ``replay_failed``), the report adds a validation funnel per domain and suite. The suites are those
the runs name in their stored config (the ``--suite`` the run was given) and those passed with ``--suite`` (a
suite folder, a ``manifest.json`` or a suite name); a run's suite that can no longer be found is left out with a
note. Hand-written suites (``written``/``validated``/``final``) have no funnel.
"""

from __future__ import annotations

import base64
import html
import json
import math
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from graders import figures
from graders.analysis import CategoryCount, RunSummary, failure_categories, summarize_run, top_tools_per_category
from graders.metrics import Estimate, PairedComparison, compare_paired, pass_at_k
from mantra_env.case import SuiteManifest
from mantra_env.cli import command_parser, run_command
from mantra_env.domains import domain_names, find_suite
from mantra_env.errors import MantraError
from mantra_env.store import RolloutStore


@dataclass(frozen=True)
class FunnelRow:
    """The generation records of one suite: cases left after each stage (None: the manifest omits the stage)."""

    domain: str
    suite: str
    counts: tuple[int | None, ...]  # in figures.GENERATION_STAGES order
    outcomes: tuple[int | None, ...] = ()  # in figures.GENERATION_OUTCOMES order

    @property
    def final_share(self) -> float:
        """Final cases as a fraction of generated ones (NaN when either is missing or nothing was generated)."""
        generated, final = self.counts[0], self.counts[-1]
        return final / generated if generated and final is not None else math.nan


@dataclass(frozen=True)
class Report:
    summaries: list[RunSummary]
    categories: list[CategoryCount]
    top_tools: list[tuple[str, str, str, int]]
    comparisons: list[tuple[str, str, str, PairedComparison]]
    curves: dict[str, list[float]]
    funnel: list[FunnelRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _pct(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{100 * value:.1f}"


def _count(value: int | None) -> str:
    return "n/a" if value is None else str(value)


def _ci(estimate: Estimate) -> str:
    if math.isnan(estimate.value):
        return "n/a"
    return f"{100 * estimate.value:.1f} ± {100 * estimate.half_width:.1f}"


def read_manifest(argument: str) -> SuiteManifest:
    """The manifest of a suite given as a ``manifest.json`` file, a suite folder, or a suite name.

    Folders and files are read without loading their cases; names are resolved with
    :func:`mantra_env.domains.find_suite`. Raises :class:`MantraError` when the suite cannot be found or read.
    """
    path = Path(argument)
    manifest_path = path / "manifest.json" if path.is_dir() else path
    if manifest_path.is_file():
        try:
            return SuiteManifest.model_validate_json(manifest_path.read_text(encoding="utf-8"))
        except (OSError, ValidationError) as exc:
            raise MantraError(f"{manifest_path}: not a readable suite manifest: {exc}") from None
    if path.is_dir():
        raise MantraError(f"{path} is a folder without a manifest.json, not a suite")
    if argument.partition("/")[0] not in domain_names():
        raise MantraError(f"{argument} is not a suite folder, a manifest.json or a shipped suite name")
    return find_suite(argument)[1].manifest


def funnel_row(manifest: SuiteManifest) -> FunnelRow | None:
    """The manifest's generation funnel, or None for a suite without generation records (hand-written)."""
    if figures.GENERATION_STAGES[0] not in manifest.stage_counts:
        return None
    suite = manifest.name if manifest.version == 0 else f"{manifest.name} v{manifest.version}"
    counts = manifest.stage_counts
    return FunnelRow(
        manifest.domain,
        suite,
        tuple(counts.get(stage) for stage in figures.GENERATION_STAGES),
        tuple(counts.get(outcome) for outcome in figures.GENERATION_OUTCOMES),
    )


def _run_suite_arguments(store: RolloutStore, runs: list[str]) -> list[tuple[str, str]]:
    """(run id, suite as the run was given it): the stored config's ``suite``, else the run's ``domain/suite``."""
    rows = store.query("SELECT run_id, suite, config FROM runs WHERE run_id IN (SELECT unnest(?))", [runs])
    order = {run: position for position, run in enumerate(runs)}
    found = []
    for run_id, suite, config in sorted(rows, key=lambda row: order[str(row[0])]):
        try:
            given = json.loads(config).get("suite") if config else None
        except (json.JSONDecodeError, AttributeError):
            given = None
        found.append((str(run_id), given if isinstance(given, str) and given else str(suite)))
    return found


def validation_funnel(
    store: RolloutStore, runs: list[str], suites: Sequence[str] = ()
) -> tuple[list[FunnelRow], list[str]]:
    """Funnel rows of the runs' suites and of ``suites``, with a note per run suite that cannot be found.

    An explicit suite that cannot be read is an error; a run's suite that is gone is only a note.
    """
    runs_by_suite: dict[str, list[str]] = {}
    for run_id, argument in _run_suite_arguments(store, runs):
        runs_by_suite.setdefault(argument, []).append(run_id)
    manifests: list[SuiteManifest] = []
    notes: list[str] = []
    for argument, run_ids in runs_by_suite.items():
        try:
            manifests.append(read_manifest(argument))
        except (MantraError, OSError, ValueError) as exc:
            notes.append(f"Run(s) {', '.join(run_ids)}: suite not found, so no validation funnel for it ({exc}).")
    manifests += [read_manifest(argument) for argument in suites]
    rows: dict[tuple[str, str, tuple[int | None, ...]], FunnelRow] = {}
    for manifest in manifests:
        row = funnel_row(manifest)
        if row is not None:
            rows.setdefault((row.domain, row.suite, row.counts), row)
    return [rows[key] for key in sorted(rows, key=lambda key: (key[0], key[1]))], notes


def build_report(
    store: RolloutStore, run_ids: list[str] | None = None, k: int = 5, suites: Sequence[str] = ()
) -> Report:
    """Gather every table and series of the report from the store (and the suites' manifests)."""
    all_runs = [str(r[0]) for r in store.query("SELECT run_id FROM runs ORDER BY created_at, run_id")]
    if run_ids:
        missing = sorted(set(run_ids) - set(all_runs))
        if missing:
            raise MantraError(f"no such run(s) in {store.path}: {', '.join(missing)}; known: {', '.join(all_runs)}")
    runs = run_ids or all_runs
    if not runs:
        raise MantraError(f"{store.path} holds no runs yet: run `python -m mantra_env.run` first")
    summaries = [summarize_run(store, run, k) for run in runs]
    curves: dict[str, list[float]] = {}
    counts_by_run = {run: [(n, a) for _, n, a, _ in store.task_counts(run) if n > 0] for run in runs}
    for summary in summaries:
        tasks = counts_by_run[summary.run_id]
        most = max((n for n, _ in tasks), default=0)
        curves[f"{summary.model} @ {summary.suite}"] = [pass_at_k(tasks, j) for j in range(1, most + 1)]
    comparisons = []
    by_suite: dict[str, list[RunSummary]] = {}
    for summary in summaries:
        by_suite.setdefault(summary.suite, []).append(summary)
    for suite, group in sorted(by_suite.items()):
        ranked = sorted(group, key=lambda s: -s.pass_at_1.value if not math.isnan(s.pass_at_1.value) else 0.0)
        if len(ranked) >= 2:
            first, second = ranked[0], ranked[1]
            a = dict((c, (n, p)) for c, n, p, _ in store.task_counts(first.run_id))
            b = dict((c, (n, p)) for c, n, p, _ in store.task_counts(second.run_id))
            shared = sorted(set(a) & set(b))
            comparisons.append(
                (suite, first.model, second.model, compare_paired([a[c] for c in shared], [b[c] for c in shared]))
            )
    funnel, notes = validation_funnel(store, runs, suites)
    return Report(
        summaries,
        failure_categories(store, runs),
        top_tools_per_category(store, runs),
        comparisons,
        curves,
        funnel,
        notes,
    )


def leaderboard_rows(report: Report) -> tuple[list[str], list[list[str]]]:
    k = report.summaries[0].k
    at_k = [f"Pass@{k} (%)", f"Pass^{k} (%)"] if k > 1 else []  # at k = 1 both are Pass@1
    header = ["model", "suite", "tasks", "attempts", "errors", "Pass@1 (%)", *at_k,
              "premature write (%)", "empty trace (%)", "crash (%)", "reads / pass", "steps", "tokens"]  # fmt: skip
    rows = [
        [
            s.model,
            s.suite,
            str(s.tasks),
            str(s.attempts),
            str(s.errors),
            _ci(s.pass_at_1),
            *([_ci(s.pass_at_k), _ci(s.pass_hat_k)] if at_k else []),
            _pct(s.premature_write_rate),
            _pct(s.empty_trace_rate),
            _pct(s.crash_rate),
            "n/a" if math.isnan(s.read_calls_per_pass) else f"{s.read_calls_per_pass:.2f}",
            "n/a" if math.isnan(s.mean_steps) else f"{s.mean_steps:.1f}",
            "n/a" if math.isnan(s.mean_tokens) else f"{s.mean_tokens:.0f}",
        ]
        for s in sorted(report.summaries, key=lambda s: (s.suite, -_nan_low(s.pass_at_1.value), s.model))
    ]
    return header, rows


def _nan_low(value: float) -> float:
    return -1.0 if math.isnan(value) else value


def _tables(report: Report) -> list[tuple[str, list[str], list[list[str]]]]:
    tables = [("Leaderboard", *leaderboard_rows(report))]
    tables.append((
        "Failure categories",
        ["model", "suite", "category", "failed checks", "share (%)"],
        [[c.model, c.suite, figures.CATEGORY_LABELS.get(c.category, c.category), str(c.count), _pct(c.share)]
         for c in report.categories],
    ))  # fmt: skip
    tables.append(
        (
            "Top tools per failure category",
            ["suite", "category", "tool", "failed checks"],
            [[s, figures.CATEGORY_LABELS.get(c, c), t, str(n)] for s, c, t, n in report.top_tools],
        )
    )
    if report.comparisons:
        tables.append((
            "Is first place ahead? (paired comparison of the top two models per suite)",
            ["suite", "first", "second", "Pass@1 difference (points)", "95% interval", "p-value", "tasks", "test"],
            [[suite, a, b, f"{100 * c.difference.value:+.1f}",
              f"[{100 * c.difference.low:+.1f}, {100 * c.difference.high:+.1f}]", f"{c.p_value:.3g}", str(c.tasks),
              c.method] for suite, a, b, c in report.comparisons],
        ))  # fmt: skip
    if report.funnel:
        tables.append((
            "Validation funnel (generated cases kept by each validation stage)",
            ["domain", "suite", *(figures.STAGE_LABELS[s] for s in figures.GENERATION_STAGES),
             "final / generated (%)", *figures.GENERATION_OUTCOMES.values()],
            [[row.domain, row.suite, *map(_count, row.counts), _pct(row.final_share), *map(_count, row.outcomes)]
             for row in report.funnel],
        ))  # fmt: skip
    return tables


NOTES = (
    "Pass@1, Pass@k and Pass^k are means over tasks with the unbiased estimators of the MANTRA paper; ± is the half "
    "width of a 95 % percentile bootstrap interval over tasks. n/a: a task has fewer than k scored attempts. "
    "Episodes that ended in an infrastructure error are excluded from every score and counted under errors/crash."
)


_MARKDOWN_SPECIAL = re.compile(r"([\\`*\[\]|])")


def markdown_text(text: str) -> str:
    """``text`` as literal Markdown: HTML escaped, the characters that make tables, links or code escaped, and
    line breaks (which would end a table row) as spaces; model names and suite paths come from the database."""
    escaped = html.escape(" ".join(text.splitlines()), quote=False)
    return _MARKDOWN_SPECIAL.sub(r"\\\1", escaped)


def render_markdown(report: Report, figure_files: dict[str, str]) -> str:
    lines = ["# mantra-env leaderboard", "", NOTES, ""]
    for title, header, rows in _tables(report):
        lines += [f"## {title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(map(markdown_text, row)) + " |" for row in rows] or [
            "| " + " | ".join("" for _ in header) + " |"
        ]
        lines.append("")
    if report.notes:
        lines += ["## Notes", "", *(f"- {markdown_text(note)}" for note in report.notes), ""]
    lines.append("## Figures")
    lines += [f"![{name}]({path})" for name, path in figure_files.items()]
    return "\n".join(lines) + "\n"


_NUMBER = re.compile(r"^(n/a|\[?[-+]?\d[\d.,]*)")


def _numeric_columns(header: list[str], rows: list[list[str]]) -> list[bool]:
    """Columns whose every cell is a number (or n/a): right-aligned in the HTML, the others left-aligned."""
    return [bool(rows) and all(_NUMBER.match(row[i]) for row in rows) for i in range(len(header))]


def render_html(report: Report, pngs: dict[str, Path]) -> str:
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>mantra-env leaderboard</title><style>",
        "body{font-family:system-ui,sans-serif;margin:2em;max-width:1280px;color:#222;line-height:1.4}"
        ".table{overflow-x:auto}table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:14px}"
        "th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:bottom}"
        "td{white-space:nowrap}th{background:#f3f3f3}.num{text-align:right;font-variant-numeric:tabular-nums}"
        "img{max-width:100%;margin:1em 0}",
        "</style></head><body><h1>mantra-env leaderboard</h1>",
        f"<p>{html.escape(NOTES)}</p>",
    ]
    for title, header, rows in _tables(report):
        numeric = _numeric_columns(header, rows)
        cls = [" class='num'" if n else "" for n in numeric]
        parts.append(f"<h2>{html.escape(title)}</h2><div class='table'><table><tr>")
        parts.append("".join(f"<th{c}>{html.escape(h)}</th>" for c, h in zip(cls, header, strict=True)) + "</tr>")
        for row in rows:
            cells = "".join(f"<td{c}>{html.escape(cell)}</td>" for c, cell in zip(cls, row, strict=True))
            parts.append(f"<tr>{cells}</tr>")
        parts.append("</table></div>")
    if report.notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in report.notes) + "</ul>")
    parts.append("<h2>Figures</h2>")
    for name, path in pngs.items():
        data = base64.b64encode(path.read_bytes()).decode()
        parts.append(f"<figure><img alt='{html.escape(name)}' src='data:image/png;base64,{data}'></figure>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(
    store: RolloutStore, out: Path, run_ids: list[str] | None = None, k: int = 5, suites: Sequence[str] = ()
) -> dict[str, Path]:
    """Write report.md, report.html and the figures; returns the main paths."""
    report = build_report(store, run_ids, k, suites)
    try:
        return _write_files(report, out)
    except OSError as error:
        raise MantraError(f"cannot write the report to {out}: {error.strerror or error}; pass another --out") from None


def _write_files(report: Report, out: Path) -> dict[str, Path]:
    folder = out / "figures"
    made = {
        "pass_at_k": figures.save(figures.pass_at_k_curves(report.curves), folder, "pass_at_k"),
        "failure_categories": figures.save(figures.category_bars(report.categories), folder, "failure_categories"),
        "premature_write": figures.save(
            figures.premature_write_heatmap({(s.model, s.suite): s.premature_write_rate for s in report.summaries}),
            folder,
            "premature_write",
        ),
    }
    if report.funnel:
        funnel = {f"{row.domain} / {row.suite}": row.counts for row in report.funnel}
        made["validation_funnel"] = figures.save(figures.validation_funnel(funnel), folder, "validation_funnel")
    out.mkdir(parents=True, exist_ok=True)
    markdown = render_markdown(report, {name: f"figures/{paths['png'].name}" for name, paths in made.items()})
    (out / "report.md").write_text(markdown, encoding="utf-8")
    (out / "report.html").write_text(render_html(report, {n: p["png"] for n, p in made.items()}), encoding="utf-8")
    return {"markdown": out / "report.md", "html": out / "report.html", "figures": folder}


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(
        "graders.report",
        __doc__,
        "                                   # every run in results/mantra.duckdb -> results/report/",
        "--db results/nightly.duckdb --run nightly --k 3 --out results/nightly-report",
    )
    parser.add_argument("--db", type=Path, default=Path("results/mantra.duckdb"), help="rollout database")
    parser.add_argument("--run", action="append", dest="runs", help="run id to include (repeatable; default: all)")
    parser.add_argument("--k", type=int, default=5, help="k for Pass@k and Pass^k (default 5)")
    parser.add_argument("--out", type=Path, default=Path("results/report"), help="output folder")
    parser.add_argument(
        "--suite",
        action="append",
        dest="suites",
        default=[],
        help="suite folder, manifest.json or suite name whose validation funnel to show (repeatable; the runs' "
        "own suites are always looked up)",
    )
    args = parser.parse_args(argv)
    if args.k < 1:
        print(f"error: --k must be at least 1 (got {args.k})", file=sys.stderr)
        return 2
    if not args.db.exists():
        print(f"error: no rollout database at {args.db}; run `python -m mantra_env.run` first", file=sys.stderr)
        return 2

    def body() -> int:
        with RolloutStore(args.db, read_only=True) as store:
            paths = write_report(store, args.out, args.runs, args.k, args.suites)
        print(f"wrote {paths['markdown']}, {paths['html']} and figures in {paths['figures']}")
        return 0

    return run_command(body)


if __name__ == "__main__":
    sys.exit(main())
