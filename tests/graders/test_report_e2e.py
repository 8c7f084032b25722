"""End to end: the scripted agents run through the real runner into a DuckDB file, then the report CLI; every
number in report.md and report.html must equal what the metric functions compute from the same rows."""

from __future__ import annotations

import html
import math
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from mantra_env.domains import find_suite, load_domain
from mantra_env.graders.analysis import RunSummary, failure_categories, summarize_run, top_tools_per_category
from mantra_env.graders.figures import CATEGORY_LABELS
from mantra_env.graders.generation import GENERATION_TITLES
from mantra_env.graders.leaderboard import leaderboard_table
from mantra_env.graders.metrics import (
    Estimate,
    bootstrap_ci,
    compare_paired,
    pass_at_1,
    pass_at_1_ci,
    pass_at_k,
    pass_at_k_ci,
    pass_hat_k,
    pass_hat_k_ci,
)
from mantra_env.graders.report import build_report, main
from mantra_env.grading import GRADER_VERSION
from mantra_env.smt import implied_checks
from mantra_env.store import RolloutStore

from ..helpers_rollouts import ATTEMPTS, GENERATION_COUNTS, generated_suite, run_scripted

K = ATTEMPTS
FIGURES = ("pass_at_k", "failure_categories", "premature_write")
pytestmark = pytest.mark.slow

Tables = dict[str, list[list[str]]]


def markdown_tables(text: str) -> Tables:
    """Rows (header first) of every Markdown table, by the title of the section it is in."""
    tables: Tables = {}
    title = ""
    for line in text.splitlines():
        if line.startswith("## "):
            title = line[3:]
        elif line.startswith("|"):
            # As a Markdown renderer reads them: split at unescaped pipes, then undo backslash escapes and entities.
            raw = re.split(r"(?<!\\)\|", line.strip()[1:-1])
            cells = [html.unescape(re.sub(r"\\(.)", r"\1", cell.strip())) for cell in raw]
            if not all(set(cell) <= {"-"} for cell in cells):
                tables.setdefault(title, []).append(cells)
    return tables


