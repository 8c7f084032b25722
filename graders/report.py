"""``python -m mantra_env.graders.report --db results/mantra.duckdb [--run RUN ...] [--k K] [--suite PATH ...]
--out DIR``

Writes ``report.md`` and a self-contained ``report.html`` (tables, figures embedded as PNG), and every figure
as PNG and SVG under ``figures/``. Every score comes from the stored rows (:mod:`mantra_env.graders.analysis`).

k defaults to the runs' ``--attempts`` (the fewest of them: :func:`mantra_env.graders.analysis.run_k`). One overall row
per model (macro mean over the suites it ran; n/a unless it ran them all), then the leaderboard: one row per model and
suite (runs pooled only when their suite hash and settings agree, see :mod:`mantra_env.graders.leaderboard`) with the
cases run out of the suite's, split into a scores table and a behaviour table (run ids, grader, rates, tokens and cost
per episode with ``--price``); Pass@1 and Pass^k per domain, Pass@k and Pass^k curves over k faceted by domain, and the
paired test of the top two different models. Every interval is ``value [low, high]``
(:func:`mantra_env.graders.intervals.format_estimate`).

When a suite's ``manifest.json`` holds generation records (``stage_counts`` with ``generated``,
``forward_validated``, ``backward_validated`` and ``final``, and where the others went: ``awaiting_human``,
``rejected``, ``replay_failed``), the report adds its row of the paper's Table 2, the validation funnel and the
validated-by-round curves (:mod:`mantra_env.graders.generation`). The suites are those the runs name in their stored
config (the ``--suite`` the run was given) and those passed with ``--suite`` (a suite folder, a ``manifest.json`` or a
suite name); a run's suite that can no longer be found is left out with a note. Hand-written suites
(``written``/``validated``/``final``) have none of these. Every suite found whose domain loads, generated or not,
gets its refusal share (:mod:`mantra_env.graders.refusals`: the cases whose stored oracle plan writes nothing, the
Pass@1 of the scripted ``decline`` baseline; cases without a stored plan are counted as n/a). ``--audit FILE`` (written
by ``mantra audit SUITE... --json FILE``) adds the suite audit table: refusal share, the floor baselines, checks per
case and the mutation scores (:mod:`mantra_env.graders.suite_audit`).
"""

from __future__ import annotations

import base64
import html
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

from mantra_env.case import Suite
from mantra_env.cli import command_parser, run_command
from mantra_env.domains import Domain, domain_names, find_suite
from mantra_env.errors import MantraError
from mantra_env.files import write_atomic
from mantra_env.graders import figures
from mantra_env.graders.analysis import CategoryCount, Prices, failure_categories, run_k, top_tools_per_category
from mantra_env.graders.generation import GenerationRow, generation_row, generation_tables, rounds_table
from mantra_env.graders.leaderboard import (
    Comparison,
    LeaderboardRow,
    behaviour_table,
    comparison_table,
    comparisons,
    curve_domains,
    curves,
    domain_table,
    leaderboard,
    leaderboard_table,
    overall_rows,
    overall_table,
)
from mantra_env.graders.refusals import RefusalShare, refusal_share
from mantra_env.graders.suite_audit import AuditRow, audit_table, load_audit
from mantra_env.graders.table import Column, Table, make_table, markdown_text, percent, table_html, table_markdown
from mantra_env.store import RolloutStore

__all__ = ["Report", "build_report", "main", "markdown_text", "read_suite", "write_report"]


