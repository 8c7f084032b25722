import math

from mantra_env.graders.intervals import format_estimate
from mantra_env.graders.metrics import Estimate, pass_at_1_ci, pass_hat_k_ci, task_estimate


def test_every_case_passing_prints_a_wilson_bound_not_a_point() -> None:
    assert format_estimate(pass_at_1_ci([(1, 1)] * 80)) == "100.0 [95.4, 100.0] Wilson"


def test_a_bootstrap_interval_prints_as_low_high_never_plus_minus() -> None:
    estimate = task_estimate([0.0, 0.5, 0.5, 1.0, 0.25])
    shown = format_estimate(estimate)
    assert shown == f"{100 * estimate.value:.1f} [{100 * estimate.low:.1f}, {100 * estimate.high:.1f}]"
    assert "±" not in shown and "Wilson" not in shown


def test_left_out_tasks_are_named() -> None:
    assert format_estimate(pass_hat_k_ci([(3, 3), (2, 2), (3, 0)], 3)).endswith(", 2 of 3 tasks")


def test_no_task_with_enough_attempts_says_so() -> None:
    assert format_estimate(pass_hat_k_ci([(2, 1), (1, 1)], 3)) == "n/a (no task of 2 has 3 scored attempts)"
    assert format_estimate(pass_at_1_ci([(0, 0)])) == "n/a (no task of 1 has a scored attempt)"
    assert format_estimate(Estimate(math.nan, math.nan, math.nan)) == "n/a"


def test_differences_and_plain_numbers() -> None:
    difference = Estimate(0.125, -0.03, 0.25, tasks=4, of=4)
    assert format_estimate(difference, signed=True) == "+12.5 [-3.0, +25.0]"
    assert format_estimate(Estimate(3.5, 3.0, 4.25), scale=1, digits=2) == "3.50 [3.00, 4.25]"


def test_no_module_formats_an_interval_but_the_formatter() -> None:
    # Every estimate printed (run summary, report, viewer, notebooks, audits) reads its bounds through
    # format_estimate; a module that reads an Estimate's .low / .high itself formats its own interval.
    import ast
    import json

    from tests.import_arrows import ROOT, source_files

    allowed = {"mantra_env.graders.intervals", "mantra_env.graders.metrics"}  # the formatter and the estimators
    sources = [(name, path.read_text(encoding="utf-8")) for path, name in source_files() if name not in allowed]
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        python = [line for line in code.splitlines() if not line.startswith(("%", "!"))]  # no magics
        sources.append((notebook.name, "\n".join(python)))
    readers = sorted(
        f"{name}:{node.lineno}"
        for name, text in sources
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Attribute) and node.attr in ("low", "high")
    )
    assert not readers, f"format intervals with mantra_env.graders.intervals.format_estimate: {readers}"
    assert len(sources) > 100  # the scan sees the project
