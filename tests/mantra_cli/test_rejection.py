"""``mantra rejection-sample`` end to end with a model behind a stub OpenAI-compatible server: on each case the
stub plays the oracle's calls in one rollout and gives up in the other, so exactly half the rollouts pass and only
those (with the oracle's demonstrations) are kept."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from mantra_env.agents.scripted import oracle_plan
from mantra_env.domains import find_suite
from mantra_env.graders.export import message_problems
from mantra_env.grading import GRADER_VERSION
from mantra_env.mantra_cli.rejection import main, run_name, statistics
from mantra_env.store import RolloutStore, RunRecord
from tests.agents.stub_server import serve, text, tool_call
from tests.mantra_cli.test_run import stub_models

DOMAIN, SUITE = find_suite("operations")
assert DOMAIN is not None
CASES = [case for case in SUITE.cases if case.id.startswith("fig1-")]
PLANS = {case.scenario.prompt.strip(): oracle_plan(case, DOMAIN.tool_specs()) for case in CASES}


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


class HalfCompliant:
    """Per case, the first rollout to start plays the oracle's plan, the next gives up at once, and so on."""

    def __init__(self) -> None:
        self.started: dict[str, int] = {}
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any], headers: Any) -> dict[str, Any]:
        messages = body["messages"]
        prompt = next((_content(m).strip() for m in messages if m["role"] == "user"), "")
        plan = PLANS.get(prompt)
        if plan is None:
            return text("ready")  # the preflight request
        made = sum(1 for m in messages if m["role"] == "assistant")
        if made == 0:
            with self.lock:
                self.started[prompt] = self.started.get(prompt, 0) + 1
                if self.started[prompt] % 2 == 0:
                    return text("I cannot help with that.")
        if made < len(plan):
            return tool_call(plan[made]["tool"], plan[made]["arguments"], call_id=f"call_{made}")
        return text("Done.")


def test_keeps_the_passing_rollouts_and_the_oracles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sft.jsonl"
    with serve([], HalfCompliant()) as stub:
        stub_models(tmp_path, monkeypatch, stub.api_base)
        args = ["--model", "stub", "--k", "2", "--cases", "fig1-*", "--db", str(tmp_path / "r.duckdb")]
        assert main([*args, "--out", str(out), "--concurrency", "1"]) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    model = [r for r in records if not r["demonstration"]]
    oracle = [r for r in records if r["demonstration"]]
    assert len(model) == len(CASES) and len(oracle) == len(CASES)
    assert all(r["status"] == "passed" and r["reward"] == 1.0 for r in records)
    assert all(not message_problems(r["messages"]) for r in records)
    stats = json.loads((tmp_path / "sft.jsonl.stats.json").read_text(encoding="utf-8"))
    (entry,) = stats["models"].values()
    assert (entry["sampled"], entry["passed"], entry["pass_rate"]) == (2 * len(CASES), len(CASES), 0.5)
    assert all(case == {"sampled": 2, "passed": 1} for case in entry["cases"].values())
    assert stats["kept_episodes"] == len(CASES) and stats["oracle_demonstrations"] == len(CASES)
    assert f"{len(CASES)}/{2 * len(CASES)} rollouts passed (50%)" in capsys.readouterr().out


def test_an_existing_output_is_refused_before_anything_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sft.jsonl"
    out.write_text("mine\n", encoding="utf-8")
    assert main(["--model", "scripted:noop", "--db", str(tmp_path / "r.duckdb"), "--out", str(out)]) == 2
    assert "exists: pass --force" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == "mine\n" and not (tmp_path / "r.duckdb").exists()


def test_nothing_kept_is_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--model", "scripted:noop", "--k", "1", "--cases", "fig1-case1", "--no-oracle"]
    assert main([*args, "--db", str(tmp_path / "r.duckdb"), "--out", str(tmp_path / "sft.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "error: nothing to keep" in err and "Traceback" not in err
    assert not (tmp_path / "sft.jsonl").exists()


def test_statistics_count_the_combined_verdicts_of_this_grader_only(tmp_path: Path) -> None:
    """Issue 31: the run an older grader scored is neither counted nor kept; a pass with an unrequested write is
    a failure."""
    from tests.graders.test_export import _verdicts_db

    _verdicts_db(tmp_path / "v.duckdb")
    entry = statistics(str(tmp_path / "v.duckdb"), kept=1, demonstrations=0)["models"]["some-model"]
    assert (entry["sampled"], entry["passed"], entry["cases_with_a_pass"]) == (2, 1, 1)


def test_a_rejection_database_of_an_older_grader_is_sampled_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The model's run of an older grader cannot be resumed (its verdicts mean less): a run of its own is sampled."""
    db = tmp_path / "r.duckdb"
    with RolloutStore(db) as store:  # as `mantra rejection-sample` left it before unrequested writes were graded
        store.start_run(RunRecord(run_id="rejection-scripted-noop", suite="operations/starter", model="scripted:noop",
                                  agent="scripted:noop", grader_version=1))  # fmt: skip
    args = ["--model", "scripted:noop", "--k", "1", "--cases", "fig1-case1", "--no-oracle", "--db", str(db)]
    assert main([*args, "--out", str(tmp_path / "sft.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "nothing to keep" in err and "refused" not in err
    with RolloutStore(db, read_only=True) as store:
        assert store.query("SELECT run_id, grader_version FROM runs ORDER BY run_id") == [
            ("rejection-scripted-noop", 1),
            (run_name("scripted:noop"), GRADER_VERSION),
        ]
