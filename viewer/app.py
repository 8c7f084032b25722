"""The viewer's pages: runs with the leaderboard's scores, filterable episodes, one episode step by step with
each check's verdict pointing at its steps and the case's expected (oracle) trace beside it.

The store is opened read-only per request, so a live run's finished episodes show through its snapshot. With a
``token`` every request must carry it (``?token=``; the pages' links do). Everything shown is escaped: model
output is never rendered as HTML.
"""

from __future__ import annotations

import hmac
import json
import math
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from mantra_env.errors import MantraError
from mantra_env.store import RolloutStore

_CSS = (
    "body{font-family:sans-serif;margin:1em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
    "padding:2px 6px;vertical-align:top}tr.violation{background:#fde2e2}.fail{color:#a00}.pass{color:#070}"
    "pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f6f6;padding:6px}"
    ".cols{display:grid;grid-template-columns:3fr 2fr;gap:1em}td code{overflow-wrap:anywhere}"
)
FILTERS = ("run", "model", "suite", "domain", "case", "status", "category")
_KEY = "run_id = ? AND case_id = ? AND attempt = ?"
_EPISODE_KEY = "e.run_id = ? AND e.case_id = ? AND e.attempt = ?"


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    html = (
        f"<!doctype html><meta charset=utf-8><title>{escape(title)}</title><style>{_CSS}</style>"
        f"<h1>{escape(title)}</h1>{body}"
    )
    return HTMLResponse(html, status_code=status)


def _table(header: tuple[str, ...], rows: list[tuple[Any, ...]], row_attrs: list[str] | None = None) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    attrs = row_attrs or [""] * len(rows)
    cells = ["".join(f"<td>{c}</td>" for c in row) for row in rows]
    body = "".join(f"<tr{a}>{c}</tr>" for c, a in zip(cells, attrs, strict=True))
    return f"<table><tr>{head}</tr>{body}</table>"


def _estimate(value: Any) -> str:
    if math.isnan(value.value):
        return "n/a"
    if math.isnan(value.low):
        return f"{value.value:.1%}"
    return f"{value.value:.1%} [{value.low:.1%}, {value.high:.1%}]"


def _expected_trace(suite: str, case_id: str) -> list[tuple[str, str]] | str:
    """The oracle's calls for the case (tool, arguments), or why there is none to show."""
    from agents.scripted import OracleError, oracle_plan
    from mantra_env.domains import find_suite

    try:
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


