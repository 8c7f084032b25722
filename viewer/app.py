"""The viewer's pages: runs with the leaderboard's scores, episodes filtered by choices and paged, one episode
with its verdict on top (:mod:`mantra_env.viewer.episode`), step by step with each check's verdict pointing at its
steps, and the case's expected (oracle) trace.

The store is opened read-only per request, so a live run's finished episodes show through its snapshot. With a
``token`` every request must carry it (``?token=``; the pages' links do). Everything shown is escaped (table
cells are text unless built here as :class:`~mantra_env.webapp.Html`): model output and anything else read from
the database file, which may come from elsewhere, is never rendered as HTML, and evidence of an unexpected shape
is shown as text. Links carry names percent-encoded, so any run name opens its episodes.
"""

from __future__ import annotations

import hmac
import json
import math
import re
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from mantra_env.checks import FailureCategory
from mantra_env.errors import MantraError
from mantra_env.graders.intervals import format_estimate
from mantra_env.store import RolloutStore
from mantra_env.viewer.episode import (
    MISSING_CATEGORIES,
    arguments_cell,
    error_cell,
    evidence,
    folded,
    missing_anchor_id,
    missing_calls,
    verdict_summary,
)
from mantra_env.webapp import Html, local_app, page, raw_segments, segment, text

_CSS = (
    "body{font-family:sans-serif;margin:1em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
    "padding:2px 6px;vertical-align:top}tr.violation{background:#fde2e2}.fail{color:#a00}.pass{color:#070}"
    "pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f6f6;padding:6px}"
    "td code{overflow-wrap:anywhere}td pre{margin:2px 0;max-height:24em;overflow:auto}summary{cursor:pointer}"
    "table.fixed{width:100%;table-layout:fixed}table.fixed td{overflow-wrap:anywhere}th.narrow{width:3em}"
    "th.tool{width:10em}th.args{width:26%}th.error{width:10em}th.violates{width:9em}th.check-id{width:12em}"
    "th.verdict{width:4em}th.category{width:10em}th.at{width:5em}th.matched{width:9em}.why{color:#444}"
    "tr.missing{background:#fff3cd;font-style:italic}"
    "form label{margin-right:.6em}form input{width:9em}.pages a,.pages span{margin-right:.8em}"
)
FILTERS = ("domain", "model", "status", "category", "run", "suite", "case")
PAGE_SIZE = 50
"""Episodes per page of the episode list."""
UNREQUESTED_WRITE = FailureCategory.UNREQUESTED_WRITE.value
_KEY = "run_id = ? AND case_id = ? AND attempt = ?"
_EPISODE_KEY = "e.run_id = ? AND e.case_id = ? AND e.attempt = ?"


_ATTEMPT = re.compile(r"[0-9]{1,9}")  # longer is no attempt number (and int() refuses > 4300 digits)


def _table(
    header: tuple[str, ...],
    rows: list[tuple[Any, ...]],
    row_attrs: list[str] | None = None,
    *,
    widths: tuple[str, ...] | None = None,
    table_class: str = "",
) -> str:
    """A table; each cell is escaped as text unless it is :class:`Html`. ``widths`` names each column's CSS
    class (the stylesheet's fixed widths; "" leaves a column the rest), ``table_class`` the table's."""
    classes = widths or ("",) * len(header)
    head = "".join(
        f'<th class="{c}">{escape(h)}</th>' if c else f"<th>{escape(h)}</th>"
        for h, c in zip(header, classes, strict=True)
    )
    attrs = row_attrs or [""] * len(rows)
    cells = ["".join(f"<td>{text(c)}</td>" for c in row) for row in rows]
    body = "".join(f"<tr{a}>{c}</tr>" for c, a in zip(cells, attrs, strict=True))
    opening = f'<table class="{table_class}">' if table_class else "<table>"
    return f"{opening}<tr>{head}</tr>{body}</table>"


def _estimate(value: Any) -> str:
    """An estimate with its interval, as the run summary, the report and the notebooks print it (the one
    formatter, :func:`mantra_env.graders.intervals.format_estimate`)."""
    return format_estimate(value)


def _status(status: Any, error_kind: Any) -> str:
    """An episode's status, with the kind of error for an errored one ("error (timeout)")."""
    return f"{status} ({error_kind})" if status == "error" and error_kind else str(status)


def _page_number(raw: str | None) -> int:
    """The ``page`` parameter as a page number (1 for anything that is none)."""
    return int(raw) if raw and _ATTEMPT.fullmatch(raw) and int(raw) > 0 else 1


