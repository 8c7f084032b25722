"""The review web app: a run's cases by status, one case with everything a reviewer needs, and forms that
change it only through :mod:`mantra_env.generators.review.state` (typed edits, goals, initial values, decisions).

Safety: every request needs the session token (``?token=`` on links; a hidden field in forms, the only place a
POST may carry it); a request that changes something must also come from the app's own origin
(``Origin``/``Referer``) and name its ``Host`` among the loopback names; everything shown is escaped (model output
is never rendered as HTML), and the pages carry the security headers of :mod:`mantra_env.webapp`.

A mistake is a page that says what is wrong, never a 500: an unknown sample or case is a 404, a review file that
does not parse is a 409 naming the file, as is a save of a page older than the file, an edit that is invalid (or
JSON nested too deep) a 422, a save another process held up for longer than it waits a 503. The solver runs
in a child process (:mod:`mantra_env.generators.review.solving`), one per case at a time: "Re-run the solver" returns at
once, the case page shows the running query and a Cancel button and reloads itself every two seconds (a meta
refresh, no script) until the result is there; a result computed for an older revision of the case is dropped.
"""

from __future__ import annotations

import hmac
import json
import time
from html import escape
from typing import Any
from urllib.parse import urlencode, urlsplit

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from mantra_env.checks import format_check
from mantra_env.errors import MantraError
from mantra_env.generators.review.run import ReviewRun, ReviewRunError
from mantra_env.generators.review.solving import SolveJob, SolveJobs, SolveTarget, SolveTask, solve_in_child
from mantra_env.generators.review.state import (
    ReviewBusy,
    ReviewError,
    SampleReview,
    SolverReport,
    StaleReview,
    apply_edit_records,
    change_goal,
    change_initial,
    decide,
    save_review,
)
from mantra_env.limits import MAX_DEPTH, json_text_too_deep
from mantra_env.webapp import local_app, page, segment

_CSS = (
    "body{font-family:sans-serif;margin:1em;max-width:1250px}table{border-collapse:collapse}"
    "td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top}pre{background:#f6f6f6;padding:6px;"
    "white-space:pre-wrap;overflow-wrap:anywhere}.error{color:#a00;font-weight:bold}.ok{color:#070}"
    ".bad{color:#a00}form{margin:4px 0}textarea{width:100%}section{margin-bottom:1.2em}"
    ".cols{display:grid;grid-template-columns:1fr 1fr;gap:1em}input[type=text]{width:28em}input.index{width:5em}"
)
LOOPBACK = ("127.0.0.1", "localhost", "[::1]", "testserver")


def _json_field(value: str, what: str) -> Any:
    """The JSON value of a form field; a text nested deeper than the limit is refused before it is parsed."""
    if json_text_too_deep(value):
        raise ReviewError(f"{what} nests more than {MAX_DEPTH} levels deep: write a flatter value")
    try:
        return json.loads(value)
    except ValueError as error:
        raise ReviewError(f"{what} is not JSON: {error}") from None


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


def _job_html(job: SolveJob | None, revision: int) -> str:
    """What the case page says about its latest solve besides the report itself."""
    if job is None:
        return ""
    started = time.strftime("%H:%M:%S", time.localtime(job.started))
    if job.state == "running":
        stale = (
            f" The case changed since (now revision {revision}): this result will be discarded."
            if job.revision != revision
            else ""
        )
        return (
            f'<p data-solve="running">solving… (started {started}, {job.elapsed()} s; running: '
            f"{escape(job.phase)}; revision {job.revision}).{stale}</p>"
        )
    if job.state == "cancelled":
        return f'<p data-solve="cancelled">The solve started {started} was cancelled after {job.elapsed()} s.</p>'
    if job.revision != revision and not job.shown:
        return (
            f'<p class="error" data-solve="discarded">The result of the solve started {started} was discarded: it was '
            f"computed for revision {job.revision}, and the case is now at revision {revision}. Re-run the solver.</p>"
        )
    return ""


