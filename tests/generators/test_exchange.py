"""The exchange provider: the ops-mini pipeline answered through request and answer files, wave after wave with
``--resume`` and with ``--wait``; the check command; pending versus missing; the recorded run as a replay fixture.

The answers are the recorded fixture's (tests/generators/fixtures/ops-mini/responses.yaml), copied in by the test
as the requests appear, plus one planted unusable answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mantra_env.generators.answers import ANSWER_CHECKS, rebuild_check
from mantra_env.generators.config import STAGES, GenerationConfig, load_config
from mantra_env.generators.exchange import AnswerPending, ExchangeDir, ExchangeError
from mantra_env.generators.llm import GenerationError, LLMClient
from mantra_env.generators.pipeline import PipelineResult, run_pipeline
from mantra_env.generators.relevance import RelevanceCheck
from mantra_env.generators.replay import load_fixture
from mantra_env.generators.run import PENDING_EXIT
from mantra_env.generators.run import main as run_main
from mantra_env.generators.rundir import write_text
from mantra_env.mantra_cli.exchange import main as exchange_main

FIXTURE = Path(__file__).parent / "fixtures" / "ops-mini"
ANSWERS = load_fixture(FIXTURE / "responses.yaml")
PLANTED = "check_generation/s000-2#1"  # answered with prose first: its errors come back as #2
pytestmark = pytest.mark.slow


def _exchange_config_file(tmp_path: Path) -> Path:
    """The ops-mini config with every stage answered through ``RUN_DIR/exchange``."""
    text = (FIXTURE / "config.yaml").read_text(encoding="utf-8")
    text = text.replace("replay/ops-mini", "exchange/exchange").replace("  replay:\n    path: responses.yaml\n", "")
    text = text.replace("document_path: manual.md", f"document_path: {FIXTURE / 'manual.md'}")
    text = text.replace("run_dir_base: runs", f"run_dir_base: {tmp_path / 'runs'}")
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _answer(key: str) -> str:
    """What the test's writer answers: the recorded answer, except for the planted unusable one."""
    if key == PLANTED:
        return "Here are the checks, fixed."
    if key == "check_generation/s000-2#2":
        return ANSWERS["check_generation/s000-2#1"]
    return ANSWERS[key]


@dataclass
class Waves:
    run_dir: Path
    codes: list[int]
    waves: list[list[str]]
    first_output: str
    rewritten: list[str]


@pytest.fixture(scope="module")
def waves(tmp_path_factory: pytest.TempPathFactory) -> Waves:
    tmp = tmp_path_factory.mktemp("exchange")
    config = _exchange_config_file(tmp)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        codes = [run_main(["--config", str(config)])]
    (run_dir,) = (tmp / "runs").iterdir()
    folder = ExchangeDir(run_dir / "exchange")
    waves: list[list[str]] = []
    answered: dict[str, int] = {}  # key -> mtime of its request when it was answered
    rewritten: list[str] = []
    while codes[-1] == PENDING_EXIT and len(waves) < 30:
        pending = [entry["key"] for entry in json.loads((folder.root / "pending.json").read_text())]
        waves.append(pending)
        for key in pending:
            answered[key] = folder.request_path(key).stat().st_mtime_ns
            write_text(folder.answer_path(key), _answer(key))
        codes.append(run_main(["--resume", str(run_dir)]))
        rewritten += [key for key, mtime in answered.items() if folder.request_path(key).stat().st_mtime_ns != mtime]
    return Waves(run_dir, codes, waves, printed.getvalue(), rewritten)


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> PipelineResult:
    return run_pipeline(load_config(FIXTURE / "config.yaml"), tmp_path_factory.mktemp("replay") / "run")


def _suite_bytes(run_dir: Path) -> tuple[bytes, bytes]:
    suite = run_dir / "export" / "suite"
    return (suite / "suite.jsonl").read_bytes(), (suite / "manifest.json").read_bytes()