@dataclass(frozen=True)
class Report:
    k: int
    rows: list[LeaderboardRow]
    categories: list[CategoryCount]
    top_tools: list[tuple[str, str, str, int]]
    comparisons: list[Comparison]
    curves: dict[str, dict[str, list[float]]]
    generation: list[GenerationRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    refusals: list[RefusalShare] = field(default_factory=list)
    audit: list[AuditRow] = field(default_factory=list)
    """Rows of ``mantra audit --json`` files given with ``--audit``."""

    def tables(self) -> list[Table]:
        """Every table of the report, in order (the notebooks display the same objects)."""
        found = [overall_table(overall_rows(self.rows, self.k), self.k), leaderboard_table(self.rows, self.k)]
        found += [domain_table(self.rows), *([domain_table(self.rows, self.k)] if self.k > 1 else [])]
        found.append(behaviour_table(self.rows))
        found.append(make_table("Failure categories", CATEGORY_COLUMNS, self.categories))
        found.append(make_table("Top tools per failure category", TOOL_COLUMNS, self.top_tools))
        if self.comparisons:
            found.append(comparison_table(self.comparisons))
        if self.refusals:
            found.append(make_table(REFUSAL_TITLE, REFUSAL_COLUMNS, self.refusals))
        if self.audit:
            found.append(audit_table(self.audit))
        if self.generation:
            found += [*generation_tables(self.generation), rounds_table(self.generation)]
        return found


def _category(name: str) -> str:
    return figures.CATEGORY_LABELS.get(name, name)


CATEGORY_COLUMNS: list[Column[CategoryCount]] = [
    Column("model", lambda c: c.model),
    Column("suite", lambda c: c.suite),
    Column("category", lambda c: c.category, _category),
    Column("failures", lambda c: c.count),
    Column("share (%)", lambda c: c.share, percent),
]
REFUSAL_TITLE = "Refusal share per suite (the best Pass@1 of a policy that never writes: scripted:decline)"
REFUSAL_COLUMNS: list[Column[RefusalShare]] = [
    Column("suite", lambda r: r.suite),
    Column("cases", lambda r: r.cases),
    Column("refusals (plan without a write)", lambda r: r.refusals),
    Column("plan with a write", lambda r: r.actions),
    Column("no stored plan (n/a)", lambda r: r.unplanned),
    Column("refusal share (%)", lambda r: r.share, percent),
]
TOOL_COLUMNS: list[Column[tuple[str, str, str, int]]] = [
    Column("suite", lambda t: t[0]),
    Column("category", lambda t: t[1], _category),
    Column("tool", lambda t: t[2]),
    Column("failures", lambda t: t[3]),
]


def read_suite(argument: str) -> tuple[Domain | None, Suite]:
    """A suite given as a ``manifest.json`` file, a suite folder, or a suite name, with its domain when shipped.

    Raises :class:`MantraError` when the suite cannot be found or read.
    """
    path = Path(argument)
    if path.is_file() and path.name == "manifest.json":
        path = path.parent
    if path.is_dir():
        if not (path / "manifest.json").is_file():
            raise MantraError(f"{path} is a folder without a manifest.json, not a suite")
        return find_suite(str(path))
    if path.exists():
        raise MantraError(f"{argument} is neither a suite folder nor its manifest.json")
    if argument.partition("/")[0] not in domain_names():
        raise MantraError(f"{argument} is not a suite folder, a manifest.json or a shipped suite name")
    return find_suite(argument)


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


@dataclass
class _Suites:
    """The suites of the runs and of ``--suite``: cases per suite by run, generation rows, and notes."""

    case_counts: dict[str, int | None] = field(default_factory=dict)
    generation: list[GenerationRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    refusals: list[RefusalShare] = field(default_factory=list)


def _suites(store: RolloutStore, runs: list[str], suites: Sequence[str]) -> _Suites:
    """An explicit suite that cannot be read is an error; a run's suite that is gone is only a note."""
    runs_by_suite: dict[str, list[str]] = {}
    for run_id, argument in _run_suite_arguments(store, runs):
        runs_by_suite.setdefault(argument, []).append(run_id)
    found = _Suites()
    loaded: list[tuple[Domain | None, Suite]] = []
    for argument, run_ids in runs_by_suite.items():
        try:
            domain, suite = read_suite(argument)
        except (MantraError, OSError, ValueError) as exc:
            found.notes.append(
                f"Run(s) {', '.join(run_ids)}: suite not found, so its size and generation records are unknown ({exc})."
            )
            continue
        loaded.append((domain, suite))
        found.case_counts.update(dict.fromkeys(run_ids, suite.manifest.case_count))
    loaded += [read_suite(argument) for argument in suites]
    rows: dict[tuple[str, str], GenerationRow] = {}
    for domain, suite in loaded:
        row = generation_row(suite, domain)
        if row is not None:
            rows.setdefault((row.domain, row.suite), row)
    found.generation = [rows[key] for key in sorted(rows)]
    shares: dict[str, RefusalShare] = {}
    for domain, suite in loaded:
        label = f"{suite.manifest.domain}/{suite.manifest.name}"
        if domain is not None:  # tool kinds come from the domain: a suite of a domain not found has none
            shares.setdefault(label, refusal_share(label, suite.cases, domain.episode_constants.kinds))
    found.refusals = [shares[label] for label in sorted(shares)]
    return found


def match_prices(prices: Prices, models: Sequence[str]) -> dict[str, tuple[float, float]]:
    """Each ``--price`` applied to the models of the runs it names: a model as the runs store it (the ``--model``
    each was given: an alias or a litellm model string), or the litellm model string of an alias the runs used
    (``--price openai/gpt-4o-mini=...`` prices runs of an alias for that model). A price that names no model of the
    runs is a :class:`MantraError`, never silently ignored."""
    from mantra_env.agents.models import ModelConfigError, load_models

    try:
        _, aliases = load_models()
    except ModelConfigError:  # a broken models file: only the stored names can match
        aliases = {}
    matched: dict[str, tuple[float, float]] = {}
    for name, price in prices.items():
        targets = [model for model in models if name in (model, getattr(aliases.get(model), "model", None))]
        if not targets:
            raise MantraError(
                f"--price {name}: no run of that model in the report; its models are {', '.join(sorted(models))} "
                "(name one as the runs store it, or the litellm model string of its alias)"
            )
        matched.update(dict.fromkeys(targets, price))
    return matched


def build_report(
    store: RolloutStore,
    run_ids: list[str] | None = None,
    k: int | None = None,
    suites: Sequence[str] = (),
    prices: Prices | None = None,
    audits: Sequence[Path] = (),
) -> Report:
    """Gather every table and series of the report from the store (and the suites' manifests and cases, and the
    ``mantra audit --json`` files ``audits``); ``k`` defaults to the runs' attempts
    (:func:`mantra_env.graders.analysis.run_k`)."""
    all_runs = [str(r[0]) for r in store.query("SELECT run_id FROM runs ORDER BY created_at, run_id")]
    if run_ids:
        missing = sorted(set(run_ids) - set(all_runs))
        if missing:
            raise MantraError(f"no such run(s) in {store.path}: {', '.join(missing)}; known: {', '.join(all_runs)}")
    runs = run_ids or all_runs
    if not runs:
        raise MantraError(f"{store.path} holds no runs yet: run `python -m mantra_env.run` first")
    found = _suites(store, runs, suites)
    k = run_k(store, runs) if k is None else k
    models = [str(row[0]) for row in store.query("SELECT DISTINCT model FROM runs WHERE run_id IN (SELECT unnest(?))",
                                                 [runs])]  # fmt: skip
    prices = match_prices(prices or {}, models)
    rows = leaderboard(store, runs, k, found.case_counts, prices)
    return Report(
        k,
        rows,
        failure_categories(store, runs),
        top_tools_per_category(store, runs),
        comparisons(rows),
        curves(rows),
        found.generation,
        found.notes,
        found.refusals,
        [row for path in audits for row in load_audit(path)],
    )


NOTES = (
    "One row per model and suite: runs are pooled only when they ran the same suite content (hash) with the same "
    "settings and were graded by the same grader version; otherwise each is a row of its own. An episode passes "
    "when every check passes and it made no unrequested write (grader 2: an accepted write the case never asks "
    "for); runs of grader 1 were graded on the checks alone and show 'not graded for writes', as do cases without a "
    "stored oracle plan. Pass@1, Pass@k and Pass^k are means over tasks with the unbiased "
    "estimators of the MANTRA paper, over the tasks with at least k scored attempts (Pass@1: one); 'n of N tasks' "
    "says when some had fewer, and leaving them out may bias a score upward (errors often hit the hard tasks). "
    "[low, high] is a 95 % interval: a bootstrap over tasks, or a Wilson interval (marked Wilson, n = tasks) when "
    "every task scored 0 or 1. The overall row is the mean over the suites (each weighs the same) on the tasks "
    "every model scored at least k times, n/a for a model that did not run every suite. n/a: no task has enough "
    "scored attempts, or (tokens, cost) the usage or price is not recorded. Episodes that ended in an "
    "infrastructure error are excluded from every score and counted under errors/crash. Models named "
    "scripted:* are reference agents: oracle (the SMT-proven plans, the ceiling), decline (the oracle's reads, no "
    "write, a refusal: its Pass@1 is the suite's refusal share), read-all (every read the request's identifiers "
    "allow, then an answer), noop, random and write-first (floors)."
)


def render_markdown(report: Report, figure_files: dict[str, str]) -> str:
    lines = ["# mantra-env leaderboard", "", NOTES, ""]
    for table in report.tables():
        lines += table_markdown(table)
    if report.notes:
        lines += ["## Notes", "", *(f"- {markdown_text(note)}" for note in report.notes), ""]
    lines.append("## Figures")
    lines += [f"![{name}]({path})" for name, path in figure_files.items()]
    return "\n".join(lines) + "\n"


def render_html(report: Report, pngs: dict[str, Path]) -> str:
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>mantra-env leaderboard</title><style>",
        "body{font-family:system-ui,sans-serif;margin:2em;max-width:1280px;color:#222;line-height:1.4}"
        ".table{overflow-x:auto}table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:14px}"
        "th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:bottom}"
        "th{background:#f3f3f3}"
        ".num{text-align:right;font-variant-numeric:tabular-nums}td.num{white-space:nowrap}"
        "img{max-width:100%;margin:1em 0}",
        "</style></head><body><h1>mantra-env leaderboard</h1>",
        f"<p>{html.escape(NOTES)}</p>",
    ]
    parts += [table_html(table) for table in report.tables()]
    if report.notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in report.notes) + "</ul>")
    parts.append("<h2>Figures</h2>")
    for name, path in pngs.items():
        data = base64.b64encode(path.read_bytes()).decode()
        parts.append(f"<figure><img alt='{html.escape(name)}' src='data:image/png;base64,{data}'></figure>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(
    store: RolloutStore,
    out: Path,
    run_ids: list[str] | None = None,
    k: int | None = None,
    suites: Sequence[str] = (),
    prices: Prices | None = None,
    audits: Sequence[Path] = (),
) -> dict[str, Path]:
    """Write report.md, report.html and the figures; returns the main paths."""
    report = build_report(store, run_ids, k, suites, prices, audits)
    try:
        return _write_files(report, out)
    except OSError as error:
        raise MantraError(f"cannot write the report to {out}: {error.strerror or error}; pass another --out") from None