def create_app(db: Path | str, token: str | None = None) -> Starlette:
    """An app reading ``db`` afresh per request (a live run's snapshot included)."""

    def store() -> RolloutStore:
        return RolloutStore(db, read_only=True)

    def allowed(request: Request) -> bool:
        return token is None or hmac.compare_digest(request.query_params.get("token", ""), token)

    def link(path: str, **query: Any) -> str:
        params = {**({"token": token} if token else {}), **{k: v for k, v in query.items() if v not in ("", None)}}
        return escape(f"{path}?{urlencode(params)}" if params else path)

    def forbidden() -> HTMLResponse:
        return _page("Forbidden", "<p>Open the address <code>mantra view</code> printed (it has the token).</p>", 403)

    async def runs(request: Request) -> HTMLResponse:
        if not allowed(request):
            return forbidden()
        from graders.leaderboard import leaderboard

        with store() as s:
            run_ids = [str(r[0]) for r in s.query("SELECT run_id FROM runs ORDER BY run_id")]
            rows = leaderboard(s, run_ids, 1, {}) if run_ids else []
        shown = [
            (
                " ".join(f'<a href="{link("/episodes", run=r)}">{escape(r)}</a>' for r in row.summary.run_ids),
                escape(row.summary.model),
                escape(row.summary.suite),
                row.summary.tasks,
                row.summary.attempts,
                _estimate(row.summary.pass_at_1),
                f"{row.summary.premature_write_rate:.1%}",
                row.summary.errors,
            )
            for row in rows
        ]
        header = ("runs", "model", "suite", "cases", "episodes", "Pass@1 [95% CI]", "premature writes", "errors")
        note = "<p>Runs of one model on one suite with the same settings are pooled, as in the leaderboard.</p>"
        return _page("Runs", note + _table(header, shown))

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
        if q.get("category"):
            where.append(
                "EXISTS (SELECT 1 FROM check_verdicts v WHERE v.run_id = e.run_id AND v.case_id = e.case_id "
                "AND v.attempt = e.attempt AND v.category = ?)"
            )
            params.append(q["category"])
        with store() as s:
            rows = s.query(
                "SELECT e.run_id, r.model, r.suite, e.case_id, e.attempt, e.status, e.reward, "
                "e.input_tokens + e.output_tokens, e.latency_s FROM episodes e JOIN runs r USING (run_id) "
                f"WHERE {' AND '.join(where)} ORDER BY ALL",
                params,
            )
            categories = [str(c[0]) for c in s.query("SELECT DISTINCT category FROM check_verdicts "
                                                     "WHERE category IS NOT NULL ORDER BY 1")]  # fmt: skip
        fields = "".join(
            f'<label>{k} <input name="{k}" value="{escape(q.get(k, ""))}"></label> ' for k in FILTERS if k != "category"
        )
        options = "".join(
            f"<option{' selected' if q.get('category') == c else ''}>{escape(c)}</option>" for c in categories
        )
        token_field = f'<input type="hidden" name="token" value="{escape(token)}">' if token else ""
        form = (
            f'<form>{fields}<label>category <select name="category"><option value="">any</option>{options}'
            f"</select></label> {token_field}<button>filter</button></form>"
        )
        shown = [
            (escape(r), escape(m), escape(su), f'<a href="{link(f"/episode/{r}/{c}/{a}")}">{escape(c)}</a>', a,
             f'<span class="{"pass" if st == "passed" else "fail"}">{escape(st)}</span>', rw, t, f"{lat:.2f}s")
            for r, m, su, c, a, st, rw, t, lat in rows
        ]  # fmt: skip
        header = ("run", "model", "suite", "case", "attempt", "status", "reward", "tokens", "latency")
        return _page("Episodes", f'<p><a href="{link("/")}">runs</a></p>' + form + _table(header, shown))

    async def episode(request: Request) -> HTMLResponse:
        if not allowed(request):
            return forbidden()
        key = [request.path_params["run"], request.path_params["case"], request.path_params["attempt"]]
        with store() as s:
            found = s.query(
                f"SELECT e.status, e.messages, e.input_tokens, e.output_tokens, e.latency_s, e.final_answer, "
                f"r.suite, r.model FROM episodes e JOIN runs r USING (run_id) WHERE {_EPISODE_KEY}",
                key,
            )
            if not found:
                return _page("Not found", f"<p>no episode {escape(' / '.join(map(str, key)))} in {escape(str(db))}: "
                             f'see <a href="{link("/episodes")}">the episode list</a></p>', 404)  # fmt: skip
            steps = s.query(
                f"SELECT step, tool, arguments, result, error_code FROM steps WHERE {_KEY} ORDER BY step", key
            )
            checks = s.query(
                f"SELECT check_id, check_text, passed, category, evidence FROM check_verdicts WHERE {_KEY} "
                "ORDER BY check_id",
                key,
            )
        status, messages, tokens_in, tokens_out, latency, answer, suite, model = found[0]
        violating: dict[int, list[str]] = {}
        check_rows = []
        for check_id, text, passed, category, evidence in checks:
            data = json.loads(evidence) if isinstance(evidence, str) else evidence or {}
            step = data.get("violating_step")
            if step is not None:
                violating.setdefault(int(step), []).append(check_id)
            matched = ", ".join(
                f"{escape(role)}: " + " ".join(f'<a href="#step-{n}">{n}</a>' for n in steps_)
                for role, steps_ in (data.get("matched") or {}).items()
                if steps_
            )
            at = f'<a href="#step-{step}" data-violating-step="{step}">step {step}</a>' if step is not None else ""
            check_rows.append((
                escape(check_id), f"<code>{escape(text)}</code>",
                f'<span class="{"pass" if passed else "fail"}">{"passed" if passed else "failed"}</span>',
                escape(str(category or "")), at, matched, escape(str(data.get("explanation", ""))),
            ))  # fmt: skip
        step_rows = [
            (f'<span id="step-{n}">{n}</span>', escape(t), f"<code>{escape(str(a))}</code>",
             f"<code>{escape(str(r))[:600]}</code>", escape(str(err or "")),
             escape(", ".join(violating.get(n, []))))
            for n, t, a, r, err in steps
        ]  # fmt: skip
        attrs = [f' class="violation" data-step="{n}"' if n in violating else f' data-step="{n}"' for n, *_ in steps]
        expected = _expected_trace(str(suite), str(key[1]))
        if isinstance(expected, list):
            plan_rows = [(i, escape(t), f"<code>{escape(a)}</code>") for i, (t, a) in enumerate(expected)]
            expected_html = _table(("step", "tool", "arguments"), plan_rows)
        else:
            expected_html = f"<p>{escape(expected)}</p>"
        body = (
            f'<p><a href="{link("/episodes", run=key[0])}">episodes of {escape(str(key[0]))}</a> · model '
            f"{escape(str(model))} · suite {escape(str(suite))} · status <b>{escape(str(status))}</b> · tokens "
            f"{tokens_in} in / {tokens_out} out · latency {latency:.2f}s</p>"
            '<div class="cols"><section><h2>Tool calls</h2>'
            + _table(("step", "tool", "arguments", "result", "error", "violates"), step_rows, attrs)
            + "</section><section><h2>Expected (oracle) trace</h2>" + expected_html + "</section></div>"
            + "<h2>Checks</h2>"
            + _table(("check", "text", "verdict", "category", "violated at", "matched steps", "why"), check_rows)
            + "<h2>Final answer</h2><pre>" + escape(str(answer or "")) + "</pre>"
            + "<h2>Messages</h2><pre>" + escape(json.dumps(json.loads(messages), indent=1, ensure_ascii=False))
            + "</pre>"
        )  # fmt: skip
        return _page(f"Episode {key[1]} #{key[2]}", body)

    routes = [
        Route("/", runs),
        Route("/episodes", episodes),
        Route("/episode/{run}/{case}/{attempt:int}", episode),
    ]
    return Starlette(routes=routes)
