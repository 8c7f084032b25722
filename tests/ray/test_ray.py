"""``--ray``: the same results as a local run (validate's output, run's stored rows in order, generate's files),
the driver's code and the user's domains reaching the workers through the runtime environment, a killed worker's
task retried, a resumed run, and clear errors (no Ray, nothing at the address, the bundled model)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import duckdb
import pytest
import yaml

from mantra_env.errors import DomainError
from mantra_env.mantra_cli.main import main
from mantra_env.mantra_cli.ray_pool import RayWorkers, ordered_map
from tests.make_install import extras_make_installs

pytestmark = [pytest.mark.ray, pytest.mark.slow]  # one Ray for the file; its tests take 5-12 s each
ROOT = Path(__file__).parents[2]
OPS_MINI = ROOT / "tests" / "generators" / "fixtures" / "ops-mini" / "config.yaml"
TIMING = {"latency_s", "started_at", "finished_at", "created_at", "config", "applied_at"}
"""Columns that differ between any two runs (clock readings; the command line)."""


def test_validate_on_ray_prints_what_a_local_run_prints(
    ray_cluster: RayWorkers, library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suites = ["--suite", "operations/starter", "--suite", "library"]  # a shipped suite and a user domain's
    assert main(["validate", *suites]) == 0
    local = capsys.readouterr().out
    assert main(["validate", *suites, "--ray"]) == 0
    assert capsys.readouterr().out == local
    assert "valid    library/starter lend-dune (h=4)" in local and "15 valid" in local


def test_workers_run_the_driver_s_code_and_their_copy_of_the_user_domain(
    ray_cluster: RayWorkers, library: Path
) -> None:
    def where(_: object) -> tuple[str, str, str]:
        import mantra_env
        from mantra_env.domains import load_domain
        from mantra_env.domains.discovery import domain_source

        assert load_domain("library").name == "library"
        source = domain_source("library")
        assert source is not None
        return os.getcwd(), str(Path(mantra_env.__file__).resolve()), str(source.folder.resolve())

    [(cwd, code, domain)] = list(ray_cluster.map(where, [None]))
    working_dir = Path(cwd).resolve()
    assert Path(code) == working_dir / "mantra_env" / "__init__.py"  # shipped, not the installed mantra-env
    assert Path(domain) == working_dir / "domains" / "library"  # the copy, not the driver's folder
    assert Path(domain) != library.resolve()


def test_ordered_map_gives_the_local_results_in_order(ray_cluster: RayWorkers) -> None:
    def square(number: int) -> int:
        import time

        time.sleep(0.2 if number == 0 else 0)  # the first finishes last
        return number * number

    items = list(range(6))
    assert list(ordered_map(square, items, ray_cluster)) == list(ordered_map(square, items, None)) == [
        0, 1, 4, 9, 16, 25
    ]  # fmt: skip


def test_a_task_whose_worker_dies_is_run_again(ray_cluster: RayWorkers, tmp_path: Path) -> None:
    def dies_once(marker: Path) -> str:
        if not marker.exists():
            marker.write_text("died here once", encoding="utf-8")
            os._exit(1)  # the worker process is gone mid-task, as if killed
        return "second attempt"

    marker = tmp_path / "attempted"
    assert list(ray_cluster.map(dies_once, [marker])) == ["second attempt"]
    assert marker.read_text(encoding="utf-8") == "died here once"


def test_an_error_the_work_raises_comes_back_as_itself(ray_cluster: RayWorkers) -> None:
    def refuse(_: object) -> None:
        raise DomainError("domain 'x' is not installed on this node")

    with pytest.raises(DomainError) as caught:  # the command prints it as one line, as a local error
        list(ray_cluster.map(refuse, [None]))
    assert str(caught.value) == "domain 'x' is not installed on this node"


def _rows(db: Path, table: str) -> list[tuple[object, ...]]:
    """The table's rows in the order they were stored, without the columns that differ between any two runs."""
    with duckdb.connect(str(db), read_only=True) as conn:
        columns = [row[0] for row in conn.execute(f"DESCRIBE {table}").fetchall() if row[0] not in TIMING]
        return conn.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY rowid").fetchall()


