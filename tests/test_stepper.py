"""A domain's tool that raises, blocks or exits ends its own episode, never the run (N4): steps run in the
episode's worker thread (mantra_env.stepper), and a real Ctrl-C still stops the run, which resumes exactly."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from mantra_env.agents.base import ScriptedAgent
from mantra_env.agents.scripted import OraclePolicy
from mantra_env.domains import find_suite
from mantra_env.domains.discovery import PATH_VARIABLE
from mantra_env.domains.operations import OperationsToolkit
from mantra_env.env import MantraEnv
from mantra_env.runner import RunProgress, RunSettings, run_suite
from mantra_env.stepper import EpisodeStepper, ToolCrash, step
from mantra_env.store import RolloutStore
from mantra_env.store.records import RunRecord
from mantra_env.toolkit import tool
from tests.domains.test_discovery import write_domain

OPERATIONS, SUITE = find_suite("operations")
assert OPERATIONS is not None


class Misbehaving(OperationsToolkit):
    """The operations tools, except that ``check_inventory`` does what ``mode`` says."""

    mode: ClassVar[str] = "raise"
    release: ClassVar[threading.Event] = threading.Event()

    @tool(kind="read")
    def check_inventory(self, item_name: str) -> dict[str, Any]:
        """Check stock.

        Args:
            item_name: the item
        """
        if Misbehaving.mode == "raise":
            raise RuntimeError("tool bug")
        if Misbehaving.mode == "exit":
            raise SystemExit(3)
        if Misbehaving.mode == "block":
            Misbehaving.release.wait(120)  # set by the test once the run is over
        result: dict[str, Any] = super().check_inventory(item_name)
        return result


MISBEHAVING = dataclasses.replace(OPERATIONS, toolkit=Misbehaving)


def run(db: Path, mode: str, **settings: Any) -> RunProgress:
    Misbehaving.mode = mode
    record = RunRecord(run_id="r", suite="operations/starter", model="scripted:oracle", agent="scripted:oracle")
    progress = RunProgress()
    with RolloutStore(db) as store:
        agent = lambda: ScriptedAgent(OraclePolicy())  # noqa: E731
        asyncio.run(run_suite(store, record, SUITE, MISBEHAVING, agent, RunSettings(**settings), progress))
    return progress


def episodes(db: Path) -> list[tuple[Any, ...]]:
    with RolloutStore(db) as store:
        return store.query("SELECT case_id, attempt, status, error_kind, error FROM episodes ORDER BY 1, 2")


def test_n4_a_tool_that_raises_is_an_internal_error_with_its_call_and_traceback(tmp_path: Path) -> None:
    run(tmp_path / "r.duckdb", "raise", attempts=2, retries=2, cases=("fig1-case1",))
    rows = episodes(tmp_path / "r.duckdb")
    assert [row[:4] for row in rows] == [("fig1-case1", 0, "error", "internal"), ("fig1-case1", 1, "error", "internal")]
    error = rows[0][4]
    assert error.startswith("the tool 'check_inventory' raised RuntimeError: tool bug")
    assert "Traceback (most recent call last)" in error and 'raise RuntimeError("tool bug")' in error
    with RolloutStore(tmp_path / "r.duckdb") as store:
        steps = store.query(
            "SELECT step, tool, arguments, error_code FROM steps WHERE attempt = 0 ORDER BY step DESC LIMIT 1"
        )
    assert steps == [(0, "check_inventory", '{"item_name": "Dell UltraSharp U2723QE"}', "tool_crashed")]


def test_n4_system_exit_from_a_tool_is_its_episodes_error_and_the_run_goes_on(tmp_path: Path) -> None:
    run(tmp_path / "r.duckdb", "exit", attempts=1, retries=0, cases=("fig1-case1", "tr-within-budget"))
    rows = episodes(tmp_path / "r.duckdb")
    assert [row[:4] for row in rows] == [
        ("fig1-case1", 0, "error", "internal"),
        ("tr-within-budget", 0, "passed", None),
    ]
    assert "raised SystemExit: 3" in rows[0][4]


def test_n4_a_tool_that_blocks_is_stopped_by_the_timeout_and_its_thread_counted(tmp_path: Path) -> None:
    Misbehaving.release.clear()
    try:
        progress = run(tmp_path / "r.duckdb", "block", attempts=2, retries=0, concurrency=2, episode_timeout_s=0.5,
                       cases=("fig1-case1",))  # fmt: skip
    finally:
        Misbehaving.release.set()
    assert [row[:4] for row in episodes(tmp_path / "r.duckdb")] == [
        ("fig1-case1", 0, "error", "timeout"),
        ("fig1-case1", 1, "error", "timeout"),
    ]
    assert progress.threads_left == 2


def test_n4_a_crash_ends_the_episode_at_once_even_in_an_agent_that_catches_tool_errors() -> None:
    """strands catches a tool handler's exception and tells the model; the stepper cancels the agent instead."""
    Misbehaving.mode = "raise"
    env = MantraEnv(SUITE, MISBEHAVING, case="fig1-case1")
    stepper = EpisodeStepper(env)
    later: list[str] = []

    async def swallowing(env: MantraEnv) -> str:
        env.reset(options={"case": "fig1-case1"})
        with contextlib.suppress(ToolCrash):
            await step(env, {"tool": "check_inventory", "arguments": {"item_name": "x"}})
        later.append("went on")
        await asyncio.sleep(60)  # a model call: cancelled
        return "answer"

    async def main() -> None:
        await stepper.drive(swallowing(env), timeout_s=120)

    with pytest.raises(ToolCrash, match="tool bug"):
        asyncio.run(main())
    assert later == [] and stepper.close() is False


