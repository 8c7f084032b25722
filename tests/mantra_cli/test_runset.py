"""Several suites and models in one ``mantra run`` (issue 34 point 5): ``--suite retail,airline``, ``--suite all``,
``--model a,b``; one plan, one progress display, a run id per model and suite naming both, ``--resume`` and
``--retry-errors N`` over the set."""

from __future__ import annotations

from pathlib import Path

import pytest

from mantra_env.agent import InfrastructureError
from mantra_env.agents.scripted import SCRIPTED, NoopPolicy
from mantra_env.mantra_cli.run import main
from mantra_env.mantra_cli.runset import PairName, RunSetError, expand_models, expand_suites, set_run_ids
from mantra_env.mantra_cli.suites import list_suites
from mantra_env.runner import RunnerError
from mantra_env.store import RolloutStore

# One case of each of two domains (ids are per suite), two attempts: 2 suites x 2 models x 2 = 8 episodes.
SET = ["--suite", "operations,retail", "--attempts", "2", "--cases", "fig1-case1", "generated-s000-1"]
RUN_IDS = [
    "S-scripted_oracle-operations",
    "S-scripted_oracle-retail",
    "S-scripted_noop-operations",
    "S-scripted_noop-retail",
]


def _episodes(db: Path) -> dict[str, list[str]]:
    with RolloutStore(db) as store:
        rows = store.query("SELECT run_id, status FROM episodes ORDER BY run_id, case_id, attempt")
    found: dict[str, list[str]] = {}
    for run_id, status in rows:
        found.setdefault(run_id, []).append(status)
    return found


def test_a_comma_splits_suites_unless_a_path_of_that_name_exists(tmp_path: Path) -> None:
    assert expand_suites("retail,airline") == (["retail", "airline"], [])
    assert expand_suites("retail, airline,retail") == (["retail", "airline"], [])  # a name given twice runs once
    folder = tmp_path / "my,suite"
    folder.mkdir()
    assert expand_suites(str(folder)) == ([str(folder)], [])
    with pytest.raises(RunSetError, match="empty name between commas"):
        expand_suites("retail,,airline")
    assert expand_models(None) == [None]
    assert expand_models("scripted:oracle,scripted:noop") == ["scripted:oracle", "scripted:noop"]
    with pytest.raises(RunSetError, match="--model 'a,' has an empty name"):
        expand_models("a,")


def test_all_is_every_domains_default_suite() -> None:
    suites, _ = list_suites()
    defaults = [item.run_name for item in suites if item.default]
    chosen, left_out = expand_suites("all")
    assert sorted(chosen) == sorted(defaults) and left_out == []
    assert {"operations/starter", "retail/generated", "airline/generated", "telecom/generated"} <= set(chosen)
    assert expand_suites("all,operations/generated")[0] == [*chosen, "operations/generated"]


def test_run_ids_name_the_model_and_the_domain() -> None:
    pairs = [PairName("scripted:oracle", "retail", "generated"), PairName("openai/gpt-4o", "airline", "generated")]
    assert set_run_ids("nightly", pairs) == ["nightly-scripted_oracle-retail", "nightly-openai_gpt-4o-airline"]
    two_of_one_domain = [PairName("m", "operations", "starter"), PairName("m", "operations", "generated")]
    assert set_run_ids("n", two_of_one_domain) == ["n-m-operations.starter", "n-m-operations.generated"]
    with pytest.raises(RunSetError, match="would be stored as n-m-retail"):
        set_run_ids("n", [PairName("m", "retail", "generated"), PairName("m", "retail", "generated")])
    with pytest.raises(RunnerError, match="is not a run name"):
        set_run_ids("x" * 120, pairs)


@pytest.mark.slow
def test_a_set_runs_every_model_on_every_suite_in_one_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.duckdb"
    args = [*SET, "--model", "scripted:oracle,scripted:noop", "--run-name", "S", "--db", str(db)]
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert _episodes(db) == {run_id: ["passed" if "oracle" in run_id else "failed"] * 2 for run_id in RUN_IDS}
    for run_id in RUN_IDS:  # the summary per (model, suite)
        suite = "operations/starter" if run_id.endswith("operations") else "retail/generated"
        assert f"run {run_id}: scripted:{run_id.split('-')[1].split('_')[1]} on {suite}, 1 case x 2 attempts" in out
    side_by_side = "scripted:oracle  100.0 [20.7, 100.0] Wilson (0 err)  100.0 [20.7, 100.0] Wilson (0 err)"
    assert side_by_side in out
    assert "--run S-scripted_oracle-operations --run S-scripted_oracle-retail --run S-scripted_noop-" in out
    progress = [line for line in err.splitlines() if line.startswith("episodes: ")]
    assert progress and all(line.split()[1].endswith("/8") for line in progress)  # one display over the set
    assert progress[-1].split()[1:3] == ["8/8", "(100%)"]
    with RolloutStore(db) as store:
        record = store.run_record("S-scripted_noop-retail")
        assert record is not None and record.config["suite"] == "retail" and record.name == "S"  # its own suite

    # The set again without --resume is refused whole, before any of its runs starts.
    assert main(args) == 2
    assert "run 'S-scripted_oracle-operations' exists" in capsys.readouterr().err
    assert main([*args, "--resume"]) == 0
    assert capsys.readouterr().out.count("2 episodes were already stored") == 4