def _stored(db: Path) -> dict[str, list[tuple[object, ...]]]:
    return {table: _rows(db, table) for table in ("runs", "episodes", "steps", "check_verdicts")}


CASES = ("fig1-*", "sw-*", "lend-*")
"""Six cases of operations/starter and the library's one (fewer cases, a shorter test)."""


def _run(db: Path, *extra: str, cases: tuple[str, ...] = CASES) -> int:
    models = "scripted:oracle,scripted:random"  # a seeded random agent: its seeds must reach the workers too
    common = ["--model", models, "--suite", "operations/starter,library", "--attempts", "2", "--run-name", "r"]
    return main(["run", *common, "--db", str(db), "--cases", *cases, *extra])


def test_run_on_ray_stores_the_rows_of_a_local_run_in_order(
    ray_cluster: RayWorkers, library: Path, tmp_path: Path
) -> None:
    assert _run(tmp_path / "local.duckdb", "--concurrency", "1") == 0
    assert _run(tmp_path / "ray.duckdb", "--concurrency", "4", "--ray") == 0
    local, on_ray = _stored(tmp_path / "local.duckdb"), _stored(tmp_path / "ray.duckdb")
    assert len(local["episodes"]) == 2 * 2 * 7
    assert on_ray == local


def test_a_run_stopped_and_resumed_on_ray_stores_what_a_local_run_stores(
    ray_cluster: RayWorkers, library: Path, tmp_path: Path
) -> None:
    assert _run(tmp_path / "local.duckdb", "--concurrency", "1") == 0
    stopped = tmp_path / "ray.duckdb"
    # Stopped after the episodes of a few cases (as an interruption leaves some stored) ...
    assert _run(stopped, "--ray", cases=("fig1-*", "lend-*")) == 0
    first = {table: len(rows) for table, rows in _stored(stopped).items()}
    # ... and resumed: the rest is run, nothing is run twice.
    assert _run(stopped, "--ray", "--resume") == 0
    local, resumed = _stored(tmp_path / "local.duckdb"), _stored(stopped)
    assert 0 < first["episodes"] < len(resumed["episodes"])
    for table, rows in local.items():
        assert sorted(resumed[table], key=repr) == sorted(rows, key=repr), table


VALIDATION_STAGES = ("conflict_resolution/", "fix_repair/", "locus_reassessment/", "backward_audit/")


