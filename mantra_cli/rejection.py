"""``mantra rejection-sample``: an SFT dataset by rejection sampling. It samples ``--k`` rollouts per case with a
model (``mantra run --attempts K``), keeps the episodes that pass (every check, and no unrequested write), adds
the oracle's SMT-proven compliant traces as demonstrations (unless ``--no-oracle``), and writes them in the OpenAI
tool-calling format (``mantra export --passed-only --include-oracle``), with the statistics beside the data
(``<out>.stats.json``): per case how many rollouts were sampled and kept. Its rollouts live in their own database
(``--db``, default ``results/rejection.duckdb``), one run per model and grader version, and ``--resume``-style reuse
makes a second call sample only what is missing (rollouts an older grader scored are sampled again)"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mantra_env.cli import command_parser, run_command
from mantra_env.errors import MantraError
from mantra_env.files import write_atomic
from mantra_env.graders.export import ORACLE_MODEL, ExportError, export_records
from mantra_env.grading import GRADER_VERSION
from mantra_env.mantra_cli.export import FORMATS, checked, print_older_passes, write_dataset, write_jsonl
from mantra_env.mantra_cli.run import main as run_main
from mantra_env.store.store import RolloutStore

DEFAULT_DB = "results/rejection.duckdb"
DEFAULT_OUT = {"openai-jsonl": "results/sft.jsonl", "hf-dataset": "results/sft-dataset"}


class RejectionError(MantraError):
    """A rejection-sampling run that cannot go on (what failed and how to fix it)."""


def run_name(model: str) -> str:
    """The run that holds ``model``'s rollouts in the rejection database: one per model and grader version,
    resumed (a run graded by an older grader cannot be resumed, and its passes are not kept: see
    :func:`mantra_env.graders.export.export_records`)."""
    return "rejection-" + re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-") + f"-grader{GRADER_VERSION}"


def statistics(db: str, kept: int, demonstrations: int) -> dict[str, Any]:
    """Per model and case: rollouts sampled (infrastructure errors apart) and passed (the combined verdict), over
    the runs graded by this mantra-env's grader version (those whose passes are kept); the totals kept."""
    with RolloutStore(db, read_only=True) as store:
        rows = store.query(
            "SELECT r.model, e.case_id, count(*) FILTER (WHERE e.status <> 'error'),"
            " count(*) FILTER (WHERE e.status = 'passed'), count(*) FILTER (WHERE e.status = 'error')"
            " FROM episodes e JOIN runs r USING (run_id) WHERE r.model NOT LIKE 'scripted:%'"
            " AND r.grader_version = ? GROUP BY 1, 2 ORDER BY 1, 2",
            [GRADER_VERSION],
        )
    models: dict[str, dict[str, Any]] = {}
    for model, case_id, sampled, passed, errors in rows:
        entry = models.setdefault(model, {"sampled": 0, "passed": 0, "errors": 0, "cases": {}})
        entry["cases"][case_id] = {"sampled": sampled, "passed": passed}
        entry["sampled"] += sampled
        entry["passed"] += passed
        entry["errors"] += errors
    for entry in models.values():
        entry["pass_rate"] = entry["passed"] / entry["sampled"] if entry["sampled"] else 0.0
        entry["cases_with_a_pass"] = sum(1 for case in entry["cases"].values() if case["passed"])
    return {"models": models, "kept_episodes": kept - demonstrations, "oracle_demonstrations": demonstrations}


def main(argv: Sequence[str] | None = None) -> int:
    parser = command_parser(
        "mantra_env.mantra_cli.rejection",
        __doc__,
        "--model qwen --suite operations --k 4           # results/sft.jsonl and results/sft.jsonl.stats.json",
        "--model local --k 2 --max-cycles 3 --out data/sft.jsonl",
    )
    parser.add_argument("--model", help="the model to sample (an alias or a litellm string; default: the agent role)")
    parser.add_argument("--suite", default="operations", help="suite name or folder (default: operations)")
    parser.add_argument("--k", type=int, default=4, help="rollouts per case (default 4)")
    parser.add_argument("--db", default=DEFAULT_DB, help=f"the rollouts' database (default {DEFAULT_DB})")
    parser.add_argument("--format", default="openai-jsonl", help=f"one of: {', '.join(FORMATS)}")
    parser.add_argument("--out", help="output file (openai-jsonl) or folder (hf-dataset); default under results/")
    parser.add_argument("--force", action="store_true", help="replace --out if it exists")
    parser.add_argument("--no-oracle", action="store_true", help="keep the model's passing rollouts only")
    parser.add_argument("--max-cycles", type=int, help="passed to mantra run (agent loop cycles per episode)")
    parser.add_argument("--concurrency", type=int, help="passed to mantra run")
    parser.add_argument("--cases", help="passed to mantra run (a case id pattern)")
    args = parser.parse_args(argv)

    def body() -> int:
        if args.format not in FORMATS:
            raise RejectionError(f"unknown --format {args.format!r}: use one of {', '.join(FORMATS)}")
        if args.k < 1:
            raise RejectionError(f"--k must be at least 1, got {args.k}")
        out = Path(args.out or DEFAULT_OUT[args.format])
        if out.exists() and not args.force:
            raise RejectionError(f"{out} exists: pass --force to replace it, or choose another --out")
        common = ["--suite", args.suite, "--db", args.db, "--resume"]
        for option, value in (("--max-cycles", args.max_cycles), ("--concurrency", args.concurrency)):
            if value is not None:
                common += [option, str(value)]
        if args.cases:
            common += ["--cases", args.cases]
        model = ["--model", args.model] if args.model else []
        name = run_name(args.model or "agent")
        print(f"sampling {args.k} rollouts per case ({name})", file=sys.stderr)
        if run_main([*model, "--attempts", str(args.k), "--run-name", name, *common]) == 2:
            raise RejectionError("the sampling run was refused (its error is above)")
        if not args.no_oracle:
            oracle = ["--model", ORACLE_MODEL, "--attempts", "1", "--run-name", run_name("oracle"), *common]
            if run_main(oracle) == 2:
                raise RejectionError("the oracle's run was refused (its error is above)")
        try:
            records = checked(list(export_records(args.db, passed_only=True, include_oracle=not args.no_oracle)))
        except ExportError as error:
            raise RejectionError(f"nothing to keep: {error}") from None
        (write_jsonl if args.format == "openai-jsonl" else write_dataset)(records, out)
        print_older_passes(args.db, include_oracle=not args.no_oracle)
        demonstrations = sum(record.demonstration for record in records)
        stats = statistics(args.db, len(records), demonstrations)
        stats_path = out.parent / f"{out.name}.stats.json"
        write_atomic(stats_path, json.dumps(stats, indent=2, sort_keys=True) + "\n")
        for model_name, entry in stats["models"].items():
            print(
                f"{model_name}: {entry['passed']}/{entry['sampled']} rollouts passed ({entry['pass_rate']:.0%}),"
                f" {entry['cases_with_a_pass']}/{len(entry['cases'])} cases with a pass"
            )
        print(f"{len(records)} episodes ({demonstrations} oracle demonstrations) -> {out}; statistics -> {stats_path}")
        return 0

    return run_command(body)


if __name__ == "__main__":
    sys.exit(main())
