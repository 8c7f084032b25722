"""The runner: concurrency, infrastructure errors kept apart from agent failures, and resume after a kill."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import ClassVar

import pytest

from mantra_env.agents.base import AgentReport, InfrastructureError, ScriptedAgent
from mantra_env.agents.scripted import NoopPolicy, OraclePolicy
from mantra_env.domains import DomainError, find_suite
from mantra_env.env import MantraEnv
from mantra_env.graders.analysis import summarize_run
from mantra_env.runner import MAX_EPISODES, RunnerError, RunSettings, plan, run_suite, select_cases
from mantra_env.store import RolloutStore
from mantra_env.store.records import RunRecord

DOMAIN, SUITE = find_suite("operations")
assert DOMAIN is not None


def run(db: Path, run_id: str, make_agent: object, **settings: object) -> None:
    record = RunRecord(run_id=run_id, suite="operations/starter", model="test", agent="test")
    with RolloutStore(db) as store:
        asyncio.run(run_suite(store, record, SUITE, DOMAIN, make_agent, RunSettings(**settings)))  # type: ignore[arg-type]


class Flaky:
    """Fails with an infrastructure error ``failures`` times per episode, then behaves like the oracle."""

    name = "flaky"
    calls: ClassVar[dict[tuple[str, int], int]] = {}

    def __init__(self, failures: int, kind: str = "rate_limit") -> None:
        self.failures, self.kind = failures, kind

    async def run(self, env: MantraEnv, case_id: str, seed: int) -> AgentReport:
        key = (case_id, seed)
        Flaky.calls[key] = Flaky.calls.get(key, 0) + 1
        if Flaky.calls[key] <= self.failures:
            raise InfrastructureError(self.kind, "HTTP 429 from the provider")
        return await ScriptedAgent(OraclePolicy()).run(env, case_id, seed)


def test_transient_provider_errors_are_retried(tmp_path: Path) -> None:
    Flaky.calls = {}
    run(tmp_path / "r.duckdb", "r", lambda: Flaky(1), attempts=1, retries=2, backoff_s=0.0, cases=("fig1-*",))
    with RolloutStore(tmp_path / "r.duckdb") as store:
        assert store.query("SELECT status, count(*) FROM episodes GROUP BY status") == [("passed", 2)]


def test_persistent_provider_errors_are_errors_not_failures(tmp_path: Path) -> None:
    Flaky.calls = {}
    db = tmp_path / "r.duckdb"
    run(db, "r", lambda: Flaky(99), attempts=2, retries=1, backoff_s=0.0, cases=("fig1-*",))
    with RolloutStore(db) as store:
        rows = store.query("SELECT status, error_kind, verdict FROM episodes")
        assert {(status, kind, verdict) for status, kind, verdict in rows} == {("error", "rate_limit", None)}
        summary = summarize_run(store, "r", k=2)
    assert summary.errors == 4 and summary.scored == 0
    assert summary.pass_at_1.value != summary.pass_at_1.value  # NaN: nothing was scored, nothing was failed


class Stuck:
    """Never finishes (an event nobody sets), so the time-out fires however slow the machine is."""

    name = "stuck"

    async def run(self, env: MantraEnv, case_id: str, seed: int) -> AgentReport:
        await asyncio.Event().wait()
        return AgentReport()


def test_an_episode_over_its_time_limit_is_an_error(tmp_path: Path) -> None:
    run(tmp_path / "r.duckdb", "r", Stuck, attempts=1, retries=0, episode_timeout_s=0.05, cases=("fig1-case1",))
    with RolloutStore(tmp_path / "r.duckdb") as store:
        assert store.query("SELECT status, error_kind FROM episodes") == [("error", "timeout")]


def test_concurrent_episodes_each_get_their_own_environment(tmp_path: Path) -> None:
    run(tmp_path / "r.duckdb", "r", lambda: ScriptedAgent(OraclePolicy()), attempts=3, concurrency=16)
    with RolloutStore(tmp_path / "r.duckdb") as store:
        assert store.query("SELECT count(*) FILTER (WHERE status = 'passed'), count(*) FROM episodes") == [(42, 42)]


def test_a_run_leaves_the_garbage_collector_as_it_found_it(tmp_path: Path) -> None:
    """The run parks the objects alive at its start in the collector's permanent generation, and gives them
    back afterwards, also when it fails, unless the caller had frozen objects itself."""
    assert gc.get_freeze_count() == 0
    run(tmp_path / "a.duckdb", "r", lambda: ScriptedAgent(OraclePolicy()), attempts=1, cases=("fig1-case1",))
    assert gc.get_freeze_count() == 0

    def broken(_: object) -> None:
        raise ValueError("a bug in the caller's callback")

    record = RunRecord(run_id="r", suite="operations/starter", model="test", agent="test")
    settings = RunSettings(attempts=1, cases=("fig1-case1",))
    with RolloutStore(tmp_path / "b.duckdb") as store, pytest.raises(ValueError, match="callback"):
        agent = lambda: ScriptedAgent(OraclePolicy())  # noqa: E731
        asyncio.run(run_suite(store, record, SUITE, DOMAIN, agent, settings, on_episode=broken))
    assert gc.get_freeze_count() == 0

    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        run(tmp_path / "c.duckdb", "r", lambda: ScriptedAgent(OraclePolicy()), attempts=1, cases=("fig1-case1",))
        assert gc.get_freeze_count() >= frozen
    finally:
        gc.unfreeze()


def test_case_selection() -> None:
    assert select_cases(SUITE, ["fig1-case1", "tr-*"]) == [
        "fig1-case1",
        "tr-within-budget",
        "tr-emea-over-budget",
        "tr-apac-escalation",
    ]
    with pytest.raises(RunnerError, match="matches no case"):
        select_cases(SUITE, ["zzz"])


KILLED_AFTER = 7

# The run SIGKILLs itself from inside, right after its KILLED_AFTER-th episode is committed, and episodes started
# after the first KILLED_AFTER + 2 never finish: the kill point and what is stored by then do not depend on how
# fast the machine is (a kill sent from the test raced the run's end on a loaded machine).
KILLABLE = textwrap.dedent(
    """
    import asyncio, os, signal, sys
    from mantra_env.agents.base import ScriptedAgent
    from mantra_env.agents.scripted import {policy}
    from mantra_env.domains import find_suite
    from mantra_env.runner import RunSettings, run_suite
    from mantra_env.store import RolloutStore
    from mantra_env.store.records import RunRecord

    class Gated(ScriptedAgent):
        started = 0

        async def run(self, env, case_id, seed):
            Gated.started += 1
            if Gated.started > {killed_after} + 2:
                await asyncio.Event().wait()  # never set: the run is killed first
            return await super().run(env, case_id, seed)

    domain, suite = find_suite("operations")
    record = RunRecord(run_id="r", suite="operations/starter", model="test", agent="test")
    committed = 0

    def stored(episode):
        global committed
        committed += 1
        print("stored", flush=True)
        if committed == {killed_after}:
            os.kill(os.getpid(), signal.SIGKILL)

    with RolloutStore(sys.argv[1]) as store:
        settings = RunSettings(attempts=2, concurrency=2)
        asyncio.run(run_suite(store, record, suite, domain, lambda: Gated({policy}()), settings, on_episode=stored))
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("policy", [OraclePolicy, NoopPolicy])
def test_a_run_killed_mid_way_resumes_without_losing_or_duplicating(tmp_path: Path, policy: type) -> None:
    killed, whole = tmp_path / "killed.duckdb", tmp_path / "whole.duckdb"
    script = tmp_path / "run.py"
    script.write_text(KILLABLE.format(policy=policy.__name__, killed_after=KILLED_AFTER))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}
    finished = subprocess.run([sys.executable, str(script), str(killed)], capture_output=True, text=True, env=env)
    assert finished.returncode == -signal.SIGKILL, finished.stderr
    assert finished.stdout.split() == ["stored"] * KILLED_AFTER
    with RolloutStore(killed) as store:
        stored = store.query("SELECT count(*) FROM episodes")[0][0]
    # Killed mid-way; nothing committed was lost; the two more episodes allowed to finish may have been stored.
    assert KILLED_AFTER <= stored <= KILLED_AFTER + 2

    run(killed, "r", lambda: ScriptedAgent(policy()), attempts=2, concurrency=2)
    run(whole, "r", lambda: ScriptedAgent(policy()), attempts=2, concurrency=2)
    with RolloutStore(killed) as resumed, RolloutStore(whole) as reference:
        keys = "SELECT case_id, attempt, status, reward, steps FROM episodes ORDER BY case_id, attempt"
        assert resumed.query(keys) == reference.query(keys)
        assert resumed.query("SELECT count(*) FROM episodes") == [(28,)]
        assert summarize_run(resumed, "r", k=2) == summarize_run(reference, "r", k=2)


