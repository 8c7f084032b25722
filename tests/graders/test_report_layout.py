"""The report at scale fits a 1280 px page: four models with long names on four suites of two domains, one case
with an errored attempt. Checked in Chromium (no table wider than the page, no horizontal scroll) and, without a
browser, by the tables' column counts; the Pass@k figure has one column of panels per domain."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.pyplot as plt
import pytest

from mantra_env.graders import figures
from mantra_env.graders.leaderboard import curve_domains
from mantra_env.graders.report import Report, build_report, main
from mantra_env.store import RolloutStore
from tests.browser import browser, page, screenshot  # noqa: F401 - fixtures

from .test_analysis import FORBIDDEN, GOOD, WRITE_FIRST
from .test_leaderboard import add_run

MODELS = ("openai/gpt-4o-mini-2024-07-18", "anthropic/claude-3-5-sonnet-20241022", "ollama/qwen2.5:7b-instruct",
          "scripted:oracle")  # fmt: skip
SUITES = ("retail/generated", "retail/hand-written", "airline/generated", "airline/hand-written")
PLANS = (GOOD, WRITE_FIRST, FORBIDDEN)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("scale") / "m.duckdb"
    with RolloutStore(path) as store:
        for m, model in enumerate(MODELS):
            for s, suite in enumerate(SUITES):
                run = f"{suite.replace('/', '-')}-{model.replace('/', '_')}-20261129T060000"
                plan: dict[str, list[list[str] | None]] = {
                    f"case-{c}": [PLANS[(m + s + c + a) % 3] if m < 3 else GOOD for a in range(3)] for c in range(6)
                }
                if (m, s) == (0, 0):
                    plan["case-0"][2] = None  # an infrastructure error
                add_run(store, run, model, plan, suite=suite, settings={"attempts": 3})
    return path


@pytest.fixture(scope="module")
def report(db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    assert main(["--db", str(db), "--out", str(out)]) == 0  # k from the runs: 3
    return out / "report.html"


@pytest.fixture(scope="module")
def built(db: Path) -> Report:
    with RolloutStore(db, read_only=True) as store:
        return build_report(store)  # the shipped retail and airline suites' Table 2 rows take seconds


@pytest.mark.slow
def test_no_table_is_wider_than_twelve_columns_and_the_overall_row_has_every_model(built: Report) -> None:
    found = built
    assert found.k == 3  # the runs' --attempts
    tables = found.tables()
    widest = max(tables, key=lambda table: len(table.header))
    assert len(widest.header) <= 12, widest.title  # the 17-column leaderboard and 16-column Table 2 are split
    overall = tables[0]
    assert overall.title.startswith("Overall per model") and [row[0] for row in overall.rows] == sorted(MODELS)
    assert {row[2] for row in overall.rows} == {"none"}  # every model ran every suite
    # the errored attempt leaves case-0 of retail/generated with 2 scored attempts: out of Pass^3 for every model
    assert all(row[-1].endswith(", 23 of 24 tasks") for row in overall.rows)


@pytest.mark.slow
def test_the_pass_at_k_figure_has_a_column_of_panels_per_domain(built: Report) -> None:
    matplotlib.use("Agg")
    found = built
    figure = figures.pass_at_k_curves(found.curves, curve_domains(found.rows))
    titles = [axes.get_title() for axes in figure.axes]
    assert titles == ["airline: Pass@k (any of k)", "retail: Pass@k (any of k)",
                      "airline: Pass^k (all k attempts pass)", "retail: Pass^k (all k attempts pass)"]  # fmt: skip
    for axes in figure.axes:  # each panel draws its own domain's rows only: 4 models x 2 suites
        domain = axes.get_title().partition(":")[0]
        labels = [line.get_label() for line in axes.lines]
        assert len(labels) == 8 and all(f"@ {domain}/" in label for label in labels)
    plt.close(figure)


@pytest.mark.browser
@pytest.mark.slow
def test_the_report_fits_a_1280_px_page(report: Path, page: Any) -> None:  # noqa: F811
    page.goto(report.as_uri())
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    overflowing = page.evaluate(
        "[...document.querySelectorAll('div.table')].filter(d => d.scrollWidth > d.clientWidth + 1)"
        ".map(d => d.previousElementSibling.textContent)"
    )
    assert overflowing == []
    assert page.locator("h2", has_text="Pass^3 (%) by domain").count() == 1
    screenshot(page, "report-1280")
