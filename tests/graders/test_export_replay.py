"""The export teaches what the env does: every exported tool message is the env's observation of that call on a
live replay of the episode, and a demonstration ends with the oracle's final answer (issue 35 item 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mantra_env.agents.base import play
from mantra_env.agents.scripted import SCRIPTED
from mantra_env.answers import final_answer
from mantra_env.domains import find_suite
from mantra_env.env import MantraEnv
from mantra_env.graders.export import ORACLE_MODEL, ExportRecord, export_records
from mantra_env.store import RolloutStore
from mantra_env.store.records import EpisodeRecord, RunRecord
from mantra_env.trace import Trace

SUITE = "operations/starter"


def _suite() -> tuple[Any, Any]:
    domain, suite = find_suite(SUITE)
    assert domain is not None
    return domain, suite


def _replay(record: ExportRecord) -> tuple[list[tuple[str, str]], MantraEnv]:
    """Each (exported tool message, the env's observation of the same call) of ``record``, replayed live."""
    domain, suite = _suite()
    env = MantraEnv(suite, domain)
    env.reset(options={"case": record.case_id})
    answers = {m["tool_call_id"]: m["content"] for m in record.messages if m["role"] == "tool"}
    pairs = []
    for message in record.messages:
        for call in message.get("tool_calls") or []:  # type: ignore[union-attr]
            function = call["function"]  # type: ignore[index,call-overload]
            arguments = function["arguments"]
            arguments = json.loads(arguments) if isinstance(arguments, str) else arguments  # either convention
            observation, *_ = env.step({"tool": function["name"], "arguments": arguments})
            pairs.append((str(answers[call["id"]]), observation))  # type: ignore[index,call-overload]
    return pairs, env


def _random_model_db(path: Path) -> None:
    """A model's episodes with no stored messages (exported from the trace): the random policy's calls, so
    errors and results of several tools, on every case of the suite."""
    domain, suite = _suite()
    with RolloutStore(path) as store:
        store.start_run(RunRecord(run_id="r1", suite=SUITE, model="some-model", agent="strands"))
        for case in suite.cases:
            played = play(MantraEnv(suite, domain), SCRIPTED["random"](), case.id, seed=3)
            store.record_episode(
                EpisodeRecord(
                    run_id="r1", case_id=case.id, attempt=0, status="passed" if played["verdict"].passed else "failed",
                    reward=played["reward"], verdict=played["verdict"], trace=played["trace"],
                )
            )  # fmt: skip


def test_every_exported_tool_message_is_the_observation_of_a_live_replay(scripted_db: Path, tmp_path: Path) -> None:
    _random_model_db(tmp_path / "random.duckdb")
    records = [*export_records(scripted_db, include_oracle=True), *export_records(tmp_path / "random.duckdb")]
    compared = 0
    for record in records:
        pairs, env = _replay(record)
        for exported, live in pairs:
            assert exported == live, f"{record.run_id} {record.case_id}: {exported[:120]!r} != {live[:120]!r}"
        compared += len(pairs)
        if record.demonstration:  # the replay earns what the run earned
            env.step({"final_answer": record.messages[-1]["content"]})
            assert env.last_reward == record.reward
    assert compared > 20 and any('"error"' in exported for r in records for exported, _ in _replay(r)[0])


def test_a_demonstration_ends_with_the_oracles_final_answer_even_from_an_older_run(tmp_path: Path) -> None:
    domain, suite = _suite()
    db = tmp_path / "old.duckdb"
    with RolloutStore(db) as store:
        store.start_run(RunRecord(run_id="o1", suite=SUITE, model=ORACLE_MODEL, agent=ORACLE_MODEL))
        for case in suite.cases:
            played = play(MantraEnv(suite, domain), SCRIPTED["oracle"](), case.id)
            trace: Trace = played["trace"]
            older = Trace(calls=trace.calls, final_answer="done")  # what the oracle answered before answers.py
            store.record_episode(
                EpisodeRecord(run_id="o1", case_id=case.id, attempt=0, status="passed", reward=played["reward"],
                              verdict=played["verdict"], trace=older)
            )  # fmt: skip
    for record in export_records(db, include_oracle=True):
        case = suite.case(record.case_id)
        calls = _replay(record)[1].trace.calls
        expected = final_answer([entry.check for entry in case.checks], calls)
        assert record.messages[-1] == {"role": "assistant", "content": expected} and expected != "done"


def test_arguments_are_objects_by_default_and_json_text_on_request(scripted_db: Path) -> None:
    def arguments(form: Any) -> list[Any]:
        records = export_records(scripted_db, include_oracle=True, **({} if form is None else {"arguments": form}))
        return [
            call["function"]["arguments"]
            for record in records
            for message in record.messages
            for call in message.get("tool_calls") or []  # type: ignore[union-attr]
        ]

    objects, texts = arguments(None), arguments("json-text")
    assert objects and all(isinstance(value, dict) for value in objects)
    assert [json.loads(text) for text in texts] == objects
    assert all(
        message["content"] == ""
        for record in export_records(scripted_db, include_oracle=True)
        for message in record.messages
        if message.get("tool_calls")
    )
