"""Fault injection: a 50-episode run at concurrency 8 through the real strands agent and litellm against a stub
endpoint that, at seeded random points (after the preflight passed), fails like a provider (500, 503, dropped
connections, 401, 404, a response without choices) or answers like a broken model (a lone surrogate, 900-deep
arguments).

The stub keys every fault by the episode (carried in a request header) and the model turn (the
number of assistant messages in the request), never by arrival order, so the outcome does not depend on timing.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

from mantra_env.agents.base import play
from mantra_env.agents.models import ModelConfig
from mantra_env.agents.preflight import PreflightError, preflight
from mantra_env.agents.scripted import OraclePolicy
from mantra_env.agents.strands_agent import StrandsAgent
from mantra_env.domains import find_suite
from mantra_env.env import MantraEnv
from mantra_env.graders.analysis import summarize_run
from mantra_env.runner import RunSettings, run_suite
from mantra_env.store import RolloutStore
from mantra_env.store.records import RunRecord
from tests.agents.stub_server import serve, text, tool_call

DOMAIN, SUITE = find_suite("operations")
assert DOMAIN is not None
STUB = ModelConfig(alias="stub", model="openai/stub-model", api_key="not-a-key")
CASES = tuple(case.id for case in SUITE.cases[:10])
ATTEMPTS = 5  # 10 cases x 5 attempts = 50 episodes
PROVIDER = {
    "500": ({"status": 500}, "server"),
    "503": ({"status": 503}, "server"),
    "drop": ({"drop": True}, "connection"),
}
PROVIDER |= {"401": ({"status": 401}, "auth"), "404": ({"status": 404}, "not_found")}
PROVIDER |= {"empty": ({"choices": []}, "bad_output")}  # a completion without a choice (D11)
MODEL = {
    "surrogate": tool_call("check_inventory", '{"item_name": "\\ud800"}', "bad"),
    "deep": tool_call("check_inventory", '{"item_name": ' + "[" * 900 + "]" * 900 + "}", "bad"),
}


class Tagged(StrandsAgent):
    """The strands agent, telling the endpoint which episode a request belongs to (a header)."""

    tag = ""

    async def run(self, env: MantraEnv, case_id: str, seed: int) -> Any:
        self.tag = f"{case_id}/{seed}"
        return await super().run(env, case_id, seed)

    def strands_model(self) -> Any:
        model = super().strands_model()
        model.config["params"] = {**model.config["params"], "extra_headers": {"X-Episode": self.tag}}
        return model


def plans() -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """What the stub model does per case: the oracle's compliant calls on even cases, nothing on odd ones."""
    result = {}
    for index, case_id in enumerate(CASES):
        calls = play(MantraEnv(SUITE, DOMAIN), OraclePolicy(), case_id)["trace"].calls if index % 2 == 0 else ()
        result[case_id] = [(call.tool, dict(call.args)) for call in calls]
    return result


def schedule(seed: int) -> dict[tuple[str, int], tuple[str, int]]:
    """(case, attempt) -> (fault name, model turn at which it happens), for about 60 % of the episodes; the turn
    is one the episode reaches (at most its final answer)."""
    rng, faults, steps = random.Random(seed), sorted(PROVIDER) + sorted(MODEL), plans()
    chosen = {}
    for case_id in CASES:
        for attempt in range(ATTEMPTS):
            if rng.random() < 0.6:
                chosen[(case_id, attempt)] = (rng.choice(faults), rng.randrange(len(steps[case_id]) + 1))
    return chosen


def run(db: Path, faults: dict[tuple[str, int], tuple[str, int]]) -> RolloutStore:
    steps = plans()

    def respond(body: dict[str, Any], headers: Any) -> dict[str, Any]:
        if not headers.get("X-Episode"):  # the preflight
            return text("ready")
        case_id, seed = headers["X-Episode"].split("/")
        turn = sum(message.get("role") == "assistant" for message in body["messages"])
        fault = faults.get((case_id, int(seed)))
        if fault is not None and fault[1] == turn:
            return PROVIDER[fault[0]][0] if fault[0] in PROVIDER else MODEL[fault[0]]
        plan = steps[case_id]
        return tool_call(*plan[turn], f"call_{turn}") if turn < len(plan) else text("done")

    with serve([], respond) as stub:
        agent = lambda: Tagged(STUB, api_base=stub.api_base)  # noqa: E731
        preflight(agent(), SUITE, DOMAIN)
        record = RunRecord(run_id="r", suite="operations/starter", model="stub", agent="strands:stub")
        settings = RunSettings(
            attempts=ATTEMPTS, concurrency=8, retries=1, backoff_s=0.0, cases=CASES, max_auth_errors=1000
        )
        store = RolloutStore(db)
        asyncio.run(run_suite(store, record, SUITE, DOMAIN, agent, settings))
    return store


@pytest.mark.slow
def test_provider_faults_are_removed_and_model_faults_scored(tmp_path: Path) -> None:
    faults = schedule(seed=13)
    assert {name for name, _ in faults.values()} == set(PROVIDER) | set(MODEL)  # every fault is exercised
    provider = {key: name for key, (name, _) in faults.items() if name in PROVIDER}
    episodes = "SELECT case_id, attempt, status, reward, error_kind FROM episodes ORDER BY 1, 2"
    with run(tmp_path / "faulty.duckdb", faults) as faulty:
        rows = {(case, attempt): rest for case, attempt, *rest in faulty.query(episodes)}
        assert len(rows) == 50 and faulty.query("SELECT count(*) FROM episodes") == [(50,)]  # each exactly once
        summary = summarize_run(faulty, "r", k=ATTEMPTS)
    # The reference: the same run without the provider faults (the model's own bad output stays).
    model_only = {key: fault for key, fault in faults.items() if key not in provider}
    with run(tmp_path / "reference.duckdb", model_only) as reference:
        expected = {(case, attempt): rest for case, attempt, *rest in reference.query(episodes)}
        for key, name in provider.items():
            assert rows[key] == ["error", None, PROVIDER[name][1]], key
            for table in ("episodes", "steps", "check_verdicts"):
                reference.conn.execute(f"DELETE FROM {table} WHERE case_id = ? AND attempt = ?", list(key))
        assert {key: row for key, row in rows.items() if key not in provider} == {
            key: row for key, row in expected.items() if key not in provider
        }
        assert {row[2] for key, row in rows.items() if faults.get(key, ("",))[0] in MODEL} == {"model"}
        clean = summarize_run(reference, "r", k=ATTEMPTS)
    assert summary.errors == len(provider) and summary.scored == 50 - len(provider)
    assert 0 < summary.pass_at_1.value < 1
    assert (summary.pass_at_1.value, summary.scored) == (clean.pass_at_1.value, clean.scored)


@pytest.mark.slow
@pytest.mark.parametrize(("answer", "fix"), [({"status": 400}, "tool calling"), ({"status": 404}, "model")])
def test_configuration_faults_abort_before_any_episode(answer: dict[str, Any], fix: str) -> None:
    with serve([answer] * 3) as stub:
        with pytest.raises(PreflightError, match=fix):
            preflight(Tagged(STUB, api_base=stub.api_base), SUITE, DOMAIN)
        assert len(stub.requests) == 1