def test_a_model_behind_an_endpoint_plays_on_the_workers_as_here(
    ray_cluster: RayWorkers, library: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model agent whose endpoint the workers reach: its episodes, with every message, stored as a local run's."""
    from tests.agents.stub_server import serve, text

    with serve([], respond=lambda body, headers: text("I cannot help with that.")) as stub:
        models = tmp_path / "models.yaml"
        models.write_text(f"models:\n  stub:\n    model: openai/stub-model\n    api_base: {stub.api_base}\n"
                          "    api_key: not-a-key\n")  # fmt: skip
        monkeypatch.setenv("MANTRA_MODELS_FILE", str(models))
        common = ["run", "--model", "stub", "--suite", "library", "--attempts", "2", "--run-name", "m"]
        assert main([*common, "--db", str(tmp_path / "local.duckdb"), "--concurrency", "1"]) == 0
        here = len(stub.requests)
        assert main([*common, "--db", str(tmp_path / "ray.duckdb"), "--ray"]) == 0
    assert len(stub.requests) == 2 * here >= 2 * 2  # each run: the preflight here, then one request per episode
    local, on_ray = _stored(tmp_path / "local.duckdb"), _stored(tmp_path / "ray.duckdb")
    assert len(local["episodes"]) == 2 and "I cannot help with that." in str(local["episodes"])
    assert _conversations(on_ray) == _conversations(local)  # the messages, but their random ids and timings


def _conversations(stored: dict[str, list[tuple[object, ...]]]) -> dict[str, list[object]]:
    """The stored rows, each JSON text parsed and left without the ids and timings that differ between runs."""
    volatile = {"tracking_id", "metrics"}

    def plain(value: object) -> object:
        try:
            return _without(json.loads(value), volatile) if isinstance(value, str) else value
        except json.JSONDecodeError:
            return value

    return {table: [tuple(plain(value) for value in row) for row in rows] for table, rows in stored.items()}


def _generate(folder: Path, *extra: str) -> dict[str, bytes]:
    """ops-mini generated in ``folder`` (recording every answer), and what it wrote: the validation and export
    files, the solver memo, and the recording."""
    config = yaml.safe_load(OPS_MINI.read_text(encoding="utf-8"))
    config["document_path"] = str(OPS_MINI.parent / config["document_path"])
    config["llm"]["replay"] |= {"path": str(OPS_MINI.parent / "responses.yaml"), "record_to": "recording.jsonl"}
    (folder / "config.yaml").parent.mkdir()
    (folder / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    run_dir = folder / "run"
    run_dir.mkdir()
    assert main(["generate", "--config", str(folder / "config.yaml"), "--resume", str(run_dir), *extra]) == 0
    files = {
        path.relative_to(run_dir).as_posix(): path.read_bytes()
        for part in ("validation", "export")
        for path in sorted((run_dir / part).rglob("*"))
        if path.is_file()
    }
    memo = {  # the solver memo written here from the workers' results; its timings differ between any two runs
        path.relative_to(run_dir).as_posix(): json.dumps(_without(json.loads(path.read_bytes()), {"seconds"})).encode()
        for path in sorted((run_dir / "solver_memo").rglob("*.json"))
    }
    # The recording: the validation stage's answers in order (one sample: an order of their own); the earlier
    # stages' requests go out concurrently, in an order that differs between two local runs too.
    lines = (folder / "recording.jsonl").read_bytes().splitlines()
    in_validation = [line for line in lines if json.loads(line)["key"].startswith(VALIDATION_STAGES)]
    recording = {"recording: validation": b"\n".join(in_validation), "recording: all": b"\n".join(sorted(lines))}
    return files | memo | recording


def _without(value: object, keys: set[str]) -> object:
    if isinstance(value, dict):
        return {key: _without(item, keys) for key, item in value.items() if key not in keys}
    if isinstance(value, list):
        return [_without(item, keys) for item in value]
    return value


@pytest.mark.slow
def test_generate_on_ray_writes_the_files_of_a_local_run(ray_cluster: RayWorkers, tmp_path: Path) -> None:
    local = _generate(tmp_path / "local")
    on_ray = _generate(tmp_path / "ray", "--ray")
    assert {name.split("/")[0] for name in local} >= {"export", "validation", "solver_memo"}
    assert local["recording: validation"].count(b"\n") >= 3  # conflict, fix, locus and backward answers
    assert on_ray.keys() == local.keys()
    assert [name for name in local if on_ray[name] != local[name]] == []


def test_ray_is_an_extra_the_core_never_imports(monkeypatch: pytest.MonkeyPatch) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not [dep for dep in project["dependencies"] if dep.startswith("ray")]
    assert project["optional-dependencies"]["ray"] == ["ray[client]==2.60.0"]
    assert "ray" in extras_make_installs()  # make test has it
    imports_ray = re.compile(r"^\s*(import|from) ray\b", re.MULTILINE)
    assert [path for path in (ROOT / "mantra_env").rglob("*.py") if imports_ray.search(path.read_text("utf-8"))] == []
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed: the commands without --ray work
    assert main(["validate", "--suite", "operations/starter", "--cases", "fig1-case1"]) == 0


def test_ray_errors_are_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    assert main(["validate", "--suite", "operations/starter", "--ray"]) == 2
    assert "install the extra mantra-env[ray]" in capsys.readouterr().err

    assert main(["run", "--ray", "--suite", "operations", "--db", ":memory:"]) == 2  # the default model: bundled
    err = capsys.readouterr().err
    assert "--ray: the model 'local' is the bundled local model" in err and "Traceback" not in err


def test_an_address_where_nothing_answers_is_one_line() -> None:
    """In a process of its own: this one's Ray (the fixture's) would be used whatever the address."""
    command = [
        sys.executable,
        "-m",
        "mantra_env.mantra_cli.validate",
        "--suite",
        "operations/starter",
        "--ray",
        "127.0.0.1:9",
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: --ray 127.0.0.1:9: nothing answers there"), done.stderr
    assert "Traceback" not in done.stderr