def test_a_set_is_planned_whole_before_anything_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "r.duckdb"
    assert (
        main(["--suite", "operations,retail", "--cases", "fig1-*", "--model", "scripted:oracle", "--db", str(db)]) == 2
    )
    assert "matches no case of retail/generated" in capsys.readouterr().err  # retail has no fig1 case
    assert not db.exists()
    assert main(["--suite", "operations,nowhere", "--model", "scripted:oracle", "--db", str(db)]) == 2
    assert "nowhere" in capsys.readouterr().err and not db.exists()
    assert main(["--model", "scripted:oracle,scripted:genius", "--cases", "fig1-case1", "--db", str(db)]) == 2
    assert "unknown scripted agent 'genius'" in capsys.readouterr().err and not db.exists()


@pytest.mark.slow
def test_resume_without_a_name_continues_the_latest_run_of_each_pair(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.duckdb"
    assert main([*SET, "--model", "scripted:oracle,scripted:noop", "--run-name", "S", "--db", str(db)]) == 0
    with RolloutStore(db) as store:  # as a Ctrl-C during the third run would have left the set
        for table in ("check_verdicts", "steps", "episodes"):
            store.conn.execute(f"DELETE FROM {table} WHERE run_id = 'S-scripted_noop-retail'")
            store.conn.execute(f"DELETE FROM {table} WHERE run_id = 'S-scripted_noop-operations' AND attempt = 1")
        store.conn.execute("DELETE FROM runs WHERE run_id = 'S-scripted_noop-retail'")
    capsys.readouterr()
    assert main([*SET, "--model", "scripted:oracle,scripted:noop", "--resume", "--db", str(db)]) == 0
    out, err = capsys.readouterr()
    assert "resuming the latest run of each suite and model: S-scripted_oracle-operations" in err
    assert out.count("2 episodes were already stored") == 2 and "1 episodes were already stored" in out
    runs = _episodes(db)  # the run the set never started starts under the set's name, like the others
    assert runs["S-scripted_noop-operations"] == runs["S-scripted_noop-retail"] == ["failed", "failed"]
    assert sorted(runs) == sorted(RUN_IDS)


class FlakyPolicy(NoopPolicy):
    """Fails with a retryable infrastructure error while its budget lasts (a provider outage), then answers."""

    name = "flaky"
    budget = 0

    def start(self, *args: object) -> None:
        if FlakyPolicy.budget > 0:
            FlakyPolicy.budget -= 1
            raise InfrastructureError("server", "stub outage")


@pytest.mark.slow
def test_retry_errors_n_repeats_until_no_retryable_error_is_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(SCRIPTED, "flaky", FlakyPolicy)
    monkeypatch.setattr(FlakyPolicy, "budget", 6)  # 4 episodes fail, then 2 of their first retries
    db = tmp_path / "r.duckdb"
    args = [*SET, "--model", "scripted:flaky", "--retries", "0", "--concurrency", "1", "--run-name", "F"]
    assert main([*args, "--db", str(db)]) == 1  # every episode an infrastructure error
    assert all(statuses == ["error", "error"] for statuses in _episodes(db).values())
    capsys.readouterr()
    assert main([*args, "--db", str(db), "--resume", "--retry-errors", "5"]) == 0
    err = capsys.readouterr().err
    assert "retry pass 2 of 5: 2 retryable error episodes in" in err and "retry pass 3" not in err
    assert _episodes(db) == {"F-scripted_flaky-operations": ["failed"] * 2, "F-scripted_flaky-retail": ["failed"] * 2}


def test_retry_passes_stop_at_n(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(SCRIPTED, "flaky", FlakyPolicy)
    monkeypatch.setattr(FlakyPolicy, "budget", 100)
    db = tmp_path / "r.duckdb"
    args = ["--model", "scripted:flaky", "--cases", "fig1-case1", "--attempts", "1", "--retries", "0", "--db", str(db)]
    assert main([*args, "--run-name", "G"]) == 1
    capsys.readouterr()
    with RolloutStore(db) as store:  # a single run stores its --run-name as before
        assert (record := store.run_record("G")) is not None and record.name == "G"
    assert main([*args, "--resume", "--retry-errors", "3"]) == 1  # "G": the latest run of the suite and model
    err = capsys.readouterr().err
    assert "retry pass 3 of 3: 1 retryable error episodes in 1 runs" in err and "pass 4" not in err
    assert FlakyPolicy.budget == 100 - 4  # the first run, then three passes
    assert main([*args, "--resume", "--retry-errors", "-1"]) == 2
    assert "--retry-errors takes a number of passes, at least 1 (got -1)" in capsys.readouterr().err
