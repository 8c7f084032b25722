"""``mantra VERB [ARGS...]``: one command for mantra-env.

Each verb runs an existing entry point's ``main(argv)`` with the rest of the command line, so
``mantra run --model scripted:oracle`` is ``python -m mantra_env.run --model scripted:oracle`` (same options,
output and exit code; ``--help`` names the program ``mantra run``). Modules are imported only for the verb run.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from importlib import metadata
from typing import NamedTuple

from mantra_env.cli import invoked_as
from mantra_env.errors import did_you_mean


class Verb(NamedTuple):
    module: str
    """The module whose ``main(argv) -> int`` the verb runs."""
    summary: str


VERBS: dict[str, Verb] = {
    "run": Verb("mantra_env.run", "run an agent on a suite; every episode is stored in DuckDB"),
    "report": Verb(
        "mantra_env.graders.report", "write the leaderboard report (Markdown, HTML, figures) of stored runs"
    ),
    "generate": Verb(
        "mantra_env.mantra_cli.generate", "generate a validated suite from a manual and its tools (the pipeline)"
    ),
    "export": Verb(
        "mantra_env.mantra_cli.export",
        "export stored episodes as training data (OpenAI tool-calling JSONL, HF dataset)",
    ),
    "rejection-sample": Verb(
        "mantra_env.mantra_cli.rejection",
        "sample k rollouts per case, keep the passing ones and the oracle's: an SFT dataset",
    ),
    "author": Verb("mantra_env.authoring", "build suites from hand-written YAML sources, validated by the solver"),
    "audit": Verb(
        "mantra_env.mantra_cli.audit", "a suite's refusal share, floor baselines, checks per case and mutation scores"
    ),
    "validate": Verb(
        "mantra_env.mantra_cli.validate", "re-check a suite's cases with the solver: still valid, unknown or broken"
    ),
    "view": Verb("mantra_env.viewer.__main__", "browse stored runs and episodes in a web browser (read-only)"),
    "review": Verb(
        "mantra_env.generators.review.__main__", "review a generation run's cases in a web browser (edit, accept)"
    ),
    "exchange": Verb(
        "mantra_env.mantra_cli.exchange", "answer a run's requests by hand: check an answer, list pending, restore"
    ),
    "suites": Verb(
        "mantra_env.mantra_cli.suites", "list the shipped suites per domain with case counts and gymnasium ids"
    ),
    "schemas": Verb("mantra_env.schemas.__main__", "export or check the versioned JSON schemas of the records"),
    "domains": Verb("mantra_env.domains.__main__", "export or check each domain's tool schemas (tools.json)"),
}

EXAMPLES = (
    "mantra run --model scripted:oracle           # the SMT-proven plans on the operations starter suite",
    "mantra run --model qwen --attempts 5         # a model alias from agents/models.yaml",
    "mantra report --db results/mantra.duckdb     # results/report/report.md and .html",
    "mantra suites                                # what --suite accepts",
)


def usage() -> str:
    """The text of ``mantra --help``."""
    width = max(map(len, VERBS))
    verbs = "\n".join(f"  {name:<{width}}  {verb.summary}" for name, verb in VERBS.items())
    examples = "\n".join(f"  {line}" for line in EXAMPLES)
    return (
        "usage: mantra [--help | --version] VERB [ARGS...]\n\n"
        "Turn procedural manuals into compliance benchmarks for tool-using agents, and run agents on them.\n\n"
        f"verbs:\n{verbs}\n\n`mantra VERB --help` shows a verb's options and examples.\n\nexamples:\n{examples}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``mantra`` with ``argv`` (default: the process's arguments); returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(usage(), file=sys.stdout if args else sys.stderr)
        return 0 if args else 2
    if args[0] == "--version":
        print(f"mantra {metadata.version('mantra-env')}")
        return 0
    name, rest = args[0], args[1:]
    if name not in VERBS:
        hint = did_you_mean(name, VERBS) or f"the verbs: {', '.join(VERBS)}"
        print(f"mantra: unknown verb {name!r}; {hint} (see `mantra --help`)", file=sys.stderr)
        return 2
    entry = importlib.import_module(VERBS[name].module).main
    with invoked_as(f"mantra {name}"):
        try:
            return int(entry(rest))
        except SystemExit as exit:  # argparse's --help and usage errors; a module that exits instead of returning
            return _exit_code(exit.code)


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message") prints the message and exits with 1
    return 1
