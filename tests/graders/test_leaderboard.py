"""Leaderboard rows per model and suite: pooling only on equal suite hash and settings, run ids, partial runs,
the paired test between two *different* models, ties, tokens and cost, and tool attribution from the check AST."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pytest

from mantra_env.errors import MantraError
from mantra_env.graders.analysis import UNREADABLE_CHECK, failed_tool, summarize_runs
from mantra_env.graders.leaderboard import (
    behaviour_table,
    comparisons,
    curves,
    domain_table,
    leaderboard,
    leaderboard_columns,
    leaderboard_table,
    overall_rows,
    overall_table,
)
from mantra_env.graders.metrics import compare_paired, pass_at_1
from mantra_env.grading import GRADER_VERSION
from mantra_env.store import RolloutStore, RunRecord, Usage

from .test_analysis import FORBIDDEN, GOOD, WRITE_FIRST, episode

SETTINGS = {"attempts": 2, "seed": 0, "max_steps": 30}


def add_run(
    store: RolloutStore,
    run: str,
    model: str,
    plan: Mapping[str, Sequence[list[str] | None]],
    suite: str = "ops/main",
    suite_hash: str | None = "h1",
    settings: dict[str, object] | None = None,
    grader_version: int = GRADER_VERSION,
) -> None:
    """A run of ``model`` whose case ``c`` has attempts ``plan[c]`` (tool sequences; None: an infrastructure
    error)."""
    stored = dict(SETTINGS if settings is None else settings)
    store.start_run(RunRecord(run_id=run, suite=suite, model=model, agent="a", suite_hash=suite_hash,
                              settings=stored, grader_version=grader_version))  # type: ignore[arg-type]  # fmt: skip
    for case, attempts in plan.items():
        for attempt, tools in enumerate(attempts):
            store.record_episode(episode(case, attempt, tools, run=run))


@pytest.fixture
def store() -> RolloutStore:
    return RolloutStore(":memory:")


def table_rows(
    store: RolloutStore, runs: list[str], cases: dict[str, int | None] | None = None
) -> list[dict[str, str]]:
    """Every column of the rows: the scores table and the behaviour table side by side (same rows, same order)."""
    rows = leaderboard(store, runs, 2, cases or {})
    scores, behaviour = leaderboard_table(rows, 2), behaviour_table(rows)
    assert [row[:2] for row in scores.rows] == [row[:2] for row in behaviour.rows]  # model, suite
    assert [c.label for c in leaderboard_columns(2)] == scores.header + behaviour.header[2:]
    return [
        dict(zip(scores.header + behaviour.header, a + b, strict=True))
        for a, b in zip(scores.rows, behaviour.rows, strict=True)
    ]


def test_runs_with_equal_hash_and_settings_are_one_row_with_both_run_ids(store: RolloutStore) -> None:
    add_run(store, "r1", "m", {"A": [GOOD, GOOD], "B": [GOOD, WRITE_FIRST]})
    add_run(store, "r2", "m", {"C": [FORBIDDEN, GOOD]}, settings={"max_steps": 30, "seed": 0, "attempts": 2})
    (row,) = table_rows(store, ["r1", "r2"], {"r1": 4, "r2": 4})
    assert (row["model"], row["suite"], row["runs"]) == ("m", "ops/main", "r1, r2")
    assert row["cases run / in suite"] == "3 / 4 (partial)"
    expected = pass_at_1([(2, 2), (2, 1), (2, 1)])
    assert row["Pass@1 (%)"].startswith(f"{100 * expected:.1f} [")
    assert row["attempts"] == "6"


@pytest.mark.parametrize(
    ("second_hash", "second_settings"),
    [("h2", SETTINGS), ("h1", {**SETTINGS, "seed": 1}), (None, {})],  # None: a run stored before schema 3
    ids=["other suite content", "other settings", "unrecorded"],
)
def test_runs_that_differ_in_hash_or_settings_are_separate_rows(
    store: RolloutStore, second_hash: str | None, second_settings: dict[str, object]
) -> None:
    add_run(store, "r1", "m", {"A": [GOOD, GOOD], "B": [GOOD, GOOD]})
    add_run(store, "r2", "m", {"A": [FORBIDDEN, FORBIDDEN], "B": [GOOD, GOOD]}, suite_hash=second_hash,
            settings=second_settings)  # fmt: skip
    rows = table_rows(store, ["r1", "r2"], {"r1": 2, "r2": 2})
    assert [(r["runs"], r["cases run / in suite"], r["Pass@1 (%)"][:5]) for r in rows] == [
        ("r1", "2 / 2", "100.0"),
        ("r2", "2 / 2", "50.0 "),
    ]


def test_unknown_suite_size_is_shown_as_such(store: RolloutStore) -> None:
    add_run(store, "r1", "m", {"A": [GOOD, GOOD]})
    assert table_rows(store, ["r1"])[0]["cases run / in suite"] == "1 / ?"


def test_paired_test_never_pairs_a_model_with_itself(store: RolloutStore) -> None:
    # m has two rows at the top (different settings); the test pairs its best row with n, the best other model.
    add_run(store, "m1", "m", {"A": [GOOD, GOOD], "B": [GOOD, GOOD]})
    add_run(store, "m2", "m", {"A": [GOOD, GOOD], "B": [GOOD, FORBIDDEN]}, settings={**SETTINGS, "seed": 7})
    add_run(store, "n1", "n", {"A": [FORBIDDEN, GOOD], "B": [FORBIDDEN, FORBIDDEN]})
    rows = leaderboard(store, ["m1", "m2", "n1"], 2, {})
    assert [r.summary.run_id for r in rows] == ["m1", "m2", "n1"]
    (found,) = comparisons(rows)
    assert (found.first.summary.run_id, found.second.summary.run_id) == ("m1", "n1")
    assert found.result == compare_paired([(2, 2), (2, 2)], [(2, 1), (2, 0)])
    assert not found.tie


def test_a_suite_with_one_model_has_no_paired_test(store: RolloutStore) -> None:
    add_run(store, "m1", "m", {"A": [GOOD, GOOD]})
    add_run(store, "m2", "m", {"A": [GOOD, FORBIDDEN]}, suite_hash="h2")
    assert comparisons(leaderboard(store, ["m1", "m2"], 2, {})) == []


def test_equal_pass_at_1_is_stated_as_a_tie(store: RolloutStore) -> None:
    add_run(store, "z", "zeta", {"A": [GOOD, FORBIDDEN], "B": [GOOD, GOOD]})
    add_run(store, "a", "alpha", {"A": [GOOD, GOOD], "B": [FORBIDDEN, GOOD]})
    (found,) = comparisons(leaderboard(store, ["z", "a"], 2, {}))
    assert found.tie and found.verdict.startswith("tie")
    assert (found.first.summary.model, found.second.summary.model) == ("alpha", "zeta")  # alphabetical


def test_tokens_and_cost_per_episode_or_n_a(store: RolloutStore) -> None:
    add_run(store, "r1", "m", {"A": [GOOD, GOOD]})  # the helper's episodes used 100 + 10 tokens
    add_run(store, "s1", "scripted", {})
    for attempt in range(2):  # no usage recorded, as for a scripted agent
        store.record_episode(episode("A", attempt, GOOD, run="s1").model_copy(update={"usage": Usage()}))
    with_price = summarize_runs(store, ["r1"], 2, {"m": (3.0, 15.0)})
    assert with_price.mean_tokens == 110
    assert with_price.mean_cost == pytest.approx((100 * 3.0 + 10 * 15.0) / 1e6)
    assert math.isnan(summarize_runs(store, ["r1"], 2).mean_cost)  # no price given
    rows = {r["model"]: r for r in table_rows(store, ["r1", "s1"])}
    assert (rows["m"]["tokens / episode"], rows["m"]["cost / episode ($)"]) == ("110", "n/a")
    assert (rows["scripted"]["tokens / episode"], rows["scripted"]["cost / episode ($)"]) == ("n/a", "n/a")
    priced = behaviour_table(leaderboard(store, ["r1"], 2, {}, {"m": (3.0, 15.0)}))
    assert priced.rows[0][priced.header.index("cost / episode ($)")] == "0.0004"


def test_pass_hat_k_curve_and_domain_view(store: RolloutStore) -> None:
    add_run(store, "r1", "m", {"A": [GOOD, GOOD], "B": [GOOD, FORBIDDEN]})
    add_run(store, "r2", "m", {"C": [GOOD, GOOD]}, suite="ops/other", suite_hash="h9")
    add_run(store, "r3", "m", {"D": [FORBIDDEN, GOOD]}, suite="shop/main")
    rows = leaderboard(store, ["r1", "r2", "r3"], 2, {})
    found = curves(rows)
    assert found["Pass^k"]["m @ ops/main"] == [0.75, 0.5]
    assert found["Pass@k"]["m @ ops/main"] == [0.75, 1.0]
    table = domain_table(rows)
    assert table.header == ["model", "ops", "shop"]
    ops = pass_at_1([(2, 2), (2, 1), (2, 2)])  # the cases of both ops suites
    assert table.rows[0][1].startswith(f"{100 * ops:.1f} [") and table.rows[0][1].endswith("(3 cases)")
    assert table.rows[0][2].startswith("50.0 [")
    hat = domain_table(rows, 2)
    assert hat.title == "Pass^2 (%) by domain" and hat.header == ["model", "ops", "shop"]
    assert hat.rows[0][1].startswith(f"{100 * (1 + 0 + 1) / 3:.1f} [")  # A and C always pass, B once in two
    assert hat.rows[0][2].startswith("0.0 [0.0, ") and "Wilson" in hat.rows[0][2]


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("CALL check_inventory()", "check_inventory"),
        ("NO-CALL create_po(amount=5)", "create_po"),
        ("CALL check_inventory() PRECEDES CALL assign_picker()", "check_inventory"),
        ("NO-CALL create_po() AFTER CALL approve()", "create_po"),
        ("CALL a() OR CALL b()", "a"),
        ("CALL (", UNREADABLE_CHECK),
    ],
)
def test_the_tool_of_a_failed_check_comes_from_its_ast(text: str, tool: str) -> None:
    assert failed_tool(text) == tool


@pytest.mark.parametrize(
    ("text", "category", "tool"),
    [
        ("CALL check_inventory() PRECEDES CALL assign_picker()", "missing_required_call", "check_inventory"),
        ("CALL check_inventory() PRECEDES CALL assign_picker()", "missing_anchor", "assign_picker"),
        ("CALL check_inventory() PRECEDES CALL assign_picker()", "ordering_violation", "assign_picker"),
        ("CALL assign_picker() FOLLOWS CALL check_inventory()", "ordering_violation", "assign_picker"),
        ("CALL refund() AFTER CALL verify()", "missing_anchor", "verify"),
        ("NO-CALL create_po() BEFORE CALL approve()", "forbidden_call", "create_po"),
        ("CALL a() OR CALL b()", "or_all_branches_failed", "a"),
        ("CALL a() AFTER CALL b()", "a_category_from_elsewhere", "a"),
    ],
)
def test_a_failure_is_charged_to_the_tool_its_category_names(text: str, category: str, tool: str) -> None:
    assert failed_tool(text, category) == tool


def test_a_second_place_shared_by_several_models_is_stated(store: RolloutStore) -> None:
    add_run(store, "top", "top", {"A": [GOOD, GOOD]})
    for model in ("c", "b", "a"):
        add_run(store, model, model, {"A": [GOOD, FORBIDDEN]})
    (found,) = comparisons(leaderboard(store, ["top", "c", "b", "a"], 2, {}))
    assert (found.second.summary.model, found.tied_with_second) == ("a", ("b", "c"))
    assert found.verdict.endswith("; tied with second: b, c") and not found.tie


def test_runs_graded_by_different_grader_versions_are_never_pooled(store: RolloutStore) -> None:
    """Issue 31: a run graded on the checks alone (stored before unrequested writes counted) is a row of its own,
    says so, and is neither pooled nor paired with one graded for writes."""
    add_run(store, "new", "m", {"A": [GOOD, GOOD], "B": [GOOD, GOOD]})
    add_run(store, "old", "m", {"A": [GOOD, GOOD], "B": [GOOD, FORBIDDEN]}, grader_version=1)
    add_run(store, "other", "n", {"A": [GOOD, GOOD], "B": [GOOD, GOOD]}, grader_version=1)
    rows = table_rows(store, ["new", "old", "other"])
    assert [(r["runs"], r["grader"], r["unrequested write (%)"]) for r in rows] == [
        ("new", f"{GRADER_VERSION} (no oracle plans: checks only)", "not graded for writes"),
        ("other", "1 (checks only: not graded for writes)", "not graded for writes"),
        ("old", "1 (checks only: not graded for writes)", "not graded for writes"),
    ]
    with pytest.raises(MantraError, match=r"graded by different grader versions \(1, 2\) and cannot be pooled"):
        summarize_runs(store, ["new", "old"], 2)
    assert comparisons(leaderboard(store, ["new", "old", "other"], 2, {})) == []  # n (grader 1) is not m's rival
    table = domain_table(leaderboard(store, ["new", "old", "other"], 2, {}))
    assert [row[0] for row in table.rows] == ["m", "m (grader 1)", "n (grader 1)"]


def test_the_overall_row_is_the_macro_mean_on_tasks_every_model_scored_k_times(store: RolloutStore) -> None:
    """Issue 34, point 10: one row per model over the suites it ran; n/a (with the suites it missed) unless it ran
    every compared suite; only tasks that every model of the suite scored at least k times count."""
    add_run(store, "a1", "a", {"A": [GOOD, GOOD], "B": [GOOD, None]})  # B: one infrastructure error
    add_run(store, "a2", "a", {"C": [GOOD, FORBIDDEN]}, suite="shop/main", suite_hash="h2")
    add_run(store, "b1", "b", {"A": [GOOD, FORBIDDEN], "B": [FORBIDDEN, FORBIDDEN]})
    add_run(store, "b2", "b", {"C": [FORBIDDEN, FORBIDDEN]}, suite="shop/main", suite_hash="h2")
    add_run(store, "c1", "c", {"A": [GOOD, GOOD], "B": [GOOD, GOOD]})  # ran only ops/main
    rows = overall_rows(leaderboard(store, ["a1", "a2", "b1", "b2", "c1"], 2, {}), 2)
    by_model = {row.model: row for row in rows}
    assert sorted(by_model) == ["a", "b", "c"]
    a, b, c = by_model["a"], by_model["b"], by_model["c"]
    assert a.suites == ("ops/main", "shop/main") and a.missing == ()
    # ops/main: only A counts (a scored B once); shop/main: C. Macro mean of the suites' means:
    assert a.pass_at_1.value == pytest.approx((1.0 + 0.5) / 2)
    assert a.pass_hat_k.value == pytest.approx((1.0 + 0.0) / 2)
    assert b.pass_at_1.value == pytest.approx((0.5 + 0.0) / 2)
    assert (a.pass_at_1.tasks, a.pass_at_1.of) == (2, 3)  # A and C of A, B and C
    assert c.missing == ("shop/main",) and math.isnan(c.pass_at_1.value)
    table = overall_table(rows, 2)
    assert table.header == ["model", "suites run", "suites not run (n/a)", "Pass@1 (%)", "Pass@2 (%)", "Pass^2 (%)"]
    assert table.rows[2][:4] == ["c", "ops/main", "shop/main", "n/a"]
    assert table.rows[0][3].startswith("75.0 [") and table.rows[0][3].endswith(", 2 of 3 tasks")


def test_the_paired_test_uses_only_tasks_scored_k_times_by_both_models(store: RolloutStore) -> None:
    add_run(store, "a", "a", {"A": [GOOD, GOOD], "B": [GOOD, None], "C": [GOOD, GOOD]})
    add_run(store, "b", "b", {"A": [FORBIDDEN, FORBIDDEN], "B": [FORBIDDEN, FORBIDDEN], "C": [GOOD, FORBIDDEN]})
    (found,) = comparisons(leaderboard(store, ["a", "b"], 2, {}))
    assert found.result.tasks == 2  # A and C; B has one scored attempt for a
    assert found.result == compare_paired([(2, 2), (2, 2)], [(2, 0), (2, 1)])
