"""Stored episodes as training records: the OpenAI tool-calling format that chat templates and SFT trainers read.

One record per episode: ``messages`` (a ``system`` message with the manual, the ``user`` message with the
scenario prompt, then ``assistant`` messages whose ``tool_calls`` carry the ``arguments`` and ``tool`` messages
answering them by ``tool_call_id``, and the final answer), ``tools`` (the domain's tool schemas in OpenAI
function-tool format), the reward, the verdict and the case metadata.

In the form chat templates expect (rendered through Qwen2.5's, Qwen3's and Llama 3.1's in the tests):

* ``arguments`` are a JSON object by default (``"object"``): the open models' templates write them with
  ``tojson`` themselves, so JSON text would come out double-encoded (a quoted string). ``"json-text"`` keeps the
  OpenAI API's convention (a string holding the JSON), for tools that read that.
* An assistant turn that only calls tools has ``content: ""``, never ``null`` (Qwen3's template fails on it).
* Each ``tool`` message is the env's own observation of the call (:func:`mantra_env.observations.tool_observation`,
  byte for byte what the agent saw).
* The oracle's demonstrations end with the oracle's final answer over the results its calls returned
  (:func:`mantra_env.answers.final_answer`: the facts asked for and the outcome), whatever an older run stored.

Where the messages come from: an episode whose stored history converts cleanly (a strands agent's messages:
``text``, ``toolUse`` and ``toolResult`` blocks) keeps the model's own turns (``messages_source: "model"``);
any other episode (scripted agents, the oracle among them, store no messages) gets messages synthesized from its
trace, one assistant tool call per step answered with exactly what the environment returned
(``messages_source: "trace"``). :func:`message_problems` is the tokenizer-free structure check every exported
record passes, and is usable on any OpenAI-format conversation before training.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from mantra_env.agents.tags import played_case_tags
from mantra_env.answers import final_answer
from mantra_env.checks import Check
from mantra_env.domains import Domain, find_suite
from mantra_env.env import MantraEnv
from mantra_env.errors import MantraError
from mantra_env.grading import GRADER_VERSION
from mantra_env.limits import MAX_RESULT_BYTES
from mantra_env.observations import tool_observation
from mantra_env.resume import suite_hash
from mantra_env.spaces import JsonText
from mantra_env.splits import CaseTags, check_split
from mantra_env.store import RolloutStore
from mantra_env.trace import ToolCall, ToolError, Trace

ORACLE_MODEL = "scripted:oracle"
SCRIPTED_PREFIX = "scripted:"
ArgumentsFormat = Literal["object", "json-text"]
ARGUMENTS_FORMATS: tuple[ArgumentsFormat, ...] = ("object", "json-text")
"""How tool-call ``arguments`` are written: a JSON object (what open models' chat templates expect, the default) or
JSON text of one (the OpenAI API's convention)."""


class ExportError(MantraError, ValueError):
    """The episodes cannot be exported as asked (no database, nothing selected, a suite that changed)."""


class ExportRecord(BaseModel):
    """One exported episode (a row of the JSONL file or of the dataset)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    messages: list[dict[str, JsonValue]]
    tools: list[dict[str, JsonValue]]
    reward: float | None
    status: Literal["passed", "failed"]
    """The combined verdict: every check passed and (grader 2) no unrequested write."""
    verdict: dict[str, JsonValue] | None
    unrequested_writes: list[dict[str, JsonValue]] | None
    """Accepted writes the case never asks for, each ``{step, tool, args}``; None: not graded for writes (a run
    of grader version 1, or a case without a stored oracle plan, graded on its checks alone)."""
    grader_version: int
    """The grader that scored the episode (1: the checks alone)."""
    suite: str
    suite_hash: str | None
    case_id: str
    attempt: int
    model: str
    run_id: str
    demonstration: bool
    """True for the oracle's episodes: its SMT-proven compliant plan, with synthesized assistant tool calls."""
    messages_source: Literal["model", "trace"]
    tags: dict[str, JsonValue]
    """The case's tags at export (:class:`mantra_env.splits.CaseTags`: its split side, action or refusal, plan
    length, checks, answer checks, first valid round, the writeless baselines that pass it)."""


# -- the structure check ------------------------------------------------------------------------------------------
def message_problems(messages: Sequence[Any]) -> list[str]:
    """What is wrong with ``messages`` as an OpenAI tool-calling conversation (empty: nothing).

    Checked: an optional leading ``system`` message, then a ``user`` message; roles alternate (after a user
    message comes an assistant; after an assistant with tool calls, one ``tool`` message per call and nothing
    else; after its tool answers, an assistant); every tool call has a unique id, a name and ``arguments`` that are
    a JSON object or the JSON text of one, and is answered exactly once, by id; an assistant message's content is
    text (``""`` beside tool calls, not null); the conversation ends with an assistant message or with the answers
    to its last tool calls.
    """
    problems: list[str] = []
    position = 0
    if messages and _role(messages[0]) == "system":
        position = 1
    if position >= len(messages) or _role(messages[position]) != "user":
        return [f"message {position}: expected a user message (after an optional system message)"]
    expected = "assistant"
    pending: dict[str, int] = {}  # tool_call_id -> index of the assistant message that made the call
    seen_ids: set[str] = set()
    for index in range(position + 1, len(messages)):
        message, role = messages[index], _role(messages[index])
        where = f"message {index}"
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not pending:
                problems.append(f"{where}: a tool message with no tool call waiting for an answer")
            elif call_id not in pending:
                problems.append(f"{where}: tool_call_id {call_id!r} answers no waiting tool call")
            else:
                del pending[call_id]
            if not isinstance(message.get("content"), str):
                problems.append(f"{where}: a tool message's content must be text")
            if not pending:
                expected = "assistant"
            continue
        if pending:
            problems.append(f"{where}: tool call(s) {sorted(pending)} not answered before this {role} message")
            pending.clear()
        if role != expected and not (role == "user" and _role(messages[index - 1]) == "tool"):  # user after answers
            problems.append(f"{where}: expected {expected}, got {role}")
        if role == "assistant":
            calls = message.get("tool_calls") or []
            if not calls and not isinstance(message.get("content"), str):
                problems.append(f"{where}: an assistant message needs text content or tool calls")
            elif calls and message.get("content") is None:  # Qwen3's chat template fails on it
                problems.append(f'{where}: content null beside tool calls: use "" (chat templates expect text)')
            for number, call in enumerate(calls):
                call_problem = _call_problem(call)
                if call_problem:
                    problems.append(f"{where}, tool call {number}: {call_problem}")
                    continue
                if call["id"] in seen_ids:
                    problems.append(f"{where}, tool call {number}: id {call['id']!r} used twice")
                seen_ids.add(call["id"])
                pending[call["id"]] = index
            expected = "tool" if calls else "user"
        elif role == "user":
            expected = "assistant"
        else:
            problems.append(f"{where}: unknown role {role!r}")
    if pending:
        problems.append(f"end: tool call(s) {sorted(pending)} never answered")
    if _role(messages[-1]) not in ("assistant", "tool"):
        problems.append("end: the conversation must end with an assistant message or tool answers")
    return problems


def _role(message: Any) -> str:
    return str(message.get("role")) if isinstance(message, dict) else "?"


def _call_problem(call: Any) -> str:
    if not isinstance(call, dict) or call.get("type") != "function" or not isinstance(call.get("function"), dict):
        return 'expected {"id", "type": "function", "function": {"name", "arguments"}}'
    if not isinstance(call.get("id"), str) or not call["id"]:
        return "no id"
    function = call["function"]
    if not isinstance(function.get("name"), str) or not function["name"]:
        return "no function name"
    if isinstance(function.get("arguments"), dict):
        return ""
    if not isinstance(function.get("arguments"), str):
        return "arguments must be a JSON object or the JSON text (a string) of one"
    try:
        arguments = json.loads(function["arguments"])
    except ValueError:
        return f"arguments are not valid JSON: {function['arguments'][:80]!r}"
    return "" if isinstance(arguments, dict) else "arguments must be a JSON object"


# -- messages -----------------------------------------------------------------------------------------------------
def trace_messages(
    system: str,
    prompt: str,
    trace: Trace,
    *,
    arguments: ArgumentsFormat = "object",
    room: int = MAX_RESULT_BYTES,
) -> list[dict[str, JsonValue]]:
    """The conversation a trace stands for: one assistant tool call per step (id ``call_<step>``, ``arguments`` in
    the ``arguments`` format), answered with the env's observation of it within ``room`` bytes (the env's
    observation size: :func:`mantra_env.observations.tool_observation`), then the final answer if any (an empty
    assistant turn for an agent that neither called nor answered)."""
    messages: list[dict[str, JsonValue]] = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
    for call in trace.calls:
        call_id = f"call_{call.step}"
        text = call.raw_arguments if call.raw_arguments is not None else json.dumps(call.args, ensure_ascii=False)
        if not _is_object_text(text):
            text = json.dumps({"raw_arguments": text}, ensure_ascii=False)  # what the agent sent, kept, as an object
        function: dict[str, JsonValue] = {"name": call.tool, "arguments": _arguments(text, arguments)}
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": call_id, "type": "function", "function": function}],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": tool_observation(call, room)})
    if trace.final_answer is not None or not trace.calls:  # an agent that did nothing said nothing: an empty turn
        messages.append({"role": "assistant", "content": trace.final_answer or ""})
    return messages