def _filter_choices(s: RolloutStore) -> dict[str, list[str]]:
    """The values each choice filter of the episode list can take, from the database: its domains, models,
    statuses and failure categories (checks' and unrequested writes)."""

    def distinct(sql: str) -> list[str]:
        return [str(row[0]) for row in s.query(sql) if row[0] not in (None, "")]

    categories = distinct("SELECT DISTINCT category FROM check_verdicts WHERE category IS NOT NULL")
    if s.query("SELECT 1 FROM v_unrequested_writes LIMIT 1"):
        categories.append(UNREQUESTED_WRITE)
    return {
        "domain": distinct("SELECT DISTINCT split_part(suite, '/', 1) FROM runs ORDER BY 1"),
        "model": distinct("SELECT DISTINCT model FROM runs ORDER BY 1"),
        "status": distinct("SELECT DISTINCT status FROM episodes ORDER BY 1"),
        "category": sorted(set(categories)),
    }


def _select(name: str, choices: list[str], selected: str) -> str:
    """A select box of ``choices`` with "any" first; a value given in the address but absent is kept as a choice."""
    shown = choices if not selected or selected in choices else [*choices, selected]
    options = "".join(f"<option{' selected' if c == selected else ''}>{escape(c)}</option>" for c in shown)
    return f'<label>{name} <select name="{name}"><option value="">any</option>{options}</select></label>'


def _seconds(value: Any) -> str:
    return f"{value:.2f}s" if isinstance(value, int | float) else text(value)


def _named_suite(suite: str) -> bool:
    """Whether ``suite`` names a suite of a known domain (``DOMAIN`` or ``DOMAIN/SUITE``): a name read from a
    database file is never taken as a path to read."""
    from mantra_env.domains import domain_names, load_domain

    domain_name, _, suite_name = suite.partition("/")
    if domain_name not in domain_names() or "/" in suite_name:
        return False
    return not suite_name or suite_name in load_domain(domain_name).suite_dirs


def _expected_trace(suite: str, case_id: str) -> list[tuple[str, str]] | str:
    """The oracle's calls for the case (tool, arguments), or why there is none to show."""
    from mantra_env.domains import find_suite
    from mantra_env.oracle import OracleError, oracle_plan

    try:
        if not _named_suite(suite):
            return f"suite not found: {suite} is not the name of a suite here"
        domain, found = find_suite(suite)
    except (MantraError, OSError) as error:
        return f"the suite {suite} cannot be loaded here ({error})"
    case = next((c for c in found.cases if c.id == case_id), None)
    if case is None or domain is None:
        return f"the suite {suite} has no case {case_id} (it may have changed since the run)"
    try:
        plan = oracle_plan(case, domain.tool_specs())
    except OracleError as error:
        return str(error)
    return [(str(a["tool"]), json.dumps(a["arguments"], ensure_ascii=False)) for a in plan]


def _step_link(step: Any) -> str:
    """A link to a step of the trace if ``step`` is a step number, else the value as text."""
    if isinstance(step, int) and not isinstance(step, bool):
        return f'<a href="#step-{step}">{step}</a>'
    return f"<code>{escape(json.dumps(step, ensure_ascii=False))}</code>"


def _check_row(check_id: Any, check_text: Any, passed: Any, category: Any, stored: Any) -> tuple[Any, ...]:
    """One check's verdict as a row of the checks table: the step it was violated at and the steps its roles
    matched link to the trace; evidence of any other shape is shown as text."""
    verdict = Html(f'<span class="{"pass" if passed else "fail"}">{"passed" if passed else "failed"}</span>')
    data = evidence(stored)
    if isinstance(data, str):
        return check_id, _check_text(check_text, data), verdict, category, "", ""
    step = data.get("violating_step")
    at = ""
    if isinstance(step, int) and not isinstance(step, bool):
        at = Html(f'<a href="#step-{step}" data-violating-step="{step}">step {step}</a>')
    elif step is not None:
        at = json.dumps(step, ensure_ascii=False)
    elif not passed and category in MISSING_CATEGORIES:
        at = Html(f'<a href="#{missing_anchor_id(str(check_id))}">missing call</a>')
    matched_data = data.get("matched") or {}
    if isinstance(matched_data, dict):
        matched: Any = Html(", ".join(
            f"{escape(str(role))}: "
            + " ".join(_step_link(n) for n in (steps if isinstance(steps, list) else [steps]))
            for role, steps in matched_data.items()
            if steps
        ))  # fmt: skip
    else:
        matched = json.dumps(matched_data, ensure_ascii=False)
    why = data.get("explanation", "")
    why = why if isinstance(why, str) else json.dumps(why, ensure_ascii=False)
    return check_id, _check_text(check_text, why), verdict, category, at, matched


