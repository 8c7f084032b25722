"""Stored episodes as OpenAI tool-calling records (graders/export.py) and the structure check."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mantra_env.agents.base import play
from mantra_env.agents.scripted import SCRIPTED
from mantra_env.domains import find_suite
from mantra_env.env import MantraEnv
from mantra_env.graders.export import (
    ExportError,
    ExportRecord,
    export_records,
    message_problems,
    older_grader_passes,
    trace_messages,
)
from mantra_env.grading import GRADER_VERSION
from mantra_env.resume import suite_hash
from mantra_env.splits import SplitError, suite_split
from mantra_env.store import RolloutStore, appender
from mantra_env.store.records import EpisodeRecord, RunRecord
from mantra_env.store.writer import EpisodeWriter
from mantra_env.trace import ToolCall, ToolError, Trace
from mantra_env.unrequested import UnrequestedWrite
from mantra_env.verdict import Verdict
from tests.checks.strategies import json_values

SUITE = "operations/starter"


def _oracle_episode(case_index: int = 0) -> tuple[str, dict[str, Any]]:
    domain, suite = find_suite(SUITE)
    assert domain is not None
    case_id = suite.cases[case_index].id
    return case_id, play(MantraEnv(suite, domain), SCRIPTED["oracle"](), case_id)


def _strands_history(prompt: str, trace: Trace) -> list[Any]:
    """What a strands agent stores: Bedrock-style content blocks, two calls in the first assistant turn."""
    history: list[Any] = [{"role": "user", "content": [{"text": prompt}]}]
    calls = list(trace.calls)
    turns = [calls[:2], *[[call] for call in calls[2:]]]
    for number, turn in enumerate(turns):
        uses = [{"toolUse": {"toolUseId": f"tooluse_{c.step}", "name": c.tool, "input": c.args}} for c in turn]
        history.append({"role": "assistant", "content": [{"text": f"step {number}"}, *uses]})
        results = [
            {"toolResult": {"toolUseId": f"tooluse_{c.step}", "status": "success", "content": [{"json": c.result}]}}
            for c in turn
        ]
        history.append({"role": "user", "content": results})
    history.append({"role": "assistant", "content": [{"text": trace.final_answer or "done"}]})
    return history


def _model_db(path: Path, messages: list[Any] | None = None, stored_hash: str | None = None) -> tuple[str, Trace]:
    case_id, played = _oracle_episode()
    trace = played["trace"]
    domain, suite = find_suite(SUITE)
    assert domain is not None
    prompt = suite.case(case_id).scenario.prompt
    with RolloutStore(path) as store:
        run = RunRecord(run_id="m1", suite=SUITE, model="some-model", agent="strands", suite_hash=stored_hash)
        store.start_run(run)
        history = _strands_history(prompt, trace) if messages is None else messages
        store.record_episode(
            EpisodeRecord(
                run_id="m1",
                case_id=case_id,
                attempt=0,
                status="passed",
                reward=played["reward"],
                verdict=played["verdict"],
                trace=trace,
                messages=history,
            )
        )
    return case_id, trace


def test_the_oracle_is_exported_only_as_asked_and_as_demonstrations(scripted_db: Path) -> None:
    with pytest.raises(ExportError, match="--include-oracle"):
        list(export_records(scripted_db))
    records = list(export_records(scripted_db, include_oracle=True))
    with RolloutStore(scripted_db, read_only=True) as store:
        stored = store.query(
            "SELECT e.case_id, e.attempt, e.reward, e.steps FROM episodes e JOIN runs r USING (run_id) "
            "WHERE r.model = 'scripted:oracle' ORDER BY e.case_id, e.attempt"
        )
    assert [(r.case_id, r.attempt, r.reward) for r in records] == [row[:3] for row in stored]
    for record, row in zip(records, stored, strict=True):
        assert record.demonstration and record.model == "scripted:oracle" and record.messages_source == "trace"
        assert message_problems(record.messages) == []
        calls = [m for m in record.messages if m["role"] == "assistant" and m.get("tool_calls")]
        assert len(calls) == row[3] > 0
        assert record.messages[0]["role"] == "system" and "Operations" in str(record.messages[0]["content"])
        assert {tool["function"]["name"] for tool in record.tools} >= {"check_inventory"}  # type: ignore[index]
        assert record.verdict is not None and record.suite == SUITE


def test_passed_only_keeps_passing_episodes(scripted_db: Path) -> None:
    records = list(export_records(scripted_db, include_oracle=True, passed_only=True))
    assert records and all(record.status == "passed" and record.reward == 1.0 for record in records)


def test_a_models_strands_history_becomes_openai_messages(tmp_path: Path) -> None:
    _, trace = _model_db(tmp_path / "m.duckdb")
    (record,) = export_records(tmp_path / "m.duckdb")
    assert record.messages_source == "model" and not record.demonstration
    assert message_problems(record.messages) == []
    first = record.messages[2]
    assert first["role"] == "assistant" and first["content"] == "step 0"
    calls = [call for m in record.messages for call in m.get("tool_calls") or []]  # type: ignore[union-attr]
    assert [call["function"]["name"] for call in calls] == [c.tool for c in trace.calls]  # type: ignore[index,call-overload]
    assert [call["function"]["arguments"] for call in calls] == [c.args for c in trace.calls]  # type: ignore[index,call-overload]
    answers = [m for m in record.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in answers] == [call["id"] for call in calls]  # type: ignore[index,call-overload]
    assert record.messages[-1] == {"role": "assistant", "content": trace.final_answer or "done"}


def test_a_live_runs_episodes_are_exported_from_its_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "live.duckdb"
    case_id, trace = _model_db(db)
    monkeypatch.setattr(appender, "SNAPSHOT_INTERVAL_S", 0.0)  # a snapshot with every commit
    second = EpisodeRecord(run_id="m1", case_id=case_id, attempt=1, status="failed", reward=0.0, trace=trace)

    async def scenario() -> list[ExportRecord]:
        writer = await EpisodeWriter.start(str(db))
        await (await writer.submit(second))
        try:
            return list(export_records(db))  # the writer holds the file: read through its snapshot
        finally:
            await writer.close()

    records = asyncio.run(scenario())
    assert [(record.attempt, record.status) for record in records] == [(0, "passed"), (1, "failed")]


def test_an_unconvertible_history_falls_back_to_the_trace(tmp_path: Path) -> None:
    _, trace = _model_db(tmp_path / "m.duckdb", messages=[{"role": "assistant", "too_deep_json": "[[[["}])
    (record,) = export_records(tmp_path / "m.duckdb")
    assert record.messages_source == "trace" and message_problems(record.messages) == []
    assert len([m for m in record.messages if m["role"] == "tool"]) == len(trace.calls)


def test_a_suite_changed_since_the_run_is_refused(tmp_path: Path) -> None:
    _model_db(tmp_path / "m.duckdb", stored_hash="0123456789abcdef")
    with pytest.raises(ExportError, match="changed"):
        list(export_records(tmp_path / "m.duckdb"))
    domain, suite = find_suite(SUITE)
    assert domain is not None
    _model_db(tmp_path / "ok.duckdb", stored_hash=suite_hash(suite, domain))
    assert len(list(export_records(tmp_path / "ok.duckdb"))) == 1


def test_a_missing_database_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="no such rollout database"):
        list(export_records(tmp_path / "absent.duckdb"))


# -- the structure check --------------------------------------------------------------------------------------
def _call(call_id: str, arguments: Any = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "t", "arguments": arguments}}


GOOD: list[dict[str, Any]] = [
    {"role": "system", "content": "manual"},
    {"role": "user", "content": "task"},
    {"role": "assistant", "content": "", "tool_calls": [_call("a"), _call("b", {"x": 1})]},
    {"role": "tool", "tool_call_id": "b", "content": "{}"},
    {"role": "tool", "tool_call_id": "a", "content": "{}"},
    {"role": "assistant", "content": "done"},
]


def test_a_well_formed_conversation_has_no_problem() -> None:
    assert message_problems(GOOD) == []
    follow_up = [{"role": "user", "content": "and then?"}, {"role": "assistant", "content": "nothing"}]
    assert message_problems([*GOOD, *follow_up]) == []
    assert message_problems(GOOD[1:]) == []  # the system message is optional


@pytest.mark.parametrize(
    ("broken", "says"),
    [
        ([GOOD[0], *GOOD[2:]], "expected a user message"),
        ([*GOOD[:4], GOOD[5]], "not answered"),
        ([*GOOD[:4], {**GOOD[4], "tool_call_id": "z"}, GOOD[5]], "answers no waiting"),
        ([*GOOD[:5], GOOD[4], GOOD[5]], "no tool call waiting"),
        ([*GOOD[:2], {**GOOD[2], "tool_calls": [_call("a", 5)]}, GOOD[4], GOOD[5]], "JSON object or the JSON text"),
        ([*GOOD[:2], {**GOOD[2], "content": None}, *GOOD[3:]], 'content null beside tool calls: use ""'),
        ([*GOOD[:2], {**GOOD[2], "tool_calls": [_call("a", "{x")]}, GOOD[4], GOOD[5]], "not valid JSON"),
        ([*GOOD[:2], {**GOOD[2], "tool_calls": [_call("a", "[1]")]}, GOOD[4], GOOD[5]], "JSON object"),
        ([*GOOD[:2], {**GOOD[2], "tool_calls": [_call("a"), _call("a")]}, GOOD[4], GOOD[4], GOOD[5]], "used twice"),
        ([*GOOD[:2], GOOD[5], GOOD[5]], "expected user, got assistant"),
        (GOOD[:4], "never answered"),
        ([*GOOD[:2], {"role": "assistant", "content": None}], "text content or tool calls"),
        ([*GOOD, {"role": "user", "content": "?"}], "must end with an assistant"),
        ([*GOOD[:5], {"role": "critic", "content": "?"}], "unknown role"),
        ([*GOOD[:2], GOOD[1], GOOD[5]], "expected assistant, got user"),
    ],
)
def test_each_structural_fault_is_named(broken: list[dict[str, Any]], says: str) -> None:
    assert any(says in problem for problem in message_problems(broken)), message_problems(broken)


steps = st.tuples(
    st.sampled_from(["check_inventory", "bad name!", "<unparseable>"]),
    st.dictionaries(st.text(max_size=4), json_values, max_size=3),  # any argument names, as agents send
    json_values,
    st.booleans(),
    st.none() | st.text(max_size=6),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(steps, max_size=6), st.none() | st.text(max_size=10))
def test_every_trace_becomes_a_well_formed_conversation(drawn: list[Any], answer: str | None) -> None:
    calls = tuple(
        ToolCall(
            step=index,
            tool=tool,
            args=args,
            result=None if failed else result,
            error=ToolError(code="invalid_arguments", message="no") if failed else None,
            raw_arguments=raw,
        )
        for index, (tool, args, result, failed, raw) in enumerate(drawn)
    )
    messages = trace_messages("manual", "task", Trace(calls=calls, final_answer=answer))
    assert message_problems(messages) == []
    tool_answers = [m for m in messages if m["role"] == "tool"]
    assert len(tool_answers) == len(calls)
    for call, message in zip(calls, tool_answers, strict=True):
        shown = json.loads(str(message["content"]))
        assert shown == ({"error": call.error.model_dump()} if call.error else {"result": call.result})


# -- the combined verdict (issue 31) ------------------------------------------------------------------------------
def _verdicts_db(path: Path) -> UnrequestedWrite:
    """A model's run of this grader version: attempt 0 passes every check but makes an unrequested write, attempt 1
    passes both; and a run of grader 1 (checks only) whose episode passed. Returns the unrequested write."""
    case_id, played = _oracle_episode()
    trace: Trace = played["trace"]
    checks = played["verdict"].checks
    write = UnrequestedWrite(step=0, tool=trace.calls[0].tool, args=dict(trace.calls[0].args))
    with RolloutStore(path) as store:
        store.start_run(RunRecord(run_id="new", suite=SUITE, model="some-model", agent="strands"))
        store.start_run(RunRecord(run_id="old", suite=SUITE, model="some-model", agent="strands", grader_version=1))
        for run_id, attempt, verdict in (
            ("new", 0, Verdict.combined(checks, (write,))),
            ("new", 1, Verdict.combined(checks, ())),
            ("old", 0, Verdict.combined(checks, None)),
        ):
            status = "passed" if verdict.passed else "failed"
            store.record_episode(EpisodeRecord(run_id=run_id, case_id=case_id, attempt=attempt, status=status,
                                               reward=float(verdict.passed), verdict=verdict, trace=trace))  # fmt: skip
    return write


def test_an_unrequested_write_fails_the_export_and_is_carried(tmp_path: Path) -> None:
    write = _verdicts_db(tmp_path / "v.duckdb")
    records = {(r.run_id, r.attempt): r for r in export_records(tmp_path / "v.duckdb")}
    unasked, clean, old = records["new", 0], records["new", 1], records["old", 0]
    assert unasked.status == "failed" and unasked.verdict is not None
    assert unasked.verdict["checks_passed"] is True and unasked.verdict["passed"] is False
    assert unasked.unrequested_writes == [write.model_dump(mode="json")]
    assert (clean.status, clean.unrequested_writes, clean.grader_version) == ("passed", [], GRADER_VERSION)
    assert (old.status, old.unrequested_writes, old.grader_version) == ("passed", None, 1)  # not graded for writes


def test_passed_only_is_the_combined_verdict_of_this_grader(tmp_path: Path) -> None:
    """The checks-only pass is left out (and counted), as is the pass of a run an older grader scored."""
    _verdicts_db(tmp_path / "v.duckdb")
    (record,) = export_records(tmp_path / "v.duckdb", passed_only=True)
    assert (record.run_id, record.attempt) == ("new", 1)
    assert older_grader_passes(tmp_path / "v.duckdb") == 1


def test_split_keeps_one_sides_cases_and_records_carry_the_tags(scripted_db: Path) -> None:
    everything = list(export_records(scripted_db, include_oracle=True))
    split = suite_split(find_suite(SUITE)[1])
    sides = {side: list(export_records(scripted_db, include_oracle=True, split=side)) for side in ("train", "test")}
    for side, records in sides.items():
        assert records and {record.case_id for record in records} <= set(split.cases(side))  # type: ignore[arg-type]
        assert all(record.tags["split"] == side for record in records)
    assert len(sides["train"]) + len(sides["test"]) == len(everything)
    tags = everything[0].tags
    assert tags["checks"] and tags["baselines_passed"] == [] and tags["kind"] is None  # starter: no stored plans
    with pytest.raises(SplitError, match="'train', 'test' or None"):
        list(export_records(scripted_db, include_oracle=True, split="dev"))
