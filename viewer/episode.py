"""The parts of an episode's page built from its stored rows: the verdict summary on top (why it errored, which
checks failed with their category and step, its unrequested writes), and the tool-call rows with arguments and
results folded, tool errors with their message, a malformed call's raw text, and a placeholder row where a
missing call was due.

Pure functions from stored values to HTML: every stored value is escaped; only markup built here is
:class:`~mantra_env.webapp.Html`.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from mantra_env.checks import FailureCategory
from mantra_env.webapp import Html, text

PREVIEW_CHARS = 72
"""A value whose one-line JSON is longer than this is folded: its first characters as the summary, the whole of
it pretty-printed inside."""
MISSING_CATEGORIES = (FailureCategory.MISSING_REQUIRED_CALL.value, FailureCategory.MISSING_ANCHOR.value)
"""The failures that are a call never made: no violating step, so a placeholder row shows where it was due."""


def is_step(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def evidence(raw: Any) -> dict[str, Any] | str:
    """A check's stored evidence as the grader writes it (an object), or as text if it has another shape."""
    try:
        data = json.loads(raw) if isinstance(raw, str) else raw
    except (ValueError, RecursionError):
        return str(raw)
    if data is None:
        return {}
    return data if isinstance(data, dict) else json.dumps(data, ensure_ascii=False)


def _json_value(raw: Any) -> tuple[bool, Any]:
    """``(True, value)`` for stored JSON text, else ``(False, raw)``."""
    if not isinstance(raw, str):
        return raw is not None, raw
    try:
        return True, json.loads(raw)
    except (ValueError, RecursionError):
        return False, raw


def folded(raw: Any) -> Html:
    """A stored JSON value (arguments, a result) pretty-printed, folded in a ``<details>`` when long; text that is
    not JSON is shown as it is."""
    parsed, value = _json_value(raw)
    if raw is None:
        return Html("")
    if parsed:
        one_line = json.dumps(value, ensure_ascii=False)
        pretty = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1)
    else:
        one_line = pretty = str(value)
    if len(one_line) <= PREVIEW_CHARS and "\n" not in one_line:
        return Html(f"<code>{escape(one_line)}</code>")
    preview = one_line[:PREVIEW_CHARS].replace("\n", " ")
    return Html(f"<details><summary><code>{escape(preview)}…</code></summary><pre>{escape(pretty)}</pre></details>")


def arguments_cell(arguments: Any, raw_arguments: Any) -> Html:
    """A call's arguments; for a malformed call (arguments that were no JSON object), the model's raw text."""
    if raw_arguments is not None:
        return Html(f'<span class="fail">malformed arguments, as sent:</span><pre>{escape(str(raw_arguments))}</pre>')
    return folded(arguments)


def error_cell(code: Any, message: Any) -> Html:
    """A tool error: its code and message."""
    if code is None and message is None:
        return Html("")
    shown = f'<code class="fail">{text(code)}</code>'
    return Html(shown + (f"<br>{escape(str(message))}" if message is not None else ""))


def _steps_of(value: Any) -> list[int]:
    return sorted(s for s in (value if isinstance(value, list) else [value]) if is_step(s))


def due_after(check_text: Any, category: Any, data: dict[str, Any]) -> int | None:
    """Where the missing call of a failed check was due: after this step (-1: before the first step), or None for
    the end of the trace. A FOLLOWS obligation's call was due after its anchor, a PRECEDES one's before it (and a
    missing anchor the other way round); the stored evidence does not name the operator, the check's text does."""
    matched = data.get("matched")
    matched = matched if isinstance(matched, dict) else {}
    present = _steps_of(matched.get("anchor" if category == "missing_required_call" else "call"))
    if not present:
        return None
    precedes = " PRECEDES " in str(check_text).upper()
    before = precedes if category == "missing_required_call" else not precedes
    return present[0] - 1 if before else present[0]


