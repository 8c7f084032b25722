"""Exchange files written by outside helpers (N1) and odd files given to the exchange commands (N6).

An answer the pipeline finds half-written is pending, never a refused attempt; a complete answer that fails the
stage's checks is still sent back as the next attempt. ``restore``, ``check`` and ``pending`` report odd files in
one line (exit code 2) and leave no temporary file behind."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from mantra_env.generators.config import load_config
from mantra_env.generators.exchange import ANSWER_SETTLE_S, AnswerPending, ExchangeDir, ExchangeError
from mantra_env.generators.llm import LLMClient
from mantra_env.generators.relevance import RelevanceCheck
from mantra_env.generators.rundir import write_text
from mantra_env.mantra_cli.exchange import main as exchange_main

FIXTURE = Path(__file__).parent / "fixtures" / "ops-mini"
KEY = "tool_relevance/s9#0"
MESSAGES = [{"role": "system", "content": "Pick tools."}, {"role": "user", "content": "manual"}]
CHECK = RelevanceCheck(names=["check_inventory", "create_purchase_order"])


def _client(tmp_path: Path) -> LLMClient:
    config = load_config(FIXTURE / "config.yaml")
    exchange = config.model_copy(update={"llm": config.llm.model_copy(update={"default_model": "exchange/x"})})
    return LLMClient(exchange, None, exchange_base=tmp_path)


def _generate(client: LLMClient) -> Any:
    return asyncio.run(client.generate("tool_relevance", "s9", MESSAGES, CHECK))


def _age(path: Path, seconds: float) -> None:
    """Make ``path`` look last changed ``seconds`` ago."""
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_n1_an_answer_being_written_is_pending_until_it_is_whole(tmp_path: Path) -> None:
    client = _client(tmp_path)
    with pytest.raises(AnswerPending):
        _generate(client)
    folder = ExchangeDir(tmp_path / "x")
    answer = folder.answer_path(KEY)
    whole = '{"tools": ["check_inventory"]}'
    answer.write_text(whole[:20], encoding="utf-8")  # the writer is half-way through
    with pytest.raises(AnswerPending) as pending:
        _generate(client)
    assert pending.value.keys == [KEY]  # not sent back as attempt #1
    assert not folder.request_path("tool_relevance/s9#1").exists()
    assert folder.unanswered() == [KEY]
    answer.write_text(whole, encoding="utf-8")
    assert _generate(client).tools == ["check_inventory"]


def test_n1_an_answer_cut_inside_a_character_is_pending_not_an_error(tmp_path: Path) -> None:
    folder = ExchangeDir(tmp_path)
    path = folder.answer_path(KEY)
    path.parent.mkdir(parents=True)
    path.write_bytes('{"tools": ["caf\u00e9"]}'.encode()[:16])  # the first byte of the é only
    assert folder.answer(KEY) is None and not folder.answered(KEY)


@pytest.mark.parametrize(
    ("text", "unfinished"),
    [
        ("", True),
        (" \n", True),
        ('{"tools": ["check_inv', True),
        ('Here it is: {"a": {"b": "}"}', True),  # a brace inside a string closes nothing
        ('{"a": "\\"}', True),  # an escaped quote does not end the string
        ('```json\n{"tools": []', True),
        ('{"tools": ["check_inventory"]}', False),
        ('```json\n{"tools": []}\n```', False),
        ("Here are the checks, fixed.", False),  # prose: complete, and sent back as the next attempt
        ('{"tools": [check_inventory]}', False),  # closed, with a syntax error inside: sent back
    ],
)
def test_an_unfinished_answer_is_told_from_a_complete_bad_one(tmp_path: Path, text: str, unfinished: bool) -> None:
    folder = ExchangeDir(tmp_path)
    path = folder.answer_path(KEY)
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    assert (folder.answer(KEY) is None) == unfinished
    assert folder.answer(KEY, settle=False) == text  # `exchange check` reads it as it is
    _age(path, ANSWER_SETTLE_S + 1)  # its writer is gone: read as it is, and sent back if bad
    assert folder.answer(KEY) == text


def test_a_complete_answer_that_fails_the_check_is_still_sent_back(tmp_path: Path) -> None:
    client = _client(tmp_path)
    folder = ExchangeDir(tmp_path / "x")
    write_text(folder.answer_path(KEY), "Sure! The tools are check_inventory.")
    with pytest.raises(AnswerPending) as pending:
        _generate(client)
    assert pending.value.keys == ["tool_relevance/s9#1"]
    request = json.loads(folder.request_path("tool_relevance/s9#1").read_text(encoding="utf-8"))
    assert "no JSON object" in request["messages"][-1]["content"]


def _command(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with contextlib.redirect_stdout(io.StringIO()):
        code = exchange_main(argv)
    return code, capsys.readouterr().err


def _recording(tmp_path: Path, content: bytes) -> Path:
    path = tmp_path / "recorded.jsonl"
    path.write_bytes(content)
    return path


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            b'{"key": "a/b#0", "response": "caf\xe9"}\n',
            "recorded.jsonl:1:34: replay fixture is not UTF-8 text (byte 0xe9",
        ),
        (b"[" * 100_000 + b"]" * 100_000 + b"\n", "recorded.jsonl:1: the entry nests too deep to read"),
        (b'{"key": "a/b\\u0000c#0", "response": "x"}\n', "'a/b\\x00c#0' is not a request key: it holds a NUL"),
        (b'{"key": "a/b#0", "response": "\\ud800"}\n', "recorded.jsonl:1: the entry holds a string with a lone sur"),
    ],
    ids=["not-utf8", "deep", "nul-key", "lone-surrogate"],
)
def test_n6_restore_reports_an_odd_recording_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    target = tmp_path / "exchange"
    code, err = _command(["restore", str(target), str(_recording(tmp_path, content))], capsys)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert message in err
    assert not target.exists() or not [p for p in target.rglob("*") if p.is_file()]  # nothing written, no .tmp


def test_n6_an_answer_path_that_is_a_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = ExchangeDir(tmp_path)
    write_text(folder.request_path(KEY), json.dumps({"key": KEY, "stage": "tool_relevance", "context": {}}))
    folder.answer_path(KEY).mkdir()
    code, err = _command(["check", str(tmp_path), KEY], capsys)
    assert (code, err) == (2, f"error: {folder.answer_path(KEY)}: is a folder, not an answer file; remove it and "
                              "write the answer\n")  # fmt: skip
    with pytest.raises(ExchangeError, match="is a folder"):
        folder.ask({"key": KEY})


def test_n6_pending_on_a_folder_that_does_not_exist_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _command(["pending", str(tmp_path / "nope")], capsys)
    assert code == 2
    assert err == (
        f"error: {tmp_path / 'nope'} does not exist: give the exchange folder of a run (RUN_DIR/exchange, or the "
        "<dir> of its exchange/<dir> models)\n"
    )


def test_n6_a_run_whose_answer_path_is_a_folder_stops_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mantra_env.generators.run import PENDING_EXIT
    from mantra_env.generators.run import main as run_main
    from tests.generators.test_run_lock import _exchange_config

    with contextlib.redirect_stdout(io.StringIO()):
        assert run_main(["--config", str(_exchange_config(tmp_path))]) == PENDING_EXIT
    (run_dir,) = (tmp_path / "runs").iterdir()
    folder = ExchangeDir(run_dir / "exchange")
    first = json.loads((folder.root / "pending.json").read_text(encoding="utf-8"))[0]["key"]
    folder.answer_path(first).mkdir()
    capsys.readouterr()
    with contextlib.redirect_stdout(io.StringIO()):
        assert run_main(["--resume", str(run_dir)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[
        -1
    ] == f"error: {folder.answer_path(first)}: is a folder, not an answer file; remove it and write the " + ("answer")


def test_n6_a_request_path_that_is_a_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = ExchangeDir(tmp_path)
    folder.request_path(KEY).mkdir(parents=True)
    with pytest.raises(ExchangeError, match="cannot write the request: Is a directory"):
        folder.ask({"key": KEY})
    code, err = _command(["check", str(tmp_path), KEY], capsys)
    assert (code, err) == (2, f"error: {folder.request_path(KEY)}: cannot read the request: Is a directory\n")


def test_restore_carries_over_only_the_selected_answers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A re-audit keeps a recording's answers where its requests stay and asks the rest anew: a sample whose checks
    # are rewritten leaves out its checks and what was judged after them.
    keys = [
        "scenario_generation/s003#0",
        "check_generation/s003-0#0",
        "backward_audit/s003-0#0",
        "check_generation/s004-1#0",
    ]
    lines = "".join(json.dumps({"key": key, "response": "{}"}) + "\n" for key in keys)
    recording = _recording(tmp_path, lines.encode())
    target = tmp_path / "exchange"
    argv = ["restore", str(target), str(recording), "--except", "check_generation/s003-*", "--except", "*_audit/s003-*"]
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert exchange_main(argv) == 0
    assert printed.getvalue() == "2 answers written, 0 already there, 2 left out\n"
    folder = ExchangeDir(target)
    assert [key for key in keys if folder.answer_path(key).exists()] == [keys[0], keys[3]]
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert exchange_main(["restore", str(target), str(recording), "--only", "backward_audit/*"]) == 0
    assert printed.getvalue() == "1 answers written, 0 already there, 3 left out\n"
    assert folder.answer_path(keys[2]).exists() and not folder.answer_path(keys[1]).exists()


def test_the_old_python_m_form_runs_the_exchange_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `python -m mantra_env.generators.exchange` delegates to `mantra exchange` under its own program name.
    from mantra_env.generators.exchange import main as old_main

    with pytest.raises(SystemExit) as exit:
        old_main(["--help"])
    assert exit.value.code == 0
    assert capsys.readouterr().out.startswith("usage: python -m mantra_env.generators.exchange ")
    folder = ExchangeDir(tmp_path)
    with pytest.raises(AnswerPending):
        folder.ask({"key": KEY, "stage": "tool_relevance", "messages": MESSAGES})
    assert old_main(["pending", str(tmp_path)]) == 0
    assert capsys.readouterr().out == f"relevance\t{folder.request_path(KEY)}\n"
