"""The review web app: a run's cases by status, one case with everything a reviewer needs, and forms that
change it only through :mod:`generators.review.state` (typed edits, goals, initial values, decisions).

Safety: every request needs the session token (``?token=`` on links, a hidden field in forms); a request that
changes something must also come from the app's own origin (``Origin``/``Referer``) and name its ``Host``
among the loopback names; everything shown is escaped (model output is never rendered as HTML).
"""

from __future__ import annotations

import hmac
import json
from html import escape
from typing import Any
from urllib.parse import urlencode, urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from generators.review.run import ReviewRun, ReviewRunError
from generators.review.state import (
    ReviewError,
    SampleReview,
    SolverReport,
    StaleReview,
    apply_edit_records,
    change_goal,
    change_initial,
    decide,
    save_review,
    solve,
)
from mantra_env.checks import format_check

_CSS = (
    "body{font-family:sans-serif;margin:1em;max-width:1250px}table{border-collapse:collapse}"
    "td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top}pre{background:#f6f6f6;padding:6px;"
    "white-space:pre-wrap;overflow-wrap:anywhere}.error{color:#a00;font-weight:bold}.ok{color:#070}"
    ".bad{color:#a00}form{margin:4px 0}textarea{width:100%}section{margin-bottom:1.2em}"
    ".cols{display:grid;grid-template-columns:1fr 1fr;gap:1em}input[type=text]{width:28em}"
)
LOOPBACK = ("127.0.0.1", "localhost", "[::1]", "testserver")


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    html = (
        f"<!doctype html><meta charset=utf-8><title>{escape(title)}</title><style>{_CSS}</style>"
        f"<h1>{escape(title)}</h1>{body}"
    )
    return HTMLResponse(html, status_code=status)


def _pre(text: str) -> str:
    return f"<pre>{escape(text)}</pre>"


def _report_html(report: SolverReport | None) -> str:
    if report is None:
        return "<p>Not solved in this session yet: press <b>Re-run the solver</b>.</p>"
    if report.error:
        return f'<p class="error">{escape(report.error)}</p>'
    parts = []
    for label, result in (("forward", report.forward), ("compliant witness", report.witness)):
        if result is None:
            continue
        cls = "ok" if result.status in ("consistent", "found") else "bad"
        parts.append(f'<p>{label}: <span class="{cls}" data-query="{escape(label)}">{escape(result.status)}</span>'
                     f" {escape(result.reason)}</p>")  # fmt: skip
        if result.witness is not None:
            parts.append(_pre(result.witness.render()))
    for result in report.backward:
        cls = "ok" if result.status == "consistent" else "bad"
        check = escape(str(result.check_id))
        parts.append(f'<p>backward {check}: <span class="{cls}">{escape(result.status)}</span></p>')
        if result.witness is not None:
            parts.append(_pre(result.witness.render()))
    verdict = (
        "clean: forward and every backward query consistent, a compliant trace exists"
        if report.clean
        else ("not clean")
    )
    return f'<p data-verdict="{"clean" if report.clean else "not-clean"}"><b>{verdict}</b></p>' + "".join(parts)


