"""The real workload: re-validate shipped cases as building or generating them did, solving cold.

Run: ``.venv/bin/python benchmarks/revalidate.py [--suite NAME|PATH ...] [--cases ID ...] [--jobs N]
[--memo DIR] [--json OUT]``. Each case goes through :func:`mantra_env.authoring.validate_case` (the forward query,
every backward audit with shortest witnesses, the compliant witness, each at the case's bound) with no memo unless
``--memo DIR`` is given (then a case solved before is read back). Prints, per suite and overall, the median, p90
and max seconds per case, the slowest ten with their breakdown (``build``: encoding and loading the formula;
``forward``/``backward``/``witness``: the queries' own solves; ``shortest``/``readable``/``canonical``: the
witness passes) and the total, each also at the 25 us reference machine (``time x 25 / calibration``).

The calibration (``sum(range(1000))`` in us, benchmarks/env.py's) is measured in each worker before its first case
and again every ``--calibrate-every`` cases, and each case is scaled by the latest one of its worker, so that a
machine that gets busier mid-run is accounted for. On a shared machine the worker gets a fraction of a core and
wall figures swing with the neighbours' load; the CPU seconds of the worker, scaled by the same loop timed in CPU
seconds (``cpu_calibration_us``), are the figures that stay comparable there. Targets (issue 32, at the
reference): median <= 0.3 s, p90 <= 3 s, no case over 60 s, everything <= 5 minutes on two cores.

``--canonical-lists``, ``--refuse-invented-ids``, ``--array-relevancy`` and ``--short-conflicts-first`` validate
every case in those solver modes (as a generation config's ``validation`` keys of the same names would have),
whatever its record says: what new suites will cost.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import timeit
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1]))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH")]))

from benchmarks.env import calibration
from mantra_env.authoring import DEFAULT_BOUND, validate_case, validation_record
from mantra_env.case import Case, SolverModes, modes_on
from mantra_env.domains import Domain, load_domain
from mantra_env.errors import MantraError
from mantra_env.generators.solver_memo import MemoEntry, SolverMemo
from mantra_env.mantra_cli.validate import judge, recheck, selected

REFERENCE_US = 25.0
SHIPPED = Path(__file__).parents[1] / "mantra_env" / "domains"
PHASES = ("build", "forward", "backward", "witness", "shortest", "readable", "canonical")


def shipped_suites() -> list[str]:
    """Every suite folder shipped with mantra-env."""
    return sorted(path.parent.as_posix() for path in SHIPPED.glob("*/suites/*/manifest.json"))


_state: dict[str, Any] = {"calibration": (0.0, 0.0), "since": 0}


def cpu_calibration() -> float:
    """Microseconds of CPU time of ``sum(range(1000))`` (best of 5 x 10,000): unlike the wall-clock calibration,
    not inflated by the other processes of a busy machine."""
    return min(timeit.repeat("sum(range(1000))", number=10_000, repeat=5, timer=time.process_time)) / 10_000 * 1e6


def _calibrated(every: int) -> tuple[float, float]:
    """This worker's latest wall and CPU calibrations, measured again every ``every`` cases."""
    if _state["since"] % every == 0:
        _state["calibration"] = (calibration(), cpu_calibration())
    _state["since"] += 1
    wall, cpu = _state["calibration"]
    return float(wall), float(cpu)


@cache
def _domain(name: str) -> Domain:
    return load_domain(name)


def _memo_arguments(case: Case, domain: Domain) -> dict[str, Any]:
    bound = case.validation.trace_bound or DEFAULT_BOUND
    checks = [check.model_dump(mode="json") for check in case.checks]
    tools = [tool.model_dump(mode="json") for tool in domain.tool_specs()]
    return {"model": case.world_model, "checks": checks, "bound": bound, "initial": case.scenario.valuation,
            "tools": tools, "query": "revalidate", **case.validation.solver_modes}  # fmt: skip


def in_modes(case: Case, modes: SolverModes) -> Case:
    """``case`` as if validated in ``modes`` too (the benchmark's ``--canonical-lists``, ``--refuse-invented-ids``,
    ``--array-relevancy``, ``--short-conflicts-first``)."""
    if not modes:
        return case
    return case.model_copy(update={"validation": case.validation.model_copy(update=dict(modes))})


