"""``mantra export``: the files it writes load back (JSONL, ``datasets.load_from_disk``) and bad input is one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import datasets
import pytest

from mantra_env.graders.export import message_problems
from mantra_env.mantra_cli.export import main as export_main
from mantra_env.mantra_cli.main import main as mantra


def _oracle_count(db: Path) -> int:
    import duckdb

    with duckdb.connect(str(db), read_only=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM episodes JOIN runs USING (run_id) WHERE model = 'scripted:oracle'"
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_openai_jsonl_round_trips(scripted_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sft.jsonl"
    assert (
        mantra(["export", "--db", str(scripted_db), "--format", "openai-jsonl", "--include-oracle", "--out", str(out)])
        == 0
    )
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == _oracle_count(scripted_db)
    assert f"{len(lines)} episodes ({len(lines)} oracle demonstrations)" in capsys.readouterr().out
    for line in lines:
        record = json.loads(line)
        assert message_problems(record["messages"]) == []
        assert {"suite", "suite_hash", "case_id", "model", "run_id", "reward", "verdict", "tools"} <= set(record)
        assert record["tools"][0]["type"] == "function"
    loaded = datasets.load_dataset("json", data_files=str(out), split="train")
    assert loaded.num_rows == len(lines)


def test_hf_dataset_loads_from_disk(scripted_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    argv = ["--db", str(scripted_db), "--format", "hf-dataset", "--include-oracle", "--passed-only", "--out", str(out)]
    assert export_main(argv) == 0
    loaded = datasets.load_from_disk(str(out))
    assert loaded.num_rows > 0 and set(loaded["status"]) == {"passed"}
    for row in loaded:
        assert message_problems(row["messages"]) == []  # Arrow adds null keys: still a valid conversation
        assert json.loads(row["tools"])[0]["type"] == "function" and json.loads(row["verdict"])["passed"]
    assert export_main(argv) == 2  # exists: refused without --force, the first export kept
    assert datasets.load_from_disk(str(out)).num_rows == loaded.num_rows
    assert export_main([*argv, "--force"]) == 0


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--db", "{tmp}/absent.duckdb", "--format", "openai-jsonl"], "no such rollout database"),
        (["--db", "{tmp}/notes.txt", "--format", "openai-jsonl"], "cannot open rollout database"),
        (["--db", "{db}", "--format", "csv"], "unknown --format 'csv'"),
        (["--db", "{db}", "--format", "openai-jsonl"], "--include-oracle"),
    ],
)
def test_bad_input_is_one_clear_line(
    argv: list[str], says: str, scripted_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("not a database\n")
    argv = [arg.format(tmp=tmp_path, db=scripted_db) for arg in argv]
    assert export_main([*argv, "--out", str(tmp_path / "out.jsonl")]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out.jsonl").exists()


def test_n7_an_out_that_cannot_be_written_is_one_line_and_leaves_nothing(
    scripted_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--db", str(scripted_db), "--format", "openai-jsonl", "--include-oracle"]
    assert export_main([*argv, "--out", "/proc/self/nope/e.jsonl"]) == 2  # its folder cannot be created
    err = capsys.readouterr().err
    assert "cannot write the export to /proc/self/nope/e.jsonl" in err and "pass another --out" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    folder = tmp_path / "existing"
    (folder / "kept").mkdir(parents=True)
    assert export_main([*argv, "--out", str(folder), "--force"]) == 2  # a folder is no file to replace
    err = capsys.readouterr().err
    assert f"{folder} is a folder" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert [path.name for path in tmp_path.rglob("*")] == ["existing", "kept"]  # no temporary file left


def test_passed_only_says_which_passes_an_older_grader_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 31: a run graded on the checks alone was never checked for unrequested writes; --passed-only leaves its
    passes out and says so, also when nothing else is left."""
    import duckdb

    from tests.graders.test_export import _verdicts_db

    db, out = tmp_path / "v.duckdb", tmp_path / "p.jsonl"
    _verdicts_db(db)
    assert export_main(["--db", str(db), "--format", "openai-jsonl", "--passed-only", "--out", str(out)]) == 0
    (line,) = out.read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["unrequested_writes"] == [] and json.loads(line)["status"] == "passed"
    assert "note: 1 passed episode(s) of runs graded by an older grader" in capsys.readouterr().err
    with duckdb.connect(str(db)) as conn:
        conn.execute("DELETE FROM episodes WHERE run_id = 'new' AND attempt = 1")
    assert (
        export_main(["--db", str(db), "--format", "openai-jsonl", "--passed-only", "--out", str(out), "--force"]) == 2
    )
    err = capsys.readouterr().err
    assert "1 passed episode(s) of runs graded by an older grader" in err and len(err.strip().splitlines()) == 1


def test_split_exports_one_side(scripted_db: Path, tmp_path: Path) -> None:
    counts = {}
    for side in ("train", "test"):
        out = tmp_path / f"{side}.jsonl"
        argv = ["--db", str(scripted_db), "--format", "openai-jsonl", "--include-oracle", "--out", str(out)]
        assert export_main([*argv, "--split", side]) == 0
        records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        assert records and {record["tags"]["split"] for record in records} == {side}
        counts[side] = len(records)
    assert counts["train"] + counts["test"] == _oracle_count(scripted_db)


def _arguments(messages: list[dict[str, Any]]) -> list[Any]:
    return [call["function"]["arguments"] for message in messages for call in message.get("tool_calls") or []]


def test_arguments_are_objects_in_jsonl_unless_asked_and_text_in_the_dataset(scripted_db: Path, tmp_path: Path) -> None:
    """Objects by default (chat templates write them with tojson); --arguments json-text for the OpenAI convention;
    the hf-dataset holds text, since Arrow would give each object the other calls' keys as nulls."""
    argv = ["--db", str(scripted_db), "--include-oracle", "--format"]
    assert export_main([*argv, "openai-jsonl", "--out", str(tmp_path / "o.jsonl")]) == 0
    assert export_main([*argv, "openai-jsonl", "--arguments", "json-text", "--out", str(tmp_path / "t.jsonl")]) == 0
    assert export_main([*argv, "hf-dataset", "--out", str(tmp_path / "ds")]) == 0
    objects = [a for line in (tmp_path / "o.jsonl").open() for a in _arguments(json.loads(line)["messages"])]
    texts = [a for line in (tmp_path / "t.jsonl").open() for a in _arguments(json.loads(line)["messages"])]
    stored = [a for row in datasets.load_from_disk(str(tmp_path / "ds")) for a in _arguments(row["messages"])]
    assert objects and all(isinstance(a, dict) for a in objects)
    assert [json.loads(a) for a in texts] == objects == [json.loads(a) for a in stored]