def missing_calls(checks: list[tuple[Any, ...]]) -> list[tuple[int | None, str, str]]:
    """``(due after step, check id, explanation)`` for each failed check whose failure is a call that never
    happened (it has no violating step to point at)."""
    found: list[tuple[int | None, str, str]] = []
    for check_id, check_text, passed, category, raw in checks:
        data = evidence(raw)
        if (
            passed
            or category not in MISSING_CATEGORIES
            or not isinstance(data, dict)
            or is_step(data.get("violating_step"))
        ):
            continue
        why = data.get("explanation")
        found.append((due_after(check_text, category, data), str(check_id), why if isinstance(why, str) else ""))
    return found


def missing_anchor_id(check_id: str) -> str:
    """The element id of a missing call's placeholder row (check ids are plain names, escaped anyway)."""
    return "missing-" + escape(check_id)


def check_link(check_id: str, category: Any, data: dict[str, Any] | str) -> str:
    """HTML: a link to where a failed check happened (its violating step, or its missing call's placeholder), or
    why there is none (an OR whose branches all failed has no single step)."""
    step = data.get("violating_step") if isinstance(data, dict) else None
    if is_step(step):
        return f'<a href="#step-{step}" data-check-link="{escape(check_id)}">step {step}</a>'
    if category in MISSING_CATEGORIES and isinstance(data, dict):
        return f'<a href="#{missing_anchor_id(check_id)}" data-check-link="{escape(check_id)}">missing call</a>'
    return "no single step"


def unrequested(raw: Any) -> list[dict[str, Any]] | None:
    """The stored unrequested writes (a list of {step, tool, args}); None: not graded for writes."""
    if raw is None:
        return None
    parsed, value = _json_value(raw)
    if not parsed or not isinstance(value, list):
        return [{"step": None, "tool": "", "args": raw}]  # unexpected shape: shown as text, never dropped
    return [w if isinstance(w, dict) else {"step": None, "tool": "", "args": w} for w in value]


def _unrequested_html(writes: list[dict[str, Any]] | None) -> str:
    if writes is None:
        return (
            "<p>unrequested writes: not graded for writes (an episode stored before grader 2, or a case without a "
            "stored oracle plan, such as the starter suite's)</p>"
        )
    if not writes:
        return "<p>unrequested writes: none</p>"
    rows = []
    for write in writes:
        step = write.get("step")
        at = f'<a href="#step-{step}">step {step}</a>' if is_step(step) else text(step)
        args = folded(json.dumps(write.get("args"), ensure_ascii=False))
        rows.append(f"<li data-unrequested-step=\"{escape(str(step))}\">{at}: <code>{text(write.get('tool'))}"
                    f"</code> {args} <span class=\"fail\">unrequested_write</span></li>")  # fmt: skip
    return f"<p>unrequested writes ({len(writes)}): a write the case never asks for</p><ul>{''.join(rows)}</ul>"


def verdict_summary(
    status: Any,
    error_kind: Any,
    error: Any,
    checks: list[tuple[Any, ...]],
    writes_raw: Any,
) -> str:
    """The verdict on top of an episode's page: passed/failed/error, why it errored, each failed check with its
    category linked to its step, and the unrequested writes."""
    parts = [f'<section id="verdict"><h2>Verdict: <span class="{"pass" if status == "passed" else "fail"}">'
             f"{text(status)}</span></h2>"]  # fmt: skip
    if status == "error" or error_kind is not None or error is not None:
        what = "error" if status == "error" else "ended early:"  # a failed episode's model error ends it too
        parts.append(f'<p class="fail" id="episode-error">{what} <b>{text(error_kind or "unknown kind")}</b>'
                     f"</p><pre>{text(error or 'no message stored')}</pre>")  # fmt: skip
    failed = [c for c in checks if not c[2]]
    if checks:
        parts.append(f"<p>checks: {len(checks) - len(failed)} of {len(checks)} passed</p>")
    if failed:
        items = "".join(
            f'<li><code>{text(check_id)}</code> <span class="fail">{text(category)}</span> at '
            f"{check_link(str(check_id), category, evidence(raw))}: <code>{text(check_text)}</code></li>"
            for check_id, check_text, _, category, raw in failed
        )
        parts.append(f"<ul>{items}</ul>")
    if status != "error" or writes_raw is not None:
        parts.append(_unrequested_html(unrequested(writes_raw)))
    return "".join(parts) + "</section>"