def test_a_crash_while_grading_the_final_answer_records_no_call() -> None:
    class BrokenGrader(MantraEnv):
        def step(self, action: str | dict[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
            if isinstance(action, dict) and "final_answer" in action:
                raise ValueError("grader bug")
            return super().step(action)

    env = BrokenGrader(SUITE, OPERATIONS, case="fig1-case1")

    async def answering(env: MantraEnv) -> None:
        env.reset(options={"case": "fig1-case1"})
        await step(env, {"tool": "check_inventory", "arguments": {"item_name": "x"}})
        await step(env, {"final_answer": "done"})

    async def main() -> None:
        await EpisodeStepper(env).drive(answering(env), timeout_s=120)

    with pytest.raises(ToolCrash, match="grading the final answer raised ValueError: grader bug") as caught:
        asyncio.run(main())
    assert caught.value.call is None and [call.tool for call in caught.value.trace(env.trace).calls] == [
        "check_inventory"
    ]


def test_outside_the_runner_a_step_is_a_plain_env_step() -> None:
    env = MantraEnv(SUITE, OPERATIONS, case="fig1-case1")
    env.reset()
    seen: list[str] = []

    async def main() -> None:
        await step(env, {"tool": "check_inventory", "arguments": {"item_name": "x"}})
        seen.append(threading.current_thread().name)

    asyncio.run(main())
    assert seen == [threading.main_thread().name] and len(env.trace.calls) == 1


SLEEPY = '''
import time
from pathlib import Path
from typing import Any
from mantra_env.domains import Domain
from mantra_env.domains.operations import OperationsDatabase, OperationsToolkit
from mantra_env.toolkit import tool

MARKS = Path(__file__).parent


class Sleepy(OperationsToolkit):
    domain = "sleepy"

    @tool(kind="read")
    def check_inventory(self, item_name: str) -> dict[str, Any]:
        """Check stock.

        Args:
            item_name: the item
        """
        if (MARKS / "slow").exists():
            (MARKS / "started").write_text("sleeping")
            time.sleep(600)
        return super().check_inventory(item_name)


DOMAIN = Domain.from_folder(Path(__file__).parent, "sleepy", Sleepy, OperationsDatabase)
'''


@pytest.mark.slow
def test_n4_ctrl_c_during_a_slow_tool_stops_the_run_and_resume_finishes_it_exactly(tmp_path: Path) -> None:
    folder = write_domain(tmp_path / "domains", name="sleepy")
    (folder / "__init__.py").write_text(SLEEPY, encoding="utf-8")
    (folder / "slow").write_text("")
    env = {**os.environ, PATH_VARIABLE: str(tmp_path / "domains")}
    db = tmp_path / "r.duckdb"
    command = [sys.executable, "-m", "mantra_env.run", "--suite", "sleepy", "--model", "scripted:oracle",
               "--attempts", "2", "--concurrency", "1", "--db", str(db), "--run-name", "r"]  # fmt: skip
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (folder / "started").exists():  # the tool is asleep in its worker thread
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert "continue with --resume" in err
    (folder / "slow").unlink()
    done = subprocess.run([*command, "--resume"], env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    with RolloutStore(db) as store:
        rows = store.query("SELECT case_id, attempt, status FROM episodes ORDER BY 1, 2")
    _, suite = find_suite(str(folder / "suites" / "basic"))
    assert rows == [(case.id, attempt, "passed") for case in suite.cases for attempt in range(2)]


def test_n4_a_raising_tool_under_the_strands_agent_is_not_the_models_failure(tmp_path: Path) -> None:
    """strands answers a handler's exception to the model and goes on; the episode is the harness's error still."""
    from mantra_env.agents.models import ModelConfig
    from mantra_env.agents.strands_agent import StrandsAgent
    from tests.agents.stub_server import serve, text, tool_call

    Misbehaving.mode = "raise"
    stub_model = ModelConfig(alias="stub", model="openai/stub-model", api_key="not-a-key")
    responses = [tool_call("check_inventory", {"item_name": "Dell UltraSharp U2723QE"}), text("done")]
    record = RunRecord(run_id="r", suite="operations/starter", model="stub", agent="strands:stub")
    with serve(responses) as stub, RolloutStore(tmp_path / "r.duckdb") as store:
        agent = lambda: StrandsAgent(stub_model, api_base=stub.api_base)  # noqa: E731
        settings = RunSettings(attempts=1, retries=0, cases=("fig1-case1",))
        asyncio.run(run_suite(store, record, SUITE, MISBEHAVING, agent, settings))
        rows = store.query("SELECT status, error_kind, steps FROM episodes")
    assert rows == [("error", "internal", 1)]


def test_under_the_runner_a_turns_calls_step_in_order_in_the_episodes_one_worker_thread() -> None:
    from mantra_env.agents.models import ModelConfig
    from mantra_env.agents.strands_agent import StrandsAgent
    from tests.agents.stub_server import serve, text, tool_call

    class Recording(MantraEnv):
        threads: ClassVar[list[str]] = []

        def step(self, action: str | dict[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
            Recording.threads.append(threading.current_thread().name)
            return super().step(action)

    two_calls = tool_call("check_inventory", {"item_name": "Dell UltraSharp U2723QE"})
    two_calls["tool_calls"] += tool_call("get_request", {"request_id": "HW-2841"}, "call_2")["tool_calls"]
    stub_model = ModelConfig(alias="stub", model="openai/stub-model", api_key="not-a-key")
    with serve([two_calls, text("done")]) as stub:
        env = Recording(SUITE, OPERATIONS, case="fig1-case1")
        agent = StrandsAgent(stub_model, api_base=stub.api_base)

        async def main() -> str:
            await EpisodeStepper(env).drive(agent.run(env, "fig1-case1", 0), timeout_s=120)
            return threading.current_thread().name

        loop_thread = asyncio.run(main())
    assert Recording.threads == ["mantra-episode-steps"] * 2 and loop_thread != "mantra-episode-steps"
    assert [call.tool for call in env.trace.calls] == ["check_inventory", "get_request"]