class _HtmlTables(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: Tables = {}
        self.title = ""
        self.text: list[str] | None = None
        self.row: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("h2", "td", "th"):
            self.text = []
        elif tag == "tr":
            self.row = []

    def handle_data(self, data: str) -> None:
        if self.text is not None:
            self.text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2" and self.text is not None:
            self.title = "".join(self.text)
        elif tag in ("td", "th") and self.text is not None:
            self.row.append("".join(self.text).strip())
        elif tag == "tr":
            self.tables.setdefault(self.title, []).append(self.row)
        if tag in ("h2", "td", "th"):
            self.text = None


def html_tables(page: str) -> Tables:
    parser = _HtmlTables()
    parser.feed(page)
    return parser.tables


# The report's number formats, written out here so that a change in either is noticed.
def ci(estimate: Estimate) -> str:
    if math.isnan(estimate.value):
        return "n/a"
    shown = f"{100 * estimate.value:.1f} [{100 * estimate.low:.1f}, {100 * estimate.high:.1f}]"
    return shown + (" Wilson" if estimate.method == "Wilson" else "")


def pct(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{100 * value:.1f}"


def by_first_columns(rows: list[list[str]], width: int) -> dict[tuple[str, ...], list[str]]:
    return {tuple(row[:width]): row for row in rows}


@pytest.fixture(scope="module")
def report(scripted_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    assert main(["--db", str(scripted_db), "--out", str(out), "--k", str(K)]) == 0
    return out


@pytest.fixture(scope="module")
def summaries(scripted_db: Path) -> dict[str, RunSummary]:
    with RolloutStore(scripted_db, read_only=True) as store:
        runs = [str(row[0]) for row in store.query("SELECT run_id FROM runs ORDER BY created_at")]
        return {summarize_run(store, run, K).model: summarize_run(store, run, K) for run in runs}


def test_scripted_runs_are_all_stored(scripted_db: Path, summaries: dict[str, RunSummary]) -> None:
    assert sorted(summaries) == ["scripted:noop", "scripted:oracle", "scripted:random", "scripted:write-first"]
    with RolloutStore(scripted_db, read_only=True) as store:
        cases = store.query("SELECT count(DISTINCT case_id) FROM episodes")[0][0]
    for summary in summaries.values():
        assert (summary.tasks, summary.attempts, summary.errors) == (cases, cases * ATTEMPTS, 0)


def test_files_and_embedded_figures(report: Path) -> None:
    assert (report / "report.md").stat().st_size > 0
    page = (report / "report.html").read_text(encoding="utf-8")
    for name in FIGURES:
        assert (report / "figures" / f"{name}.png").stat().st_size > 1000
        assert (report / "figures" / f"{name}.svg").stat().st_size > 1000
    assert page.count("data:image/png;base64,") == len(FIGURES)
    # overall, leaderboard, Pass@1 and Pass^k by domain, behaviour, failure categories, top tools, paired
    # comparison, refusal share
    assert page.count("<table>") == len(html_tables(page)) == 9
    # The operations starter suite is hand-written: no generation records, so no Table 2 row or funnel.
    assert not (report / "figures" / "validation_funnel.png").exists()
    markdown = (report / "report.md").read_text()
    assert not any(title in page or title in markdown for title in GENERATION_TITLES)


@pytest.mark.parametrize("form", ["markdown", "html"])
def test_leaderboard_equals_the_metric_functions(
    form: str, report: Path, scripted_db: Path, summaries: dict[str, RunSummary]
) -> None:
    tables = read_tables(report, form)
    header, *rows = tables["Leaderboard"]
    behaviour_header, *behaviour = tables["Leaderboard: behaviour, errors and cost"]
    assert [row[:2] for row in rows] == [row[:2] for row in behaviour]  # the same rows in the same order
    shown = {
        row[0]: dict(zip(header + behaviour_header, row + other, strict=True))
        for row, other in zip(rows, behaviour, strict=True)
    }
    assert sorted(shown) == sorted(summaries)
    with RolloutStore(scripted_db, read_only=True) as store:
        for model, summary in summaries.items():
            tasks = [(n, passed) for _, n, passed, _ in store.task_counts(summary.run_id) if n > 0]
            assert summary.pass_at_1 == pass_at_1_ci(tasks)
            assert summary.pass_at_k == pass_at_k_ci(tasks, K)
            assert summary.pass_hat_k == pass_hat_k_ci(tasks, K)
            assert summary.pass_at_1.value == pytest.approx(pass_at_1(tasks))
            assert summary.pass_at_k.value == pytest.approx(pass_at_k(tasks, K))
            assert summary.pass_hat_k.value == pytest.approx(pass_hat_k(tasks, K))
            scored, premature, empty = premature_and_empty(store, summary.run_id)
            reads = summary.read_calls_per_pass
            assert summary.premature_write_rate == pytest.approx(premature / scored)
            assert summary.empty_trace_rate == pytest.approx(empty / scored)
            assert shown[model] == {
                "model": model,
                "suite": "operations/starter",
                "runs": summary.run_id,
                "cases run / in suite": f"{summary.tasks} / 14",
                "attempts": str(summary.attempts),
                "errors": "0",
                "Pass@1 (%)": ci(summary.pass_at_1),
                f"Pass@{K} (%)": ci(summary.pass_at_k),
                f"Pass^{K} (%)": ci(summary.pass_hat_k),
                "grader": f"{GRADER_VERSION} (no oracle plans: checks only)",  # the starter suite stores none
                "unrequested write (%)": "not graded for writes",
                "premature write (%)": pct(summary.premature_write_rate),
                "empty trace (%)": pct(summary.empty_trace_rate),
                "crash (%)": "0.0",
                "reads / pass": "n/a" if math.isnan(reads) else f"{reads:.2f}",
                "steps": f"{summary.mean_steps:.1f}",
                "tokens / episode": "n/a",  # scripted agents record no model usage
                "cost / episode ($)": "n/a",
            }
    # The known calibration of the scripted agents.
    oracle, noop = summaries["scripted:oracle"], summaries["scripted:noop"]
    assert oracle.pass_at_1.value == oracle.pass_hat_k.value == 1.0
    assert shown["scripted:oracle"]["Pass@1 (%)"] == "100.0 [78.5, 100.0] Wilson"  # 14 of 14 cases
    assert noop.pass_at_1.value == 0.0 and shown["scripted:noop"]["Pass@1 (%)"] == "0.0 [0.0, 21.5] Wilson"
    assert noop.empty_trace_rate == 1.0 and shown["scripted:noop"]["empty trace (%)"] == "100.0"
    assert summaries["scripted:write-first"].premature_write_rate > summaries["scripted:oracle"].premature_write_rate
    assert summaries["scripted:write-first"].premature_write_rate == 1.0
    assert rows[0][0] == "scripted:oracle"  # ranked by Pass@1


def test_at_k_1_the_leaderboard_shows_pass_at_1_once(scripted_db: Path) -> None:
    with RolloutStore(scripted_db, read_only=True) as store:
        narrow, wide = (leaderboard_table(build_report(store, k=k).rows, k) for k in (1, K))
    header, rows, wide_header, wide_rows = narrow.header, narrow.rows, wide.header, wide.rows
    assert [column for column in header if column.startswith("Pass")] == ["Pass@1 (%)"]
    assert header == [column for column in wide_header if column not in (f"Pass@{K} (%)", f"Pass^{K} (%)")]
    assert all(len(row) == len(header) for row in rows)
    at_1 = header.index("Pass@1 (%)")
    assert [row[at_1] for row in rows] == [row[wide_header.index("Pass@1 (%)")] for row in wide_rows]


def premature_and_empty(store: RolloutStore, run_id: str) -> tuple[int, int, int]:
    """Scored episodes, those that wrote before any read, and those with no call, from the raw tables."""
    row = store.query(
        """SELECT count(*),
                  count(*) FILTER (WHERE (SELECT min(step) FROM steps s WHERE s.run_id = e.run_id
                        AND s.case_id = e.case_id AND s.attempt = e.attempt AND kind = 'write')
                      < coalesce((SELECT min(step) FROM steps s WHERE s.run_id = e.run_id
                        AND s.case_id = e.case_id AND s.attempt = e.attempt AND kind = 'read'), 1000000)),
                  count(*) FILTER (WHERE steps = 0)
           FROM episodes e WHERE run_id = ? AND status <> 'error'""",
        [run_id],
    )[0]
    return int(row[0]), int(row[1]), int(row[2])


def read_tables(report: Path, form: str) -> Tables:
    if form == "markdown":
        return markdown_tables((report / "report.md").read_text(encoding="utf-8"))
    return html_tables((report / "report.html").read_text(encoding="utf-8"))


@pytest.mark.parametrize("form", ["markdown", "html"])
def test_failure_tables_equal_the_analysis(form: str, report: Path, scripted_db: Path) -> None:
    tables = read_tables(report, form)
    with RolloutStore(scripted_db, read_only=True) as store:
        categories = failure_categories(store)
        top_tools = top_tools_per_category(store)
        failed = dict(store.query("SELECT model, count(*) FROM check_verdicts JOIN runs USING (run_id) "
                                  "WHERE NOT passed GROUP BY model"))  # fmt: skip
        for model, writes in store.query("SELECT model, count(*) FROM v_unrequested_writes GROUP BY model"):
            failed[model] = failed.get(model, 0) + writes
    header, *rows = tables["Failure categories"]
    assert header == ["model", "suite", "category", "failures", "share (%)"]
    assert rows == [[c.model, c.suite, CATEGORY_LABELS[c.category], str(c.count), pct(c.share)] for c in categories]
    for model, count in failed.items():  # every failed check and unrequested write is in exactly one category
        assert sum(int(row[3]) for row in rows if row[0] == model) == count
    assert "scripted:oracle" not in failed and failed["scripted:noop"] > 0
    _, *tool_rows = tables["Top tools per failure category"]
    assert tool_rows == [[s, CATEGORY_LABELS[c], t, str(n)] for s, c, t, n in top_tools]


@pytest.mark.parametrize("form", ["markdown", "html"])
def test_paired_comparison_equals_compare_paired(
    form: str, report: Path, scripted_db: Path, summaries: dict[str, RunSummary]
) -> None:
    (title,) = [t for t in read_tables(report, form) if t.startswith("Is first place ahead?")]
    _, row = read_tables(report, form)[title]
    suite, first, second = row[:3]
    assert (suite, first) == ("operations/starter", "scripted:oracle")
    with RolloutStore(scripted_db, read_only=True) as store:
        a, b = ({c: (n, p) for c, n, p, _ in store.task_counts(summaries[model].run_id)} for model in (first, second))
    comparison = compare_paired([a[c] for c in sorted(a)], [b[c] for c in sorted(a)])
    d = comparison.difference
    assert row[3:] == [f"{100 * d.value:+.1f} [{100 * d.low:+.1f}, {100 * d.high:+.1f}]",
                       f"{comparison.p_value:.3g}", str(comparison.tasks), comparison.method,
                       "first is ahead (p < 0.05); tied with second: scripted:random, "
                       "scripted:write-first"]  # fmt: skip
    assert summaries[second].pass_at_1.value == max(
        s.pass_at_1.value for s in summaries.values() if s.model != "scripted:oracle"
    )


def test_pass_at_k_curves_equal_pass_at_k(scripted_db: Path, summaries: dict[str, RunSummary]) -> None:
    with RolloutStore(scripted_db, read_only=True) as store:
        curves = build_report(store, k=K).curves
        for summary in summaries.values():
            tasks = [(n, passed) for _, n, passed, _ in store.task_counts(summary.run_id)]
            label = f"{summary.model} @ operations/starter"
            expected = [pass_at_k(tasks, j) for j in range(1, ATTEMPTS + 1)]
            assert curves["Pass@k"][label] == pytest.approx(expected)
            assert curves["Pass^k"][label] == pytest.approx([pass_hat_k(tasks, j) for j in range(1, ATTEMPTS + 1)])


# -- the validation funnel of generated suites ------------------------------------------------------------------

FUNNEL_HEADERS = (["domain", "suite", "words", "tools", "checks / case (mean [95% interval])",
                   "not implied by the others", "judge edits: world model", "judge edits: checks",
                   "screened out (by reason)"],
                  ["domain", "suite", "generated", "forward-validated", "backward-validated", "final",
                   "final / generated (%)", "awaiting a human", "rejected", "replay failed",
                   "passed by a trivial agent"])  # fmt: skip


DOMAIN = load_domain("operations")
_CHECKS = [len(case.checks) for case in find_suite("operations/starter")[1].cases]
_CHECKS_CI = bootstrap_ci([float(n) for n in _CHECKS])
STARTER_CHECKS = f"{sum(_CHECKS) / len(_CHECKS):.2f} [{_CHECKS_CI.low:.2f}, {_CHECKS_CI.high:.2f}]"
_OWN = [  # checks that the case's other checks do not imply (tests/smt/test_implied.py tests the query)
    float(len(case.checks) - len(implied_checks(case.checks, DOMAIN.tool_specs())))
    for case in find_suite("operations/starter")[1].cases
]
STARTER_OWN = f"{sum(_OWN) / len(_OWN):.2f} [{bootstrap_ci(_OWN).low:.2f}, {bootstrap_ci(_OWN).high:.2f}]"


def expected_funnel_rows(counts: dict[str, int]) -> tuple[list[str], list[str]]:
    stages = ("generated", "forward_validated", "backward_validated", "final")
    outcomes = ("awaiting_human", "rejected", "replay_failed", "trivially_passed")
    screened = "none" if "replay_failed" in counts else "n/a"  # a screened manifest with nothing screened out
    return (["operations", "generated", str(len(DOMAIN.manual.split())), str(len(DOMAIN.tool_specs())),
             STARTER_CHECKS, STARTER_OWN, "n/a", "n/a", screened],  # hand-written cases: no validation history
            ["operations", "generated", *(str(counts[s]) for s in stages), pct(counts["final"] / counts["generated"]),
             *(str(counts[o]) if o in counts else "n/a" for o in outcomes)])  # fmt: skip


def assert_funnel(out: Path, counts: dict[str, int]) -> None:
    for form in ("markdown", "html"):
        tables = read_tables(out, form)
        for title, header, row in zip(GENERATION_TITLES, FUNNEL_HEADERS, expected_funnel_rows(counts), strict=True):
            assert tables[title] == [header, row]
    assert (out / "figures" / "validation_funnel.png").stat().st_size > 1000
    assert (out / "figures" / "validation_funnel.svg").stat().st_size > 1000
    assert (out / "report.html").read_text(encoding="utf-8").count("data:image/png;base64,") == len(FIGURES) + 1
    assert "![validation_funnel](figures/validation_funnel.png)" in (out / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("given", ["folder", "manifest"])
def test_funnel_of_a_suite_given_with_suite_option(given: str, scripted_db: Path, tmp_path: Path) -> None:
    counts = {"generated": 40, "forward_validated": 22, "backward_validated": 25, "final": 19}
    counts |= {"awaiting_human": 4, "rejected": 16, "replay_failed": 1, "trivially_passed": 2}  # the export's counts
    folder = generated_suite(tmp_path / "generated", counts)
    argument = folder if given == "folder" else folder / "manifest.json"
    out = tmp_path / "report"
    assert main(["--db", str(scripted_db), "--out", str(out), "--k", str(K), "--suite", str(argument)]) == 0
    assert_funnel(out, counts)
    assert "## Notes" not in (out / "report.md").read_text(encoding="utf-8")


def test_funnel_of_the_suite_a_run_names_and_a_note_once_it_is_gone(tmp_path: Path) -> None:
    folder = generated_suite(tmp_path / "generated")
    db = tmp_path / "mantra.duckdb"
    (run_id,) = run_scripted(db, str(folder), policies=("noop",), attempts=1, cases=("fig1-*",))
    out = tmp_path / "report"
    assert main(["--db", str(db), "--out", str(out), "--k", "1"]) == 0
    assert_funnel(out, GENERATION_COUNTS)

    shutil.rmtree(folder)
    again = tmp_path / "again"
    assert main(["--db", str(db), "--out", str(again), "--k", "1"]) == 0
    markdown = (again / "report.md").read_text(encoding="utf-8")
    assert not any(title in markdown for title in GENERATION_TITLES)
    assert not (again / "figures" / "validation_funnel.png").exists()
    note = f"Run(s) {run_id}: suite not found, so its size and generation records are unknown ({folder} is not a"
    assert note in markdown and note in (again / "report.html").read_text(encoding="utf-8")


def test_an_unreadable_suite_option_is_a_clear_error(
    scripted_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", str(scripted_db), "--out", str(tmp_path), "--suite", str(tmp_path / "nowhere")]) == 2
    assert "is not a suite folder, a manifest.json or a shipped suite name" in capsys.readouterr().err
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "manifest.json").write_text("{}")
    assert main(["--db", str(scripted_db), "--out", str(tmp_path), "--suite", str(tmp_path / "bad")]) == 2
    assert "bad/manifest.json: invalid manifest: name: Field required" in capsys.readouterr().err