def _check_text(check_text: Any, why: str) -> Html:
    """A check's text, and under it why it failed (the evidence's explanation), which the text column's width
    leaves room for."""
    shown = f"<code>{escape(str(check_text))}</code>"
    return Html(shown + (f'<br><span class="why">{escape(why)}</span>' if why else ""))


def violated_steps(checks: list[tuple[Any, ...]]) -> dict[int, list[str]]:
    """The checks violated at each step (by the ``violating_step`` of their evidence)."""
    violating: dict[int, list[str]] = {}
    for check_id, _, _, _, stored in checks:
        data = evidence(stored)
        step = data.get("violating_step") if isinstance(data, dict) else None
        if isinstance(step, int) and not isinstance(step, bool):
            violating.setdefault(step, []).append(str(check_id))
    return violating


def checks_section(checks: list[tuple[Any, ...]]) -> str:
    """The verdict section of an episode: one row per stored check verdict
    ``(check_id, check_text, passed, category, evidence)``."""
    if not checks:
        return "<h2>Checks</h2><p>no check verdicts stored (an errored episode is not graded)</p>"
    header = ("check", "text (and why it failed)", "verdict", "category", "violated at", "matched steps")
    widths = ("check-id", "", "verdict", "category", "at", "matched")
    return "<h2>Checks</h2>" + _table(header, [_check_row(*check) for check in checks], widths=widths,
                                      table_class="fixed")  # fmt: skip