def measure(suite: str, case: Case, every: int, memo: str | None, modes: SolverModes | None = None) -> dict[str, Any]:
    """One case's row: its verdict, wall and CPU seconds, the phase breakdown and the calibration beside it
    (``modes``: solver modes forced on, see the module docstring)."""
    case = in_modes(case, modes or SolverModes())
    domain = _domain(case.domain)
    calibration_us, cpu_calibration_us = _calibrated(every)
    timings: dict[str, float] = {}
    started, cpu = time.perf_counter(), time.process_time()
    store = SolverMemo(Path(memo)) if memo else None
    key = SolverMemo.key(_memo_arguments(case, domain)) if store is not None else ""
    entry = store.load(key) if store is not None else None
    bound = case.validation.trace_bound or DEFAULT_BOUND
    if entry is not None and entry.backward is not None and entry.witness is not None:
        record = validation_record(bound, entry.forward, entry.backward, entry.witness, case.validation.solver_modes)
        outcome = judge(suite, case, record, [entry.forward, *entry.backward, entry.witness])
    elif store is None:
        outcome = recheck(suite, case, domain, timings)
    else:
        try:
            record, results = validate_case(case, domain.tool_specs(), bound, timings)
        except MantraError:
            outcome = recheck(suite, case, domain, timings)  # says why; nothing to store
        else:
            store.save(key, MemoEntry(forward=results[0], backward=results[1:-1], witness=results[-1]))
            outcome = judge(suite, case, record, results)
    return {
        "suite": suite,
        "case": case.id,
        "verdict": outcome.verdict,
        "bound": outcome.bound,
        "seconds": time.perf_counter() - started,
        "cpu_seconds": time.process_time() - cpu,
        "phases": {phase: timings.get(phase, 0.0) for phase in PHASES},
        "calibration_us": calibration_us,
        "cpu_calibration_us": cpu_calibration_us,
        "memo": entry is not None,
        "why": outcome.why,
        **({"modes": sorted(case.validation.solver_modes)} if case.validation.solver_modes else {}),
    }


def scaled(row: dict[str, Any], cpu: bool = False) -> float:
    """The case's wall (or CPU) seconds at the reference machine, by the wall (or CPU) calibration beside it."""
    if cpu:
        return float(row["cpu_seconds"]) * REFERENCE_US / float(row["cpu_calibration_us"])
    return float(row["seconds"]) * REFERENCE_US / float(row["calibration_us"])


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile (p90 of 10 values is the 9th)."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, int(-(-fraction * len(ordered) // 1)) - 1))]


def distribution(label: str, rows: Sequence[dict[str, Any]]) -> str:
    seconds = [float(row["seconds"]) for row in rows]
    reference = [scaled(row) for row in rows]

    def figures(values: Sequence[float]) -> str:
        return (
            f"median {statistics.median(values):.2f} s, p90 {percentile(values, 0.9):.2f} s, "
            f"max {max(values):.2f} s, total {sum(values):,.1f} s"
        )

    cpu = [float(row["cpu_seconds"]) for row in rows]
    cpu_reference = [scaled(row, cpu=True) for row in rows if "cpu_calibration_us" in row]
    return (
        f"{label} ({len(rows)} cases): {figures(seconds)}\n  at the {REFERENCE_US:g} us reference: {figures(reference)}"
        f"\n  CPU seconds of the worker: {figures(cpu)}"
        + (f"\n  CPU seconds at the reference: {figures(cpu_reference)}" if len(cpu_reference) == len(rows) else "")
    )


def dominant(row: dict[str, Any]) -> str:
    phases = sorted(row["phases"].items(), key=lambda item: -item[1])
    return ", ".join(f"{name} {seconds:.1f}" for name, seconds in phases if seconds >= 0.05) or "-"