def test_waves_of_requests_until_the_suite_is_exported(waves: Waves, replayed: PipelineResult) -> None:
    assert waves.codes[0] == PENDING_EXIT and waves.codes[-1] == 0
    assert set(waves.codes[:-1]) == {PENDING_EXIT}
    assert f"5 requests pending in {waves.run_dir / 'exchange'}; answer them and run" in waves.first_output
    assert f"--resume {waves.run_dir}" in waves.first_output
    # the first wave is every node's reference request at once (the samples need the whole graph)
    assert waves.waves[0] == [f"document_extraction/c0{n}#0" for n in range(5)]
    # the checks of the three scenarios and the world model's pre-pass are asked together
    together = next(wave for wave in waves.waves if "check_generation/s000-1#0" in wave)
    assert together == [
        "check_generation/s000-1#0", "check_generation/s000-2#0", "check_generation/s000-3#0",
        "smt_schema_prepass/s000#0",
    ]  # fmt: skip
    asked = [key for wave in waves.waves for key in wave]
    assert len(asked) == len(set(asked)), "a request was asked twice"
    assert waves.rewritten == [], "an answered request was written again"
    usage = json.loads((waves.run_dir / "usage.json").read_text())["total"]
    assert sum(stage["requests"] for stage in usage.values()) == len(asked)  # each answer read once, then cached
    assert set(asked) == set(ANSWERS) | {"check_generation/s000-2#2"}  # the recorded run's requests, + the planted
    assert replayed.suite_dir is not None
    assert _suite_bytes(waves.run_dir) == _suite_bytes(replayed.run_dir)


def test_a_rejected_answer_comes_back_as_the_next_attempt_with_its_problem(waves: Waves) -> None:
    folder = ExchangeDir(waves.run_dir / "exchange")
    retry = folder.request("check_generation/s000-2#2")
    assert retry["role"] == "checks" and retry["attempt"] == 2
    assert retry["answer_check"].endswith("This is the last attempt: a rejected answer fails the request.")
    *_, previous, complaint = retry["messages"]
    assert previous == {"role": "assistant", "content": "Here are the checks, fixed."}
    assert "the answer holds no JSON object" in complaint["content"]
    # the recorded #0 answer (a missing comma) was sent back first, as #1, with its position
    first_retry = folder.request("check_generation/s000-2#1")["messages"][-1]["content"]
    assert "check po" in first_retry


def test_the_recorded_answers_replay_the_run_byte_for_byte(waves: Waves, tmp_path: Path) -> None:
    recorded = waves.run_dir / "recorded.jsonl"
    lines = [json.loads(line) for line in recorded.read_text().splitlines()]
    assert {line["role"] for line in lines} == {"references", "relevance", "scenario", "checks", "world_model", "judge"}
    assert any(line["key"] == PLANTED for line in lines)  # rejected answers are recorded too
    text = (FIXTURE / "config.yaml").read_text().replace("path: responses.yaml", f"path: {recorded}")
    text = text.replace("document_path: manual.md", f"document_path: {FIXTURE / 'manual.md'}")
    (tmp_path / "config.yaml").write_text(text)
    result = run_pipeline(load_config(tmp_path / "config.yaml"), tmp_path / "run")
    assert result.suite_dir is not None
    assert _suite_bytes(tmp_path / "run") == _suite_bytes(waves.run_dir)
    case = json.loads(_suite_bytes(tmp_path / "run")[0].splitlines()[0])
    assert case["provenance"]["run_id"] is None and set(case["provenance"]["models"].values()) == {"recorded"}


