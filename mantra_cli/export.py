"""``mantra export``: stored episodes as training data in the OpenAI tool-calling format, one record per episode
(system prompt, tool schemas, messages with ``tool_calls`` / ``tool_call_id``, reward, status and verdict, the
unrequested writes, grader version, suite, suite hash, case id, model, run id). Models' episodes are exported; the
oracle's SMT-proven compliant episodes with --include-oracle (as demonstrations, with synthesized assistant tool
calls); other scripted baselines and infrastructure errors never. --passed-only keeps the episodes that pass the
combined verdict (every check and no unrequested write). openai-jsonl writes one JSON object per line; hf-dataset
writes a folder that ``datasets.load_from_disk`` reads (``tools``, ``verdict`` and ``unrequested_writes`` as JSON
text there; needs the ``[rl]`` extra). Tool-call arguments are JSON objects, as open models' chat templates
(Qwen, Llama) expect; --arguments json-text writes them as JSON text, the OpenAI API's convention (the
hf-dataset always holds JSON text: Arrow would fill each arguments object with the other calls' keys as nulls)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mantra_env.cli import command_parser, run_command
from mantra_env.graders.export import (
    ARGUMENTS_FORMATS,
    ExportError,
    ExportRecord,
    export_records,
    message_problems,
    older_grader_passes,
)
from mantra_env.store.store import DEFAULT_DB

FORMATS = ("openai-jsonl", "hf-dataset")
DEFAULT_OUT = {"openai-jsonl": "results/export.jsonl", "hf-dataset": "results/export-dataset"}


def checked(records: list[ExportRecord]) -> list[ExportRecord]:
    """``records``, each of whose messages passes :func:`~mantra_env.graders.export.message_problems`."""
    for record in records:
        problems = message_problems(record.messages)
        if problems:
            where = f"run {record.run_id}, case {record.case_id}, attempt {record.attempt}"
            raise ExportError(f"{where}: malformed conversation: {'; '.join(problems[:3])}")
    return records


def write_jsonl(records: Sequence[ExportRecord], out: Path) -> None:
    """One JSON object per line, written to a temporary file renamed onto ``out`` (never half a file)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            for record in records:
                file.write(record.model_dump_json() + "\n")
        os.replace(temporary, out)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def print_older_passes(db: str, *, include_oracle: bool) -> None:
    """Say on stderr how many passed episodes ``--passed-only`` left out because an older grader scored them."""
    older = older_grader_passes(db, include_oracle=include_oracle)
    if older:
        print(
            f"note: {older} passed episode(s) of runs graded by an older grader (before unrequested writes counted) "
            "were left out: their pass was never checked for unrequested writes; run those cases again to keep them",
            file=sys.stderr,
        )


def dataset_rows(records: Sequence[ExportRecord]) -> list[dict[str, Any]]:
    """The dataset's rows: ``tools``, ``verdict`` and ``unrequested_writes`` as JSON text (their shapes differ per
    domain and case, which one Arrow schema cannot hold; ``unrequested_writes`` is ``null`` when not graded for
    writes), and so are tool calls' ``arguments`` (Arrow would give every arguments object every other call's keys,
    as nulls, which a chat template then renders); everything else as is."""
    rows = []
    for record in records:
        row = record.model_dump(mode="json")
        for name in ("tools", "verdict", "unrequested_writes", "tags"):
            row[name] = json.dumps(row[name], ensure_ascii=False)
        for message in row["messages"]:
            for call in message.get("tool_calls") or []:
                if not isinstance(call["function"]["arguments"], str):
                    call["function"]["arguments"] = json.dumps(call["function"]["arguments"], ensure_ascii=False)
        rows.append(row)
    return rows


def write_dataset(records: Sequence[ExportRecord], out: Path) -> None:
    """A ``datasets.Dataset`` saved to a fresh folder renamed onto ``out``."""
    try:
        import datasets  # type: ignore[import-untyped]
    except ImportError:
        raise ExportError("--format hf-dataset needs `datasets`: pip install -e '.[rl]'") from None
    datasets.disable_progress_bars()  # the command prints one summary line
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp"))
    try:
        datasets.Dataset.from_list(dataset_rows(records)).save_to_disk(str(temporary))
        if out.is_dir():  # --force: the old export goes only once the new one is complete
            shutil.rmtree(out)
        elif out.exists():
            out.unlink()
        temporary.rename(out)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise


def main(argv: Sequence[str] | None = None) -> int:
    parser = command_parser(
        "mantra_env.mantra_cli.export",
        __doc__,
        "--format openai-jsonl --passed-only          # results/export.jsonl",
        "--format hf-dataset --include-oracle --out data/sft",
    )
    parser.add_argument("--db", default=os.environ.get("MANTRA_DB", DEFAULT_DB), help="rollout database (MANTRA_DB)")
    parser.add_argument("--format", required=True, help=f"one of: {', '.join(FORMATS)}")
    parser.add_argument(
        "--passed-only",
        action="store_true",
        help="only episodes that passed: every check, and no unrequested write (runs of an older grader, graded on "
        "the checks alone, are left out)",
    )
    parser.add_argument("--include-oracle", action="store_true", help="add the oracle's compliant demonstrations")
    parser.add_argument(
        "--split",
        choices=("train", "test"),
        help="only the episodes of that side's cases (each suite's deterministic train/test split, see README)",
    )
    parser.add_argument(
        "--arguments",
        choices=ARGUMENTS_FORMATS,
        default="object",
        help="openai-jsonl's tool-call arguments as a JSON object (default: what Qwen's and Llama's chat templates "
        "expect; they would double-encode JSON text) or as JSON text (json-text: the OpenAI API's convention; the "
        "hf-dataset always holds JSON text)",
    )
    parser.add_argument("--out", help="output file (openai-jsonl) or folder (hf-dataset); default under results/")
    parser.add_argument("--force", action="store_true", help="replace --out if it exists")
    args = parser.parse_args(argv)

    def body() -> int:
        if args.format not in FORMATS:
            raise ExportError(f"unknown --format {args.format!r}: use one of {', '.join(FORMATS)}")
        out = Path(args.out or DEFAULT_OUT[args.format])
        if out.exists() and not args.force:
            raise ExportError(f"{out} exists: pass --force to replace it, or choose another --out")
        if out.is_dir() and args.format == "openai-jsonl":
            raise ExportError(f"{out} is a folder: --format openai-jsonl writes one file; pass a file as --out")
        records = checked(
            list(
                export_records(
                    args.db,
                    passed_only=args.passed_only,
                    include_oracle=args.include_oracle,
                    split=args.split,
                    arguments=args.arguments,
                )
            )
        )
        try:  # each writer removes its temporary file or folder: nothing is left half-written
            (write_jsonl if args.format == "openai-jsonl" else write_dataset)(records, out)
        except OSError as error:
            raise ExportError(
                f"cannot write the export to {out}: {error.strerror or error}; pass another --out"
            ) from None
        demonstrations = sum(record.demonstration for record in records)
        print(f"{len(records)} episodes ({demonstrations} oracle demonstrations) -> {out}")
        if args.passed_only:
            print_older_passes(args.db, include_oracle=args.include_oracle)
        return 0

    return run_command(body)


if __name__ == "__main__":
    sys.exit(main())