def report(rows: Sequence[dict[str, Any]], wall: float | None, jobs: int) -> str:
    lines = []
    for field, kind in (("calibration_us", ""), ("cpu_calibration_us", "CPU ")):
        calibrations = [float(row[field]) for row in rows if field in row]
        if calibrations:
            lines.append(
                f"calibration: sum(range(1000)) takes {min(calibrations):.2f}-{max(calibrations):.2f} us {kind}"
                f"(median {statistics.median(calibrations):.2f}) over the run"
            )
    for suite in sorted({row["suite"] for row in rows}):
        lines.append(distribution(suite, [row for row in rows if row["suite"] == suite]))
    lines.append(distribution("overall", rows))
    lines.append("slowest ten (wall seconds; at the reference; CPU seconds; where the wall time went):")
    for row in sorted(rows, key=lambda row: -float(row["seconds"]))[:10]:
        lines.append(
            f"  {row['seconds']:8.1f} s {scaled(row):8.1f} s {row['cpu_seconds']:8.1f} s  {row['suite']} {row['case']} "
            f"(h={row['bound']}, {row['verdict']}): {dominant(row)}"
        )
    verdicts = {
        verdict: sum(row["verdict"] == verdict for row in rows) for verdict in sorted({r["verdict"] for r in rows})
    }
    lines.append(f"verdicts: {', '.join(f'{count} {verdict}' for verdict, count in verdicts.items())}")
    if wall is not None:
        lines.append(f"wall time: {wall:,.1f} s with {jobs} job(s)")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", action="append", metavar="NAME|PATH", help="a suite (default: every shipped one)")
    parser.add_argument("--cases", nargs="+", default=[], metavar="ID", help="only these case ids")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--memo", metavar="DIR", help="read and write solved cases here (default: solve cold)")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write the per-case rows here (JSON lines)")
    parser.add_argument(
        "--from-json", nargs="+", type=Path, metavar="ROWS", help="only print the report of rows written by --json"
    )
    parser.add_argument("--calibrate-every", type=int, default=10, metavar="N", help="cases between calibrations")
    parser.add_argument(
        "--canonical-lists", action="store_true", help="validate every case with canonical list order (config key)"
    )
    parser.add_argument(
        "--refuse-invented-ids", action="store_true", help="validate every case refusing invented ids (config key)"
    )
    parser.add_argument(
        "--array-relevancy",
        action="store_true",
        help="validate every case with relevancy filtering where the world model writes arrays (config key)",
    )
    parser.add_argument(
        "--short-conflicts-first",
        action="store_true",
        help="validate every case looking for conflicts among short traces first (config key)",
    )
    args = parser.parse_args(argv)
    modes = modes_on(
        refuse_invented_ids=args.refuse_invented_ids,
        canonical_lists=args.canonical_lists,
        array_relevancy=args.array_relevancy,
        short_conflicts_first=args.short_conflicts_first,
    )
    rows: list[dict[str, Any]] = []
    if args.from_json:
        rows = [json.loads(line) for path in args.from_json for line in path.read_text(encoding="utf-8").splitlines()]
        print(report(rows, None, args.jobs) if rows else "no rows")
        return 0
    chosen = selected(args.suite or shipped_suites(), args.cases)
    every = max(1, args.calibrate_every)
    out = args.json.open("w", encoding="utf-8") if args.json else None
    started = time.perf_counter()
    print(
        f"calibration: sum(range(1000)) takes {calibration():.2f} us, {cpu_calibration():.2f} us CPU (before the run)",
        flush=True,
    )
    if modes:
        print(f"solver modes forced on: {', '.join(sorted(modes))}", flush=True)

    def keep(row: dict[str, Any]) -> None:
        rows.append(row)
        print(
            f"{len(rows)}/{len(chosen)} {row['suite']} {row['case']}: {row['seconds']:.2f} s ({scaled(row):.2f} s at "
            f"the reference; calibration {row['calibration_us']:.2f} us) {row['verdict']}",
            flush=True,
        )
        if out is not None:
            out.write(json.dumps(row) + "\n")
            out.flush()

    try:
        if args.jobs <= 1:
            for suite, _, case in chosen:
                keep(measure(suite, case, every, args.memo, modes))
        else:
            with ProcessPoolExecutor(args.jobs) as pool:
                futures = [pool.submit(measure, suite, case, every, args.memo, modes) for suite, _, case in chosen]
                for future in futures:
                    keep(future.result())
    finally:
        if out is not None:
            out.close()
    print(report(rows, time.perf_counter() - started, args.jobs))
    print(f"calibration: sum(range(1000)) takes {calibration():.2f} us, {cpu_calibration():.2f} us CPU (after the run)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