def create_app(run: ReviewRun, token: str, reviewer: str) -> Starlette:
    """The app for one run directory; ``token`` guards every request, ``reviewer`` signs every change."""
    reports: dict[tuple[str, str, int], SolverReport] = {}

    def authorised(request: Request, form: Any = None) -> bool:
        given = (form or {}).get("token") or request.query_params.get("token") or ""
        return hmac.compare_digest(str(given), token)

    def same_origin(request: Request) -> bool:
        host = request.headers.get("host", "")
        if host.rsplit(":", 1)[0] not in LOOPBACK:
            return False
        source = request.headers.get("origin") or request.headers.get("referer")
        return source is None or urlsplit(source).netloc == host

    def link(path: str, **query: str) -> str:
        return f"{path}?{urlencode({'token': token, **query})}"

    def forbidden() -> HTMLResponse:
        return _page("Forbidden", "<p>Open the address the review command printed (it carries the token).</p>", 403)

    async def index(request: Request) -> Response:
        if not authorised(request):
            return forbidden()
        rows = []
        counts: dict[str, int] = {}
        for sample_id in run.sample_ids():
            review = run.review(sample_id)
            for outcome in run.outcomes(sample_id):
                decision = review.decisions.get(outcome.scenario_id)
                status = f"{decision.status} by {decision.who}" if decision else outcome.status
                counts[status.split(" ")[0]] = counts.get(status.split(" ")[0], 0) + 1
                href = escape(link(f"/case/{sample_id}/{outcome.scenario_id}"))
                rows.append(
                    f'<tr data-status="{escape(status.split(" ")[0])}"><td>{escape(sample_id)}</td>'
                    f'<td><a href="{href}">{escape(outcome.scenario_id)}</a></td><td>{escape(status)}</td>'
                    f"<td>{escape(outcome.reason)}</td></tr>"
                )
        summary = ", ".join(f"{n} {escape(k)}" for k, n in sorted(counts.items()))
        table = "<table><tr><th>sample</th><th>case</th><th>status</th><th>why</th></tr>" + "".join(rows) + "</table>"
        return _page(f"Review of {run.root.name}", f"<p>{summary}</p>{table}")

    def case_page(sample_id: str, scenario_id: str, error: str = "", status: int = 200) -> HTMLResponse:
        review = run.review(sample_id)
        scenarios = run.scenarios(sample_id)
        scenario = scenarios.get(scenario_id)
        outcome = next((o for o in run.outcomes(sample_id) if o.scenario_id == scenario_id), None)
        if scenario is None or outcome is None or scenario_id not in review.checks:
            return _page("Not found", f"<p>No case {escape(scenario_id)} in sample {escape(sample_id)}.</p>", 404)
        decision = review.decisions.get(scenario_id)
        state = f"{decision.status} by {decision.who} ({decision.reason})" if decision else outcome.status
        report = reports.get((sample_id, scenario_id, review.revision))

        def form(action: str, inner: str, label: str) -> str:
            return (
                f'<form method="post" action="/case/{escape(sample_id)}/{escape(scenario_id)}/{action}">'
                f'<input type="hidden" name="token" value="{escape(token)}">'
                f'<input type="hidden" name="revision" value="{review.revision}">{inner}'
                f'<button type="submit" name="do" value="{escape(action)}">{escape(label)}</button></form>'
            )

        checks = "".join(
            f"<tr><td>{escape(c.id)}</td><td><code>{escape(format_check(c.check))}</code></td>"
            f"<td>{'locked' if f'check:{c.id}' in review.locks else ''}</td></tr>"
            for c in review.checks[scenario_id]
        )
        options = "".join(f'<option value="{escape(c.id)}">{escape(c.id)}</option>' for c in review.checks[scenario_id])
        tools = "".join(f'<option value="{escape(t.name)}">{escape(t.name)}</option>' for t in run.tools)
        draft = scenario.draft
        valuation = {"external": draft.external, "internal": draft.internal, "model's initial values": review.initial}
        body = [
            f'<p><a href="{escape(link("/"))}">all cases</a> · status: <b data-case-status>{escape(state)}</b>'
            f" · revision {review.revision} · reviewer {escape(reviewer)}</p>",
            f'<p class="error" role="alert">{escape(error)}</p>' if error else "",
            '<div class="cols"><section><h2>Excerpt</h2>' + _pre(run.excerpt(sample_id)) + "</section>",
            "<section><h2>Scenario</h2>" + _pre(draft.prompt) + "<h3>Valuation</h3>"
            + _pre(json.dumps(valuation, indent=1, ensure_ascii=False)) + "</section></div>",
            '<div class="cols"><section><h2>Checks</h2><table>' + checks + "</table>"
            + form("edit", '<input type="hidden" name="kind" value="add_check">'
                   '<input type="text" name="check" placeholder="CALL tool(arg=&quot;v&quot;)" aria-label="new check">',
                   "Add check")
            + form("edit", f'<input type="hidden" name="kind" value="replace_check"><select name="id">{options}'
                   '</select><input type="text" name="check" aria-label="replacement check">', "Replace check")
            + form("edit", '<input type="hidden" name="kind" value="remove_check">'
                   f'<select name="id">{options}</select>', "Remove check")
            + "<h3>Goal</h3>" + form("goal", '<textarea name="goal" rows="3" aria-label="goal">'
                                     + escape("\n".join(review.goals.get(scenario_id, []))) + "</textarea>", "Set goal")
            + "<h3>Initial value</h3>" + form("initial", '<input type="text" name="name" placeholder="variable">'
                                              '<input type="text" name="value" placeholder="JSON value">', "Set")
            + "</section>",
            "<section><h2>World model</h2>" + _pre(review.model)
            + form("edit", f'<input type="hidden" name="kind" value="condition"><select name="tool">{tools}</select>'
                   '<select name="section"><option>pre</option><option>post</option></select>'
                   '<select name="change"><option value="add_condition">add</option><option value="replace_condition">'
                   'replace</option><option value="remove_condition">remove</option></select>'
                   '<input type="number" name="index" min="0" placeholder="index" style="width:5em">'
                   '<input type="text" name="expr" placeholder="(= x true)" aria-label="condition">', "Apply")
            + "<h3>Any edit (edit language, JSON list)</h3>"
            + form("edit", '<input type="hidden" name="kind" value="json"><textarea name="edits" rows="4" '
                   'aria-label="edits" placeholder=\'[{"op": "add_var", "name": "x", "type": "Bool"}]\'></textarea>',
                   "Apply edits")
            + f"<p>locked: {escape(', '.join(review.locks) or 'nothing')}</p></section></div>",
            "<section><h2>Solver</h2>" + form("solve", "", "Re-run the solver") + _report_html(report) + "</section>",
            "<section><h2>Decision</h2>"
            + form("decide", '<input type="hidden" name="status" value="accepted">'
                   '<input type="text" name="reason" placeholder="note (optional)">', "Accept")
            + form("decide", '<input type="hidden" name="status" value="rejected">'
                   '<input type="text" name="reason" placeholder="why (required)" aria-label="rejection reason">',
                   "Reject")
            + form("decide", '<input type="hidden" name="status" value="reopen"><input type="hidden" name="reason">',
                   "Reopen") + "</section>",
        ]  # fmt: skip
        return _page(f"Case {scenario_id}", "".join(body), status)

    async def case(request: Request) -> Response:
        if not authorised(request):
            return forbidden()
        return case_page(request.path_params["sample"], request.path_params["scenario"])

    def _edit_records(form: Any) -> list[dict[str, Any]]:
        kind = form.get("kind", "")
        if kind == "json":
            try:
                records = json.loads(form.get("edits", "") or "[]")
            except ValueError as error:
                raise ReviewError(f"the edits are not JSON: {error}") from None
            if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
                raise ReviewError('give a JSON list of edit objects, e.g. [{"op": "remove_check", "id": "c1"}]')
            return records
        if kind in ("add_check", "replace_check", "remove_check"):
            fields = {"op": kind, "id": form.get("id") or None, "check": form.get("check", "")}
            return [{k: v for k, v in fields.items() if v is not None and (k != "check" or kind != "remove_check")}]
        if kind == "condition":
            change = form.get("change", "")
            record: dict[str, Any] = {"op": change, "tool": form.get("tool", ""), "section": form.get("section", "")}
            if change != "add_condition":
                try:
                    record["index"] = int(form.get("index", ""))
                except ValueError:
                    raise ReviewError("give the index of the condition to replace or remove (0 is the first)") from None
            if change != "remove_condition":
                record["expr"] = form.get("expr", "")
            return [record]
        raise ReviewError(f"unknown edit form {kind!r}")

    async def act(request: Request) -> Response:
        form = await request.form()
        if not authorised(request, form):
            return forbidden()
        if not same_origin(request):
            return _page("Forbidden", "<p>Changes are accepted only from the review page itself.</p>", 403)
        sample_id, scenario_id, action = (request.path_params[k] for k in ("sample", "scenario", "action"))
        try:
            read_revision = int(str(form.get("revision", "")))
        except ValueError:
            return case_page(sample_id, scenario_id, "the form has no revision: reload the page", 400)
        try:
            review: SampleReview = run.review(sample_id)
            if review.revision != read_revision:
                raise StaleReview(
                    f"sample {sample_id} was changed since this page was loaded (revision {review.revision}, the "
                    f"page had {read_revision}); nothing was changed: review the current state and try again"
                )
            reason = str(form.get("reason", ""))
            if action == "solve":
                scenario = run.scenarios(sample_id)[scenario_id]
                reports[(sample_id, scenario_id, review.revision)] = solve(review, scenario, run.tools, run.bound)
                return RedirectResponse(link(f"/case/{sample_id}/{scenario_id}"), status_code=303)
            if action == "edit":
                changed = apply_edit_records(review, scenario_id, _edit_records(form), run.tools, reviewer, reason)
            elif action == "goal":
                goal = str(form.get("goal", "")).splitlines()
                changed = change_goal(review, scenario_id, goal, run.tools, reviewer, reason)
            elif action == "initial":
                try:
                    value = json.loads(str(form.get("value", "")))
                except ValueError as error:
                    raise ReviewError(f"the initial value is not JSON (write strings in quotes): {error}") from None
                changed = change_initial(review, str(form.get("name", "")), value, run.tools, reviewer, reason)
            elif action == "decide":
                status = str(form.get("status", ""))
                if status not in ("accepted", "rejected", "reopen"):
                    raise ReviewError(f"unknown decision {status!r}")
                changed = decide(review, scenario_id, status, reviewer, reason)  # type: ignore[arg-type]
            else:
                return _page("Not found", f"<p>No action {escape(action)}.</p>", 404)
            save_review(run.root, changed, read_revision)
        except StaleReview as error:
            return case_page(sample_id, scenario_id, str(error), 409)
        except (ReviewError, ReviewRunError) as error:
            return case_page(sample_id, scenario_id, str(error), 422)
        return RedirectResponse(link(f"/case/{sample_id}/{scenario_id}"), status_code=303)

    return Starlette(
        routes=[
            Route("/", index),
            Route("/case/{sample}/{scenario}", case),
            Route("/case/{sample}/{scenario}/{action}", act, methods=["POST"]),
        ]
    )
