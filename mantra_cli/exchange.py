"""``mantra exchange``: answer a run's requests by hand (the exchange provider, :mod:`mantra_env.generators.exchange`).

``mantra exchange check DIR KEY [--answer FILE]`` prints the problems of an answer or ``ok`` (the pipeline's own
answer check, rebuilt from the request file's stage and context by :mod:`mantra_env.generators.answers`);
``mantra exchange pending DIR`` lists the requests waiting for an answer;
``mantra exchange restore DIR RECORDED.jsonl`` writes the answers of a recording (a run's ``recorded.jsonl``, e.g.
one kept in the repository while a long run goes on) as answer files of a new run directory, so a run lost or
restarted asks again only what was never answered.

The command lives here, not in the provider, because checking an answer needs every stage's answer check: the
provider, which every stage imports, imports none of them. ``python -m mantra_env.generators.exchange`` runs this
command under its old name.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from fnmatch import fnmatchcase
from pathlib import Path

from mantra_env.cli import command_parser, run_command
from mantra_env.generators.answers import rebuild_check
from mantra_env.generators.exchange import ExchangeDir, ExchangeError, role_of
from mantra_env.generators.llm import accept
from mantra_env.generators.replay import load_fixture
from mantra_env.generators.rundir import write_text


def check_answer(folder: ExchangeDir, key: str, answer_file: Path | None = None) -> list[str]:
    """The problems the pipeline would find in the answer to ``key`` (empty: it would be accepted)."""
    request = folder.request(key)
    if answer_file is not None:
        try:
            text: str | None = answer_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ExchangeError(f"{answer_file}: cannot read the answer ({error})") from None
    else:
        text = folder.answer(key, settle=False)
    if text is None:
        raise ExchangeError(f"no answer for {key}: write it to {folder.answer_path(key)}")
    check = rebuild_check(str(request["stage"]), request.get("context", {}))
    _, problem = accept(check, text)
    return [line.removeprefix("- ") for line in problem.splitlines() if line.strip()] if problem else []


def selected(key: str, only: Sequence[str] = (), leave_out: Sequence[str] = ()) -> bool:
    """Whether ``key`` matches one of the ``only`` patterns (any key when there are none) and none of
    ``leave_out`` (shell patterns, as :mod:`fnmatch` reads them: ``check_generation/s003-*``)."""
    return (not only or any(fnmatchcase(key, pattern) for pattern in only)) and not any(
        fnmatchcase(key, pattern) for pattern in leave_out
    )


def restore(
    folder: ExchangeDir, recorded: Path, only: Sequence[str] = (), leave_out: Sequence[str] = ()
) -> tuple[int, int, int]:
    """Write every recorded answer whose answer file is missing; returns (written, already there, left out). An
    answer already in the folder is never overwritten (it may be newer than the recording). With ``only`` /
    ``leave_out`` (:func:`selected`) a re-audit carries over the answers whose requests it keeps and asks the rest
    anew (a sample whose checks must be rewritten leaves out its checks and everything judged after them)."""
    answers = load_fixture(recorded)  # keys checked
    planned = [(key, folder.answer_path(key), text) for key, text in answers.items() if selected(key, only, leave_out)]
    written = kept = 0
    for key, path, text in planned:
        if path.exists():
            kept += 1
            continue
        try:
            write_text(path, text)
        except (OSError, UnicodeEncodeError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            raise ExchangeError(
                f"{path}: cannot write the answer of {key!r} ({reason}); {written} answers were written before it"
            ) from None
        written += 1
    return written, kept, len(answers) - len(planned)


def main(argv: Sequence[str] | None = None) -> int:
    parser = command_parser(
        "mantra_env.mantra_cli.exchange",
        "Answer a run's requests: check an answer as the pipeline would, list what waits, carry answers over.",
        "check RUN_DIR/exchange 'check_generation/s000-2#0'   # \"ok\" or the problems",
        "pending RUN_DIR/exchange                             # role and file of each waiting request",
        "restore NEW_RUN/exchange OLD_RUN/recorded.jsonl      # carry a recording's answers over",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="check an answer file against its request, as the pipeline would")
    check.add_argument("dir", type=Path, help="the exchange folder")
    check.add_argument("key", help="the request key, e.g. check_generation/s000-2#0")
    check.add_argument("--answer", type=Path, help="check this file instead of the answer beside the request")
    pending = commands.add_parser("pending", help="list the requests without an answer")
    pending.add_argument("dir", type=Path, help="the exchange folder")
    restoring = commands.add_parser("restore", help="write the answers of a recording (recorded.jsonl) as answer files")
    restoring.add_argument("dir", type=Path, help="the exchange folder")
    restoring.add_argument("recorded", type=Path, help="a recording in the replay format, e.g. RUN_DIR/recorded.jsonl")
    restoring.add_argument(
        "--only", action="append", default=[], metavar="PATTERN", help="restore only keys matching a pattern (repeat)"
    )
    restoring.add_argument(
        "--except",
        dest="leave_out",
        action="append",
        default=[],
        metavar="PATTERN",
        help="leave out keys matching a shell pattern such as 'check_generation/s003-*' (repeat)",
    )
    args = parser.parse_args(argv)

    def run() -> int:
        folder = ExchangeDir(args.dir)
        if args.command == "restore":
            written, kept, left_out = restore(folder, args.recorded, args.only, args.leave_out)
            print(f"{written} answers written, {kept} already there" + (f", {left_out} left out" if left_out else ""))
            return 0
        if args.command == "pending":
            for key in folder.unanswered():
                print(f"{role_of(key.split('/')[0])}\t{folder.request_path(key)}")
            return 0
        problems = check_answer(folder, args.key, args.answer)
        print("\n".join(f"- {problem}" for problem in problems) if problems else "ok")
        return 1 if problems else 0

    return run_command(run, "interrupted")


if __name__ == "__main__":
    sys.exit(main())