def _messages(raw: Any) -> str:
    try:
        return json.dumps(json.loads(raw), indent=1, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return str(raw)


def steps_table(steps: list[tuple[Any, ...]], checks: list[tuple[Any, ...]]) -> str:
    """The tool calls ``(step, tool, arguments, raw_arguments, result, error_code, error_message)``, each row
    marked with the checks violated at it, and a placeholder row where each missing call was due."""
    violating = violated_steps(checks)
    missing = missing_calls(checks)
    numbers = [n for n, *_ in steps]
    rows: list[tuple[Any, ...]] = []
    attrs: list[str] = []

    def slot(due: int | None) -> int:  # the index of the step row the placeholder goes before
        return len(numbers) if due is None else sum(1 for n in numbers if isinstance(n, int) and n <= due)

    def placeholders(index: int) -> None:
        for due, check_id, why in missing:
            if slot(due) == index:
                rows.append(("", "", Html(f"<i>missing call</i> ({escape(check_id)})"), why, "", check_id))
                attrs.append(f' class="missing" id="{missing_anchor_id(check_id)}" data-missing="{escape(check_id)}"')

    for index, (n, tool, arguments, raw_arguments, result, error_code, error_message) in enumerate(steps):
        placeholders(index)
        shown_result = None if error_code is not None and result in (None, "null") else result  # an error, no result
        rows.append((Html(f'<span id="step-{escape(str(n))}">{escape(str(n))}</span>'), tool,
                     arguments_cell(arguments, raw_arguments), folded(shown_result),
                     error_cell(error_code, error_message), ", ".join(violating.get(n, []))))  # fmt: skip
        step_attr = f' data-step="{escape(str(n))}"'
        attrs.append(f' class="violation"{step_attr}' if n in violating else step_attr)
    placeholders(len(numbers))
    header = ("step", "tool", "arguments", "result", "error", "violates")
    widths = ("narrow", "tool", "args", "", "error", "violates")
    return _table(header, rows, attrs, widths=widths, table_class="fixed steps")


def episode_href(run: Any, case: Any, attempt: Any) -> str:
    """The path of an episode's page: each part percent-encoded as one path segment (browsers resolve a ``.``
    or ``..`` segment even encoded, so such a name goes in the query instead)."""
    parts = [str(run), str(case), str(attempt)]
    if any(part in (".", "..") for part in parts):
        return "/episode?" + urlencode(dict(zip(("run", "case", "attempt"), parts, strict=True)))
    return "/episode/" + "/".join(segment(part) for part in parts)


def create_app(db: Path | str, token: str | None = None) -> Starlette:
    """An app reading ``db`` afresh per request (a live run's snapshot included)."""

    def store() -> RolloutStore:
        return RolloutStore(db, read_only=True)

    def allowed(request: Request) -> bool:
        return token is None or hmac.compare_digest(request.query_params.get("token", ""), token)

    def link(path: str, **query: Any) -> str:
        """``path`` (already URL-encoded) with the token and ``query``, escaped for an attribute."""
        params = {**({"token": token} if token else {}), **{k: v for k, v in query.items() if v not in ("", None)}}
        separator = "&" if "?" in path else "?"
        return escape(f"{path}{separator}{urlencode(params)}" if params else path)

    def forbidden() -> HTMLResponse:
        return page("Forbidden", "<p>Open the address <code>mantra view</code> printed (it has the token).</p>", 403)

    async def runs(request: Request) -> HTMLResponse:
        if not allowed(request):
            return forbidden()
        from mantra_env.graders.leaderboard import leaderboard

        with store() as s:
            run_ids = [str(r[0]) for r in s.query("SELECT run_id FROM runs ORDER BY run_id")]
            rows = leaderboard(s, run_ids, 1, {}) if run_ids else []
        shown = [
            (
                Html(" ".join(f'<a href="{link("/episodes", run=r)}">{escape(r)}</a>' for r in row.summary.run_ids)),
                row.summary.model,
                row.summary.suite,
                row.summary.tasks,
                row.summary.attempts,
                _estimate(row.summary.pass_at_1),
                f"{row.summary.premature_write_rate:.1%}",
                Html(
                    f'<a href="{link("/episodes", model=row.summary.model, suite=row.summary.suite, status="error")}">'
                    f"{row.summary.errors}</a>"
                )
                if row.summary.errors
                else row.summary.errors,
            )
            for row in rows
        ]
        header = (
            "runs",
            "model",
            "suite",
            "cases",
            "episodes",
            "Pass@1 (%) [95% interval]",
            "premature writes",
            "errors",
        )
        note = "<p>Runs of one model on one suite with the same settings are pooled, as in the leaderboard.</p>"
        return page("Runs", note + _table(header, shown))

    async def episodes(request: Request) -> HTMLResponse:
        if not allowed(request):
            return forbidden()
        q = request.query_params
        where, params = ["true"], []
        for key, clause in (
            ("run", "e.run_id = ?"),
            ("model", "r.model = ?"),
            ("suite", "r.suite = ?"),
            ("case", "e.case_id = ?"),
            ("status", "e.status = ?"),
        ):
            if q.get(key):
                where.append(clause)
                params.append(q[key])
        if q.get("domain"):
            where.append("(r.suite = ? OR starts_with(r.suite, ?))")
            params += [q["domain"], q["domain"] + "/"]
        category = q.get("category")
        if category == UNREQUESTED_WRITE:
            where.append(
                "EXISTS (SELECT 1 FROM v_unrequested_writes w WHERE w.run_id = e.run_id AND w.case_id = e.case_id "
                "AND w.attempt = e.attempt)"
            )
        elif category:
            where.append(
                "EXISTS (SELECT 1 FROM check_verdicts v WHERE v.run_id = e.run_id AND v.case_id = e.case_id "
                "AND v.attempt = e.attempt AND v.category = ?)"
            )
            params.append(category)
        number = _page_number(q.get("page"))
        condition = " AND ".join(where)
        with store() as s:
            total = int(s.query(f"SELECT count(*) FROM episodes e JOIN runs r USING (run_id) WHERE {condition}",
                                params)[0][0])  # fmt: skip
            pages = max(1, math.ceil(total / PAGE_SIZE))
            number = min(number, pages)
            rows = s.query(
                "SELECT e.run_id, r.model, r.suite, e.case_id, e.attempt, e.status, e.reward, "
                "e.input_tokens + e.output_tokens, e.latency_s, e.error_kind FROM episodes e JOIN runs r "
                "USING (run_id) "
                f"WHERE {condition} ORDER BY ALL LIMIT {PAGE_SIZE} OFFSET {(number - 1) * PAGE_SIZE}",
                params,
            )
            choices = _filter_choices(s)
        filters = {k: q.get(k, "") for k in FILTERS}
        fields = "".join(
            _select(k, choices[k], filters[k]) if k in choices
            else f'<label>{k} <input name="{k}" value="{escape(filters[k])}"></label>'
            for k in FILTERS
        )  # fmt: skip
        token_field = f'<input type="hidden" name="token" value="{escape(token)}">' if token else ""
        form = f"<form>{fields} {token_field}<button>filter</button></form>"
        shown = [
            (r, m, su, Html(f'<a href="{link(episode_href(r, c, a))}">{escape(str(c))}</a>'), a,
             Html(f'<span class="{"pass" if st == "passed" else "fail"}">{escape(_status(st, kind))}</span>'), rw, t,
             _seconds(lat))
            for r, m, su, c, a, st, rw, t, lat, kind in rows
        ]  # fmt: skip
        header = ("run", "model", "suite", "case", "attempt", "status", "reward", "tokens", "latency")
        first = (number - 1) * PAGE_SIZE
        paging = [f"<span>episodes {first + 1 if total else 0}-{first + len(rows)} of {total} · page {number} of "
                  f"{pages}</span>"]  # fmt: skip
        if number > 1:
            paging.append(f'<a href="{link("/episodes", **filters, page=number - 1)}" rel="prev">previous</a>')
        if number < pages:
            paging.append(f'<a href="{link("/episodes", **filters, page=number + 1)}" rel="next">next</a>')
        nav = f'<p class="pages">{"".join(paging)}</p>'
        return page("Episodes", f'<p><a href="{link("/")}">runs</a></p>' + form + nav + _table(header, shown) + nav)

    def not_found(what: str) -> HTMLResponse:
        return page("Not found", f"<p>no episode {escape(what)} in {escape(str(db))}: "
                    f'see <a href="{link("/episodes")}">the episode list</a></p>', 404)  # fmt: skip

    async def episode(request: Request) -> HTMLResponse:
        if not allowed(request):
            return forbidden()
        parts = raw_segments(request)[1:]  # after "episode"; the path form, or else the query form
        if parts in ([], [""]):
            parts = [request.query_params.get(k, "") for k in ("run", "case", "attempt")]
        if len(parts) != 3 or not _ATTEMPT.fullmatch(parts[2]):
            return not_found(" / ".join(parts)[:300])
        key: list[Any] = [parts[0], parts[1], int(parts[2])]
        with store() as s:
            found = s.query(
                f"SELECT e.status, e.messages, e.input_tokens, e.output_tokens, e.latency_s, e.final_answer, "
                f"r.suite, r.model, e.error_kind, e.error, e.unrequested_writes FROM episodes e JOIN runs r "
                f"USING (run_id) WHERE {_EPISODE_KEY}",
                key,
            )
            if not found:
                return not_found(" / ".join(map(str, key)))
            steps = s.query(
                "SELECT step, tool, arguments, raw_arguments, result, error_code, error_message FROM steps "
                f"WHERE {_KEY} ORDER BY step",
                key,
            )
            checks = s.query(
                f"SELECT check_id, check_text, passed, category, evidence FROM check_verdicts WHERE {_KEY} "
                "ORDER BY check_id",
                key,
            )
        status, messages, tokens_in, tokens_out, latency, answer, suite, model, error_kind, error, writes = found[0]
        expected = _expected_trace(str(suite), str(key[1]))
        if isinstance(expected, list):
            plan_rows = [(i, t, folded(a)) for i, (t, a) in enumerate(expected)]
            expected_html = _table(("step", "tool", "arguments"), plan_rows)
        else:
            expected_html = f"<p>{escape(expected)}</p>"
        body = (
            f'<p><a href="{link("/episodes", run=key[0])}">episodes of {escape(str(key[0]))}</a> · model '
            f"{escape(str(model))} · suite {escape(str(suite))} · status <b>{escape(str(status))}</b> · tokens "
            f"{text(tokens_in)} in / {text(tokens_out)} out · latency {_seconds(latency)}</p>"
            + verdict_summary(status, error_kind, error, checks, writes)
            + '<section id="calls"><h2>Tool calls</h2>' + steps_table(steps, checks) + "</section>"
            + checks_section(checks)
            + "<h2>Final answer</h2><pre>" + escape(str(answer or "")) + "</pre>"
            + '<section id="expected"><details><summary>Expected (oracle) trace</summary>' + expected_html
            + "</details></section>"
            + "<details><summary>Messages</summary><pre>" + escape(_messages(messages)) + "</pre></details>"
        )  # fmt: skip
        return page(f"Episode {key[1]} #{key[2]}", body)

    routes = [
        Route("/", runs),
        Route("/episodes", episodes),
        Route("/episode", episode),
        Route("/episode/{parts:path}", episode),
    ]
    return local_app(routes, _CSS)
