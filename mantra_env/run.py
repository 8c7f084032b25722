"""``python -m mantra_env.run``: the main job.

The agent runner (``--model``, ``--suite``, attempts, DuckDB rollouts) is being built; until it lands this
command runs the part that exists end to end: it parses the checks of the paper's running example (Fig. 1),
grades a compliant and a non-compliant trace of each case with the deterministic grader, and prints the
verdicts with their failure categories and evidence.
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import resources

from graders import grade
from mantra_env.checks import parse_check
from mantra_env.errors import MantraError
from mantra_env.trace import Trace


def run_example() -> int:
    """Grade the bundled Fig. 1 example traces; returns the number of (case, trace) pairs graded."""
    data = json.loads(resources.files("mantra_env.examples").joinpath("fig1.json").read_text(encoding="utf-8"))
    print(data["description"])
    graded = 0
    for case in data["cases"]:
        checks = [parse_check(text) for text in case["checks"]]
        for label, calls in case["traces"].items():
            verdict = grade(Trace.of(*(tuple(call) for call in calls)), checks)
            print(
                f"\n{case['id']} / {label}: {'PASS' if verdict.passed else 'FAIL'} "
                f"({verdict.passed_count}/{len(verdict.checks)} checks)"
            )
            for check in verdict.checks:
                status = "pass" if check.passed else f"FAIL [{check.category}]"
                print(f"  {status:<32} {check.check}")
                if not check.passed:
                    print(f"  {'':<32} -> {check.evidence.explanation}")
            graded += 1
    return graded


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mantra_env.run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.parse_args(argv)
    print(
        "mantra-env: the agent runner is not built yet; running the deterministic grader on the paper's "
        "running example instead.\n"
    )
    try:
        graded = run_example()
    except MantraError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"\ngraded {graded} traces")
    return 0


if __name__ == "__main__":
    sys.exit(main())
