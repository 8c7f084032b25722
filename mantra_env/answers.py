"""The final answer of a scripted compliant agent (the oracle, and the exports' screen that replays it): what a
careful agent would tell the customer after the calls it made.

* For each ANSWER check of the case, the facts at the check's path of the result of the read it names, as the
  agent's own calls returned them (the last successful call matching the read), each in its canonical human form
  (:func:`mantra_env.checks.facts.human_fact`): ``scheduled departure: 8:15 am``. The facts come from the reads,
  not from the check's stored ``expected``, so a replay whose database disagrees with the check fails it.
* Then a short summary of the writes that succeeded, if any (tool and arguments).
* Neither facts nor writes: a short refusal (a case whose compliant plan writes nothing and asks for no fact is
  one the agent must decline).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from mantra_env.checks import Answer, Check, call_matches
from mantra_env.checks.facts import canonical_fact, human_fact, last_field, resolve_path
from mantra_env.errors import MantraError
from mantra_env.trace import ToolCall

REFUSAL_TEXT = "I'm sorry, but I can't do that for you."


def _label(path: str) -> str:
    """``flights[*].scheduled_departure`` -> ``scheduled departure`` (the last field, in words)."""
    return last_field(path).replace("_", " ")


def stated_facts(check: Answer, calls: Sequence[ToolCall]) -> str | None:
    """The facts of ``check`` read from the last successful call matching its read, as one phrase; None when no
    such call returned them (the answer then omits them, and the check fails as it should)."""
    for call in reversed(calls):
        if call.error is None and call_matches(check.read, call):
            try:
                values = resolve_path(call.result, check.path)
                facts = [human_fact(check.kind, canonical_fact(check.kind, value)) for value in values]
            except MantraError:
                return None
            return f"{_label(check.path)}: {', '.join(facts)}"
    return None


def final_answer(checks: Sequence[Check], calls: Sequence[ToolCall]) -> str:
    """The final answer after ``calls`` on a case with ``checks`` (see the module docstring)."""
    phrases = [
        phrase for check in checks if isinstance(check, Answer) and (phrase := stated_facts(check, calls)) is not None
    ]
    writes = [call for call in calls if call.kind == "write" and call.error is None]
    if not phrases and not writes:
        return REFUSAL_TEXT
    parts = ["Here is what you asked for: " + "; ".join(phrases) + "."] if phrases else []
    if writes:
        done = ", ".join(f"{call.tool}({json.dumps(call.args, ensure_ascii=False, sort_keys=True)})" for call in writes)
        parts.append(f"Done: {done}.")
    return " ".join(parts)