def create_app(run: ReviewRun, token: str, reviewer: str, solver: SolveTarget = solve_in_child) -> Starlette:
    """The app for one run directory; ``token`` guards every request, ``reviewer`` signs every change;
    ``solver`` is what a solve's child process runs."""
    reports: dict[tuple[str, str, int], SolverReport] = {}
    jobs = SolveJobs(solver)

    def authorised(request: Request, form: Any = None) -> bool:
        """The token of a GET's query, or of a POST's form (a POST's query string does not count: a token in
        an address travels further, into logs and history, than one in a form)."""
        given = form.get("token") if form is not None else request.query_params.get("token")
        return hmac.compare_digest(str(given or ""), token)

    def same_origin(request: Request) -> bool:
        host = request.headers.get("host", "")
        if host.rsplit(":", 1)[0] not in LOOPBACK:
            return False
        # Under ``Referrer-Policy: no-referrer`` a browser's form POST says ``Origin: null``; its
        # ``Sec-Fetch-Site`` (which no page can set) then tells a same-origin form from another site's.
        site = request.headers.get("sec-fetch-site")
        if site is not None:
            return site == "same-origin"
        source = request.headers.get("origin") or request.headers.get("referer")
        return source is None or urlsplit(source).netloc == host

    def link(path: str, **query: str) -> str:
        """``path`` (already URL-encoded) with the token and ``query``."""
        return f"{path}?{urlencode({'token': token, **query})}"

    def case_path(sample_id: str, scenario_id: str) -> str:
        return f"/case/{segment(sample_id)}/{segment(scenario_id)}"

    def unreadable(error: MantraError) -> HTMLResponse:
        """A file of the run directory that cannot be read: the error names it and says how to fix it."""
        return page("Cannot read the run", f'<p class="error" role="alert">{escape(str(error))}</p>'
                    f'<p><a href="{escape(link("/"))}">all cases</a></p>', 409)  # fmt: skip

    def unknown_case(sample_id: str, scenario_id: str) -> HTMLResponse | None:
        """The page to answer for a sample or case the run does not have, or ``None`` if it has it."""
        if sample_id not in run.sample_ids():
            return page("Not found", f"<p>No sample {escape(sample_id)} in this run: see "
                        f'<a href="{escape(link("/"))}">all cases</a>.</p>', 404)  # fmt: skip
        try:
            known = scenario_id in run.scenarios(sample_id)
        except MantraError as error:
            return unreadable(error)
        if not known:
            return page("Not found", f"<p>No case {escape(scenario_id)} in sample {escape(sample_id)}: see "
                        f'<a href="{escape(link("/"))}">all cases</a>.</p>', 404)  # fmt: skip
        return None

    def forbidden() -> HTMLResponse:
        return page("Forbidden", "<p>Open the address the review command printed (it carries the token).</p>", 403)

    async def index(request: Request) -> Response:
        if not authorised(request):
            return forbidden()
        rows, problems = [], []
        counts: dict[str, int] = {}
        for sample_id in run.sample_ids():
            try:
                review, outcomes = run.review(sample_id), run.outcomes(sample_id)
            except MantraError as error:  # one broken file hides only its own sample
                problems.append(f'<p class="error" role="alert">{escape(str(error))}</p>')
                rows.append(f'<tr data-status="unreadable"><td>{escape(sample_id)}</td><td></td><td>unreadable</td>'
                            f"<td>{escape(str(error))}</td></tr>")  # fmt: skip
                continue
            for outcome in outcomes:
                decision = review.decisions.get(outcome.scenario_id)
                status = f"{decision.status} by {decision.who}" if decision else outcome.status
                counts[status.split(" ")[0]] = counts.get(status.split(" ")[0], 0) + 1
                href = escape(link(case_path(sample_id, outcome.scenario_id)))
                rows.append(
                    f'<tr data-status="{escape(status.split(" ")[0])}"><td>{escape(sample_id)}</td>'
                    f'<td><a href="{href}">{escape(outcome.scenario_id)}</a></td><td>{escape(status)}</td>'
                    f"<td>{escape(outcome.reason)}</td></tr>"
                )
        summary = ", ".join(f"{n} {escape(k)}" for k, n in sorted(counts.items()))
        table = "<table><tr><th>sample</th><th>case</th><th>status</th><th>why</th></tr>" + "".join(rows) + "</table>"
        code = 409 if problems else 200
        return page(f"Review of {run.root.name}", "".join(problems) + f"<p>{summary}</p>{table}", code)

    def case_page(sample_id: str, scenario_id: str, error: str = "", status: int = 200) -> HTMLResponse:
        unknown = unknown_case(sample_id, scenario_id)
        if unknown is not None:
            return unknown
        try:
            review = run.review(sample_id)
            scenario = run.scenarios(sample_id).get(scenario_id)
            outcome = next((o for o in run.outcomes(sample_id) if o.scenario_id == scenario_id), None)
        except MantraError as unread:
            return unreadable(unread)
        if scenario is None or outcome is None or scenario_id not in review.checks:
            return page("Not found", f"<p>No case {escape(scenario_id)} in sample {escape(sample_id)}.</p>", 404)
        decision = review.decisions.get(scenario_id)
        state = f"{decision.status} by {decision.who} ({decision.reason})" if decision else outcome.status
        job = jobs.get((sample_id, scenario_id))
        if job is not None and job.report is not None and job.revision == review.revision:
            reports[(sample_id, scenario_id, review.revision)] = job.report
            job.shown = True
        report = reports.get((sample_id, scenario_id, review.revision))
        solving = job is not None and job.state == "running"

        def form(action: str, inner: str, label: str) -> str:
            return (
                f'<form method="post" action="{escape(case_path(sample_id, scenario_id))}/{action}">'
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
                   '<input type="number" name="index" min="0" placeholder="index" class="index">'
                   '<input type="text" name="expr" placeholder="(= x true)" aria-label="condition">', "Apply")
            + "<h3>Any edit (edit language, JSON list)</h3>"
            + form("edit", '<input type="hidden" name="kind" value="json"><textarea name="edits" rows="4" '
                   'aria-label="edits" placeholder=\'[{"op": "add_var", "name": "x", "type": "Bool"}]\'></textarea>',
                   "Apply edits")
            + f"<p>locked: {escape(', '.join(review.locks) or 'nothing')}</p></section></div>",
            "<section><h2>Solver</h2>"
            + (form("cancel", "", "Cancel") if solving else form("solve", "", "Re-run the solver"))
            + _job_html(job, review.revision) + ("" if solving else _report_html(report)) + "</section>",
            "<section><h2>Decision</h2>"
            + form("decide", '<input type="hidden" name="status" value="accepted">'
                   '<input type="text" name="reason" placeholder="note (optional)">', "Accept")
            + form("decide", '<input type="hidden" name="status" value="rejected">'
                   '<input type="text" name="reason" placeholder="why (required)" aria-label="rejection reason">',
                   "Reject")
            + form("decide", '<input type="hidden" name="status" value="reopen"><input type="hidden" name="reason">',
                   "Reopen") + "</section>",
        ]  # fmt: skip
        return page(f"Case {scenario_id}", "".join(body), status, refresh=2 if solving else None)

    async def case(request: Request) -> Response:
        if not authorised(request):
            return forbidden()
        return case_page(request.path_params["sample"], request.path_params["scenario"])

    def _edit_records(form: Any) -> list[dict[str, Any]]:
        kind = form.get("kind", "")
        if kind == "json":
            records = _json_field(form.get("edits", "") or "[]", "the edits")
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
            return page("Forbidden", "<p>Changes are accepted only from the review page itself.</p>", 403)
        sample_id, scenario_id, action = (request.path_params[k] for k in ("sample", "scenario", "action"))
        unknown = unknown_case(sample_id, scenario_id)
        if unknown is not None:
            return unknown
        if action == "cancel":  # whatever the revision: a solve of an older one is the likeliest to cancel
            jobs.cancel((sample_id, scenario_id))
            return RedirectResponse(link(case_path(sample_id, scenario_id)), status_code=303)
        try:
            read_revision = int(str(form.get("revision", "")))
        except ValueError:
            return case_page(sample_id, scenario_id, "the form has no revision: reload the page", 400)
        try:
            review: SampleReview = run.review(sample_id)
        except MantraError as unread:
            return unreadable(unread)
        try:
            if review.revision != read_revision:
                raise StaleReview(
                    f"sample {sample_id} was changed since this page was loaded (revision {review.revision}, the "
                    f"page had {read_revision}); nothing was changed: review the current state and try again"
                )
            reason = str(form.get("reason", ""))
            if action == "solve":
                scenario = run.scenarios(sample_id)[scenario_id]
                task = SolveTask(review, scenario, list(run.tools), run.bound, run.solver_modes)
                # in a worker thread: the spawned child reads its task only once its interpreter is up
                await run_in_threadpool(jobs.start, (sample_id, scenario_id), review.revision, task)
                return RedirectResponse(link(case_path(sample_id, scenario_id)), status_code=303)
            if action == "edit":
                changed = apply_edit_records(review, scenario_id, _edit_records(form), run.tools, reviewer, reason)
            elif action == "goal":
                goal = str(form.get("goal", "")).splitlines()
                changed = change_goal(review, scenario_id, goal, run.tools, reviewer, reason)
            elif action == "initial":
                value = _json_field(str(form.get("value", "")), "the initial value (write strings in quotes)")
                changed = change_initial(review, str(form.get("name", "")), value, run.tools, reviewer, reason)
            elif action == "decide":
                status = str(form.get("status", ""))
                if status not in ("accepted", "rejected", "reopen"):
                    raise ReviewError(f"unknown decision {status!r}")
                changed = decide(review, scenario_id, status, reviewer, reason)  # type: ignore[arg-type]
            else:
                return page("Not found", f"<p>No action {escape(action)}.</p>", 404)
            save_review(run.root, changed, read_revision)
        except StaleReview as error:
            return case_page(sample_id, scenario_id, str(error), 409)
        except ReviewBusy as error:  # another process is saving this sample: the change can be made again
            return case_page(sample_id, scenario_id, str(error), 503)
        except (ReviewError, ReviewRunError) as error:
            return case_page(sample_id, scenario_id, str(error), 422)
        return RedirectResponse(link(case_path(sample_id, scenario_id)), status_code=303)

    routes = [
        Route("/", index),
        Route("/case/{sample}/{scenario}", case),
        Route("/case/{sample}/{scenario}/{action}", act, methods=["POST"]),
    ]
    return local_app(routes, _CSS)  # the solves are daemon processes: they end with the app