def _write_files(report: Report, out: Path) -> dict[str, Path]:
    folder = out / "figures"
    rates = {(r.summary.model, r.summary.suite): r.summary.premature_write_rate for r in report.rows}
    made = {
        "pass_at_k": figures.save(
            figures.pass_at_k_curves(report.curves, curve_domains(report.rows)), folder, "pass_at_k"
        ),
        "failure_categories": figures.save(figures.category_bars(report.categories), folder, "failure_categories"),
        "premature_write": figures.save(figures.premature_write_heatmap(rates), folder, "premature_write"),
    }
    if report.generation:
        funnel = {row.label: row.counts for row in report.generation}
        made["validation_funnel"] = figures.save(figures.validation_funnel(funnel), folder, "validation_funnel")
        by_round = {row.label: counts for row in report.generation if (counts := row.validated_by_round())}
        if by_round:
            generated = {row.label: row.counts[0] for row in report.generation}
            made["validated_by_round"] = figures.save(
                figures.validated_by_round(by_round, generated), folder, "validated_by_round"
            )
    out.mkdir(parents=True, exist_ok=True)
    markdown = render_markdown(report, {name: f"figures/{paths['png'].name}" for name, paths in made.items()})
    write_atomic(out / "report.md", markdown)
    write_atomic(out / "report.html", render_html(report, {n: p["png"] for n, p in made.items()}))
    return {"markdown": out / "report.md", "html": out / "report.html", "figures": folder}