def test_wait_mode_goes_on_as_answers_arrive(tmp_path: Path, replayed: PipelineResult) -> None:
    config = load_config(_exchange_config_file(tmp_path))
    run_dir = tmp_path / "run"
    folder = ExchangeDir(run_dir / "exchange")
    finished = threading.Event()
    answered: list[str] = []

    def writer() -> None:  # answers each request file as it appears, until the run ends
        while not finished.is_set():
            for key in folder.unanswered() if folder.root.exists() else []:
                write_text(folder.answer_path(key), _answer(key))
                answered.append(key)
            finished.wait(0.005)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        result = run_pipeline(config, run_dir, wait=True, poll_s=0.005)
    finally:
        finished.set()
        thread.join()
    assert result.pending == [] and result.suite_dir is not None
    assert len(answered) == len(set(answered)) == len(ANSWERS) + 1
    assert _suite_bytes(run_dir) == _suite_bytes(replayed.run_dir)


def test_check_command_on_a_good_and_a_bad_answer(
    waves: Waves, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = str(waves.run_dir / "exchange")
    good = tmp_path / "good.json"
    good.write_text(ANSWERS["check_generation/s000-2#1"])  # the recorded fix of the missing comma
    assert exchange_main(["check", folder, "check_generation/s000-2#1", "--answer", str(good)]) == 0
    assert capsys.readouterr().out.strip() == "ok"
    assert exchange_main(["check", folder, "check_generation/s000-2#1"]) == 1  # the planted prose beside it
    assert "the answer holds no JSON object" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text(ANSWERS["check_generation/s000-2#0"])  # the recorded answer with a missing comma
    assert exchange_main(["check", folder, "check_generation/s000-2#1", "--answer", str(bad)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("- check po") and "ok" not in out.splitlines()
    bad.write_text('{"read_nodes": ["c99"], "references": []}')
    assert exchange_main(["check", folder, "document_extraction/c00#0", "--answer", str(bad)]) == 1
    assert "'c99' is not a node id" in capsys.readouterr().out
    assert exchange_main(["check", folder, "smt_full_pass/s000#0"]) == 1  # the planted `tru` is caught here too
    assert "tru" in capsys.readouterr().out
    assert exchange_main(["check", folder, "nope/x#0"]) == 2
    assert "no such request" in capsys.readouterr().err


def test_a_missing_answer_is_pending_under_exchange_and_an_error_under_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config: GenerationConfig = load_config(FIXTURE / "config.yaml")
    messages = [{"role": "system", "content": "Pick tools."}, {"role": "user", "content": "manual"}]
    check = RelevanceCheck(names=["check_inventory", "create_purchase_order"])
    replay = LLMClient(config, None)
    with pytest.raises(GenerationError, match="no recorded response for request 'tool_relevance/s9#0'"):
        asyncio.run(replay.generate("tool_relevance", "s9", messages, check))
    exchange_config = config.model_copy(update={"llm": config.llm.model_copy(update={"default_model": "exchange/x"})})
    client = LLMClient(exchange_config, None, exchange_base=tmp_path)
    with pytest.raises(AnswerPending) as pending:
        asyncio.run(client.generate("tool_relevance", "s9", messages, check))
    assert pending.value.keys == ["tool_relevance/s9#0"] and not isinstance(pending.value, GenerationError)
    request = json.loads((tmp_path / "x" / "tool_relevance" / "s9#0.request.json").read_text())
    assert request["role"] == "relevance" and request["messages"][0]["content"].startswith("Pick tools.")
    assert request["schema"]["properties"]["tools"]["items"]["enum"] == ["check_inventory", "create_purchase_order"]
    assert "at least one tool" in request["answer_check"]
    assert exchange_main(["pending", str(tmp_path / "x")]) == 0
    assert capsys.readouterr().out == f"relevance\t{tmp_path / 'x' / 'tool_relevance' / 's9#0.request.json'}\n"
    (tmp_path / "x" / "tool_relevance" / "s9#0.answer.json").write_text('{"tools": ["check_inventory"]}')
    answer: Any = asyncio.run(client.generate("tool_relevance", "s9", messages, check))
    assert answer.tools == ["check_inventory"]


def test_every_stage_has_an_answer_check_rebuilt_from_its_context() -> None:
    assert set(ANSWER_CHECKS) == set(STAGES)
    check = RelevanceCheck(names=["a", "b"])
    assert rebuild_check("tool_relevance", check.model_dump(mode="json")) == check
    with pytest.raises(ExchangeError, match="unknown stage 'nope'"):
        rebuild_check("nope", {})
    with pytest.raises(ExchangeError, match="does not fit stage tool_relevance at names"):
        rebuild_check("tool_relevance", {})


@pytest.mark.parametrize("key", ["../x#0", "a//b#0", "a/b", "/a#0"])
def test_keys_that_would_leave_the_folder_are_refused(tmp_path: Path, key: str) -> None:
    with pytest.raises(ExchangeError, match="is not a request key"):
        ExchangeDir(tmp_path).request_path(key)


def test_a_lost_run_continues_from_its_recording(waves: Waves, tmp_path: Path) -> None:
    # A new run of the same config, whose exchange folder is restored from the first run's recording, asks
    # nothing: every request it writes finds its answer, the planted rejection and its retries included.
    config = _exchange_config_file(tmp_path)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert run_main(["--config", str(config)]) == PENDING_EXIT
    (run_dir,) = (tmp_path / "runs").iterdir()
    folder = ExchangeDir(run_dir / "exchange")
    planted = folder.answer_path("document_extraction/c00#0")
    write_text(planted, "kept")  # an answer already there is never overwritten
    with contextlib.redirect_stdout(printed):
        assert exchange_main(["restore", str(folder.root), str(waves.run_dir / "recorded.jsonl")]) == 0
    recorded = len(load_fixture(waves.run_dir / "recorded.jsonl"))
    assert printed.getvalue().splitlines()[-1] == f"{recorded - 1} answers written, 1 already there"
    assert planted.read_text() == "kept"
    planted.unlink()
    with contextlib.redirect_stdout(printed):
        assert exchange_main(["restore", str(folder.root), str(waves.run_dir / "recorded.jsonl")]) == 0
        assert printed.getvalue().splitlines()[-1] == f"1 answers written, {recorded - 1} already there"
        assert run_main(["--resume", str(run_dir)]) == 0
    assert _suite_bytes(run_dir) == _suite_bytes(waves.run_dir)


def test_from_stage_keeps_the_answers_of_a_writer_whose_folder_is_named_like_a_stage(
    waves: Waves, tmp_path: Path
) -> None:
    # The shipped retail config answers the checks stage through exchange/checks, which is RUN_DIR/checks, the
    # checks stage's own folder: --from-stage once deleted the writer's answers with the stage's artifacts (the
    # retail re-audit's run asked its 200 answered check requests again). Without the cache, so the answers on
    # disk are all the run has.
    text = _exchange_config_file(tmp_path).read_text(encoding="utf-8")
    text = text.replace("  cache:\n    enabled: true\n", "  cache:\n    enabled: false\n")
    text = text.replace("llm:\n", "llm:\n  stage_overrides:\n    check_generation: {model: exchange/checks}\n", 1)
    config = tmp_path / "config.yaml"
    config.write_text(text, encoding="utf-8")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert run_main(["--config", str(config)]) == PENDING_EXIT
        (run_dir,) = (tmp_path / "runs").iterdir()
        recording = str(waves.run_dir / "recorded.jsonl")
        assert exchange_main(["restore", str(run_dir / "checks"), recording, "--only", "check_generation/*"]) == 0
        assert exchange_main(["restore", str(run_dir / "exchange"), recording, "--except", "check_generation/*"]) == 0
        assert run_main(["--resume", str(run_dir)]) == 0
        answers = sorted((run_dir / "checks" / "check_generation").glob("*.answer.json"))
        assert answers and (run_dir / "checks" / "DONE").is_file()
        assert run_main(["--resume", str(run_dir), "--from-stage", "scenarios"]) == 0  # nothing asked again
    assert sorted((run_dir / "checks" / "check_generation").glob("*.answer.json")) == answers
    assert _suite_bytes(run_dir) == _suite_bytes(waves.run_dir)