def _is_object_text(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def _arguments(text: str, form: ArgumentsFormat) -> JsonValue:
    """The JSON text of an arguments object in the format ``form``."""
    if form == "json-text":
        return text
    parsed: dict[str, JsonValue] = json.loads(text)
    return parsed


class _Unconvertible(Exception):
    """A stored history that is not a strands conversation (its messages are synthesized from the trace)."""


def model_messages(
    system: str, stored: Sequence[Any], *, arguments: ArgumentsFormat = "object"
) -> list[dict[str, JsonValue]]:
    """A strands agent's stored history (Bedrock-style content blocks) in OpenAI format, after ``system``, with
    tool-call ``arguments`` in the ``arguments`` format.

    Raises:
        _Unconvertible: a message or block this conversion does not know.
    """
    messages: list[dict[str, JsonValue]] = [{"role": "system", "content": system}]
    for message in stored:
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            raise _Unconvertible
        role = message.get("role")
        texts: list[str] = []
        calls: list[JsonValue] = []
        answers: list[dict[str, JsonValue]] = []
        for block in message["content"]:
            if not isinstance(block, dict):
                raise _Unconvertible
            if isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif role == "assistant" and isinstance(block.get("toolUse"), dict):
                use = block["toolUse"]
                text = json.dumps(use.get("input", {}), ensure_ascii=False)
                function = {"name": str(use.get("name", "")), "arguments": _arguments(text, arguments)}
                calls.append({"id": str(use.get("toolUseId", "")), "type": "function", "function": function})
            elif role == "user" and isinstance(block.get("toolResult"), dict):
                result = block["toolResult"]
                parts = [_result_text(part) for part in result.get("content", [])]
                answers.append(
                    {"role": "tool", "tool_call_id": str(result.get("toolUseId", "")), "content": "".join(parts)}
                )
            elif "reasoningContent" not in block:  # reasoning is not part of the trained turns
                raise _Unconvertible
        if role == "assistant":
            turn: dict[str, JsonValue] = {"role": "assistant", "content": "\n".join(texts)}  # "" with calls only
            if calls:
                turn["tool_calls"] = calls
            messages.append(turn)
        elif role == "user":
            messages.extend(answers)
            if texts:
                messages.append({"role": "user", "content": "\n".join(texts)})
        else:
            raise _Unconvertible
    return messages


def _result_text(part: Any) -> str:
    if isinstance(part, dict) and isinstance(part.get("text"), str):
        return str(part["text"])
    if isinstance(part, dict) and "json" in part:
        return json.dumps(part["json"], ensure_ascii=False)
    raise _Unconvertible


# -- reading the store --------------------------------------------------------------------------------------------
_EPISODES = """
SELECT e.run_id, e.case_id, e.attempt, e.status, e.reward, e.verdict, e.messages, e.final_answer,
       r.suite, r.suite_hash, r.model, e.unrequested_writes, coalesce(r.grader_version, 1)
FROM episodes e JOIN runs r USING (run_id)
WHERE e.status <> 'error' {where}
ORDER BY r.suite, e.run_id, e.case_id, e.attempt
"""
_STEPS = """
SELECT step, tool, kind, arguments, raw_arguments, result, error_code, error_message FROM steps
WHERE run_id = ? AND case_id = ? AND attempt = ? ORDER BY step
"""


def export_records(
    db: Path | str,
    *,
    passed_only: bool = False,
    include_oracle: bool = False,
    split: str | None = None,
    arguments: ArgumentsFormat = "object",
) -> Iterator[ExportRecord]:
    """The selected episodes of the rollout database ``db`` as records, read through a read-only store (a live
    run's snapshot while a run writes). Models' episodes always; the oracle's only with ``include_oracle``;
    the other scripted baselines and infrastructure errors never. ``split`` (``train`` or ``test``,
    :mod:`mantra_env.splits`) keeps the episodes of that side's cases. ``passed_only`` keeps the episodes that pass
    the combined verdict, so only those of runs graded by this mantra-env's grader version (an older run's pass
    was never checked for unrequested writes: :func:`older_grader_passes` counts what that leaves out).
    ``arguments``: how tool-call arguments are written (:data:`ARGUMENTS_FORMATS`).

    Raises:
        ExportError: no such database, nothing selected, or a run's suite changed since it ran.
        SplitError: a split other than ``train``, ``test`` or None.
        StoreError: not a mantra-env rollout database.
    """
    check_split(split)
    if arguments not in ARGUMENTS_FORMATS:
        raise ExportError(f"unknown arguments format {arguments!r}: use one of {', '.join(ARGUMENTS_FORMATS)}")
    if str(db) != ":memory:" and not Path(db).is_file():
        raise ExportError(f"{db}: no such rollout database (run `mantra run` first, or pass --db PATH)")
    wheres = ["AND (r.model NOT LIKE 'scripted:%'" + (" OR r.model = ?)" if include_oracle else ")")]
    params: list[Any] = [ORACLE_MODEL] if include_oracle else []
    if passed_only:
        wheres.append("AND e.status = 'passed' AND coalesce(r.grader_version, 1) = ?")
        params.append(GRADER_VERSION)
    with RolloutStore(db, read_only=True) as store:
        rows = store.query(_EPISODES.format(where=" ".join(wheres)), params)
        if not rows:
            raise ExportError(_nothing_selected(store, passed_only=passed_only, include_oracle=include_oracle))
        suites: dict[str, _SuiteContext] = {}
        exported = 0
        for (
            run_id, case_id, attempt, status, reward, verdict, stored, stored_answer, suite, stored_hash, model,
            unrequested, grader_version,
        ) in rows:  # fmt: skip
            if suite not in suites:
                suites[suite] = _suite_context(suite)
            context = suites[suite]
            current_hash, prompts, tags = context.hash, context.prompts, context.tags
            if stored_hash is not None and stored_hash != current_hash:
                raise ExportError(
                    f"run {run_id} ran suite {suite} with content hash {stored_hash}, but that suite is now "
                    f"{current_hash}: its prompts, manual or tools changed, so the episodes cannot be exported "
                    "truthfully; export from a checkout with the suite the run used"
                )
            if case_id not in prompts:
                raise ExportError(f"run {run_id}: case {case_id} is not in suite {suite} any more")
            if split is not None and tags[case_id].split != split:
                continue
            exported += 1
            demonstration = model == ORACLE_MODEL
            trace = _trace(store, run_id, case_id, attempt, stored_answer)
            if demonstration:  # the oracle's answer over its calls (runs before ANSWER checks stored "done")
                answer = final_answer(context.checks[case_id], trace.calls)
                trace = Trace.model_construct(calls=trace.calls, final_answer=answer)
            messages, source = _messages(context, prompts[case_id], json.loads(stored), trace, arguments)
            yield ExportRecord(
                messages=messages, tools=context.tools, reward=reward, status=status,
                verdict=json.loads(verdict) if verdict else None,
                unrequested_writes=json.loads(unrequested) if unrequested is not None else None,
                grader_version=grader_version, suite=suite, suite_hash=stored_hash,
                case_id=case_id, attempt=attempt, model=model, run_id=run_id,
                demonstration=demonstration, messages_source=source,
                tags=tags[case_id].model_dump(mode="json"),
            )  # fmt: skip
        if not exported:
            raise ExportError(f"no selected episode is of a {split} case; export without --split, or run those cases")


def _messages(
    context: _SuiteContext, prompt: str, stored: Any, trace: Trace, arguments: ArgumentsFormat
) -> tuple[list[dict[str, JsonValue]], Literal["model", "trace"]]:
    system = context.domain.manual
    if isinstance(stored, list) and stored:
        try:
            converted = model_messages(system, stored, arguments=arguments)
        except _Unconvertible:
            pass
        else:
            if not message_problems(converted):
                return converted, "model"
    return trace_messages(system, prompt, trace, arguments=arguments, room=context.room), "trace"


@dataclass(frozen=True)
class _SuiteContext:
    """What exporting a suite's episodes needs, loaded once per suite."""

    domain: Domain
    hash: str
    tools: list[dict[str, JsonValue]]
    prompts: dict[str, str]
    checks: dict[str, list[Check]]
    tags: dict[str, CaseTags]
    room: int
    """The env's observation size (a longer tool error is cut to it, as the env cut it)."""


def _suite_context(suite: str) -> _SuiteContext:
    try:
        domain, loaded = find_suite(suite)
        if domain is None:
            raise ExportError(f"suite {suite} has no known domain (its manual and tools are needed to export)")
        space = MantraEnv(loaded, domain).observation_space  # its size: where the env cut a long tool error
    except ExportError:
        raise
    except MantraError as error:
        raise ExportError(f"the stored runs' suite {suite} cannot be loaded: {error}") from None
    assert isinstance(space, JsonText)
    specs = domain.episode_constants.specs
    tools = [spec.openai_schema() for spec in specs]
    return _SuiteContext(
        domain=domain,
        hash=suite_hash(loaded, domain),
        tools=tools,
        prompts={case.id: case.scenario.prompt for case in loaded.cases},
        checks={case.id: [entry.check for entry in case.checks] for case in loaded.cases},
        tags=played_case_tags(loaded, domain),
        room=space.max_bytes,
    )


def _trace(store: RolloutStore, run_id: str, case_id: str, attempt: int, final_answer: str | None) -> Trace:
    calls = []
    for step, tool, kind, arguments, raw, result, code, text in store.query(_STEPS, [run_id, case_id, attempt]):
        error = ToolError(code=code, message=text or "") if code is not None else None
        calls.append(
            ToolCall.model_construct(
                step=step,
                tool=tool,
                args=json.loads(arguments),
                result=json.loads(result) if result else None,
                error=error,
                kind=kind,
                raw_arguments=raw,
            )
        )
    return Trace.model_construct(calls=tuple(calls), final_answer=final_answer)


def older_grader_passes(db: Path | str, *, include_oracle: bool = False) -> int:
    """Passed episodes (of the selection :func:`export_records` makes) of runs graded by another grader version
    than this mantra-env's: ``passed_only`` leaves them out, since their pass was never checked for unrequested
    writes."""
    with RolloutStore(db, read_only=True) as store:
        return _older_passes(store, include_oracle=include_oracle)


def _older_passes(store: RolloutStore, *, include_oracle: bool) -> int:
    oracle = " OR r.model = ?" if include_oracle else ""
    rows = store.query(
        "SELECT count(*) FROM episodes e JOIN runs r USING (run_id) WHERE e.status = 'passed' "
        f"AND coalesce(r.grader_version, 1) <> ? AND (r.model NOT LIKE 'scripted:%'{oracle})",
        [GRADER_VERSION, *([ORACLE_MODEL] if include_oracle else [])],
    )
    return int(rows[0][0])


def _nothing_selected(store: RolloutStore, *, passed_only: bool, include_oracle: bool) -> str:
    counts = dict(
        store.query("SELECT r.model LIKE 'scripted:%', count(*) FROM episodes e JOIN runs r USING (run_id) GROUP BY 1")
    )
    if not counts:
        return "no episodes selected: the database holds no episodes yet (run `mantra run` first)"
    hints = []
    if counts.get(True) and not include_oracle:
        hints.append("add --include-oracle to export the oracle's demonstrations (other scripted baselines never are)")
    if passed_only:
        hints.append("drop --passed-only to export failed episodes too")
        older = _older_passes(store, include_oracle=include_oracle)
        if older:
            hints.append(
                f"{older} passed episode(s) of runs graded by an older grader, before unrequested writes counted, "
                "are never exported as passed: run those cases again (a new --run-name) to grade them"
            )
    return "no episodes selected" + (": " + "; ".join(hints) if hints else " (only infrastructure errors are stored)")