def parse_price(argument: str) -> tuple[str, tuple[float, float]]:
    """``MODEL=IN,OUT`` (dollars per million input and output tokens) for ``--price``."""
    model, equals, numbers = argument.rpartition("=")
    parts = numbers.split(",")
    try:
        if not equals or not model or len(parts) != 2:
            raise ValueError
        price_in, price_out = float(parts[0]), float(parts[1])
        if min(price_in, price_out) < 0:
            raise ValueError
    except ValueError:
        raise MantraError(
            f"--price {argument!r}: expected MODEL=IN,OUT with non-negative dollars per million input and output "
            "tokens, e.g. --price openai/gpt-4o=2.5,10"
        ) from None
    return model, (price_in, price_out)


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(
        "mantra_env.graders.report",
        __doc__,
        "                                   # every run in results/mantra.duckdb -> results/report/",
        "--db results/nightly.duckdb --run nightly --k 3 --out results/nightly-report",
        "--price openai/gpt-4o=2.5,10           # cost per episode from the stored token usage",
    )
    parser.add_argument("--db", type=Path, default=Path("results/mantra.duckdb"), help="rollout database")
    parser.add_argument("--run", action="append", dest="runs", help="run id to include (repeatable; default: all)")
    parser.add_argument(
        "--k", type=int, default=None, help="k for Pass@k and Pass^k (default: the runs' --attempts, the fewest)"
    )
    parser.add_argument("--out", type=Path, default=Path("results/report"), help="output folder")
    parser.add_argument(
        "--suite",
        action="append",
        dest="suites",
        default=[],
        help="suite folder, manifest.json or suite name whose validation funnel to show (repeatable; the runs' "
        "own suites are always looked up)",
    )
    parser.add_argument(
        "--price",
        action="append",
        dest="prices",
        default=[],
        metavar="MODEL=IN,OUT",
        help="dollars per million input and output tokens of a model (as the runs store it, or the litellm model "
        "string of its alias), for the cost column (repeatable; without it cost is n/a; a model of no run is refused)",
    )
    parser.add_argument(
        "--audit",
        action="append",
        dest="audits",
        type=Path,
        default=[],
        metavar="FILE",
        help="a `mantra audit SUITE... --json FILE` file whose suite audit table to show (repeatable)",
    )
    args = parser.parse_args(argv)
    matplotlib.use("Agg")  # the CLI only writes files; a notebook keeps its own (inline) backend
    if args.k is not None and args.k < 1:
        print(f"error: --k must be at least 1 (got {args.k})", file=sys.stderr)
        return 2
    if not args.db.exists():
        print(f"error: no rollout database at {args.db}; run `python -m mantra_env.run` first", file=sys.stderr)
        return 2

    def body() -> int:
        prices = dict(parse_price(argument) for argument in args.prices)
        with RolloutStore(args.db, read_only=True) as store:
            if store.snapshot is not None:
                print(
                    f"a run is writing {args.db}: reporting the episodes it had finished a few seconds ago (its live "
                    f"snapshot {store.snapshot}); run the report again for later ones",
                    file=sys.stderr,
                )
            paths = write_report(store, args.out, args.runs, args.k, args.suites, prices, args.audits)
        print(f"wrote {paths['markdown']}, {paths['html']} and figures in {paths['figures']}")
        return 0

    return run_command(body)


if __name__ == "__main__":
    sys.exit(main())