class Raising:
    """Raises ``error`` on fig1-case1, behaves like the oracle elsewhere."""

    name = "raising"
    calls = 0

    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def run(self, env: MantraEnv, case_id: str, seed: int) -> AgentReport:
        Raising.calls += 1
        if case_id == "fig1-case1":
            raise self.error
        return await ScriptedAgent(OraclePolicy()).run(env, case_id, seed)


def test_d1_any_exception_escaping_an_episode_is_stored_in_that_episode(tmp_path: Path) -> None:
    db = tmp_path / "r.duckdb"
    run(db, "r", lambda: Raising(KeyError("an agent bug")), attempts=2, retries=2, cases=("fig1-*",))
    with RolloutStore(db) as store:
        rows = store.query("SELECT case_id, attempt, status, error_kind, error FROM episodes ORDER BY 1, 2")
    assert rows == [
        ("fig1-case1", 0, "error", "internal", "KeyError: 'an agent bug'"),
        ("fig1-case1", 1, "error", "internal", "KeyError: 'an agent bug'"),
        ("fig1-case2", 0, "passed", None, None),
        ("fig1-case2", 1, "passed", None, None),
    ]


def test_an_env_that_cannot_be_built_for_a_case_is_that_episode_s_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A domain whose database or toolkit raises for one case (a user's bug) stores that episode's internal error;
    the run goes on with the other cases."""
    import mantra_env.runner as runner

    def building(suite: object, domain: object, case: str | None = None, **options: object) -> MantraEnv:
        if case == "fig1-case1":
            raise ValueError("the database patch names a missing table")
        return MantraEnv(suite, domain, case=case, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "MantraEnv", building)
    db = tmp_path / "r.duckdb"
    run(db, "r", lambda: ScriptedAgent(OraclePolicy()), attempts=1, retries=2, cases=("fig1-*",))
    with RolloutStore(db) as store:
        rows = store.query("SELECT case_id, status, error_kind, error FROM episodes ORDER BY 1")
    assert rows == [
        ("fig1-case1", "error", "internal", "ValueError: the database patch names a missing table"),
        ("fig1-case2", "passed", None, None),
    ]


def test_configuration_errors_are_stored_at_once_not_retried(tmp_path: Path) -> None:
    Raising.calls = 0
    error = InfrastructureError("not_found", "model x does not exist")
    run(tmp_path / "r.duckdb", "r", lambda: Raising(error), attempts=1, retries=3, cases=("fig1-case1",))
    assert Raising.calls == 1
    with RolloutStore(tmp_path / "r.duckdb") as store:
        assert store.query("SELECT status, error_kind FROM episodes") == [("error", "not_found")]


def test_consecutive_auth_errors_stop_the_run_and_keep_what_is_stored(tmp_path: Path) -> None:
    record = RunRecord(run_id="r", suite="operations/starter", model="test", agent="test")
    revoked = lambda: Flaky(99, kind="auth")  # noqa: E731
    settings = RunSettings(attempts=2, concurrency=1, retries=0, max_auth_errors=3)
    with RolloutStore(tmp_path / "r.duckdb") as store:
        progress = asyncio.run(run_suite(store, record, SUITE, DOMAIN, revoked, settings))  # type: ignore[arg-type]
        assert store.query("SELECT status, error_kind, count(*) FROM episodes GROUP BY ALL") == [("error", "auth", 3)]
    assert progress.done == 3 and progress.total == 28
    assert "3 consecutive authentication errors" in progress.stopped


def test_retry_waits_grow_with_seeded_jitter() -> None:
    import random

    from mantra_env.runner import backoff_delay

    waits = [backoff_delay(1.0, trial, random.Random("0/fig1-case1/0")) for trial in range(4)]
    assert waits == [backoff_delay(1.0, trial, random.Random("0/fig1-case1/0")) for trial in range(4)]
    assert all(0.5 * 2**trial <= wait < 1.5 * 2**trial for trial, wait in enumerate(waits))
    assert waits[0] != backoff_delay(1.0, 0, random.Random("0/fig1-case1/1"))  # episodes do not retry in step


def test_the_core_runner_and_env_import_no_agent_or_provider_library() -> None:
    code = (
        "import sys, mantra_env.runner, mantra_env.env; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('agents', 'litellm', 'strands')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_d6_plan_refuses_before_the_run_is_started(tmp_path: Path) -> None:
    """Every refusal comes before ``start_run``: no run row is left behind."""
    with pytest.raises(RunnerError, match="more than one run can hold"):
        plan(SUITE, DOMAIN, RunSettings(attempts=MAX_EPISODES))
    bad_patch = SUITE.model_copy(
        update={"cases": [SUITE.cases[0].model_copy(update={"database_patch": [{"op": "remove", "path": "nope"}]})]}
    )
    with RolloutStore(tmp_path / "r.duckdb") as store:
        record = RunRecord(run_id="r", suite="s", model="m", agent="a")
        with pytest.raises(DomainError, match=f"case '{SUITE.cases[0].id}': .*cannot remove 'nope'"):
            asyncio.run(run_suite(store, record, bad_patch, DOMAIN, lambda: None, RunSettings()))  # type: ignore[arg-type,return-value]
        assert store.query("SELECT count(*) FROM runs") == [(0,)]
