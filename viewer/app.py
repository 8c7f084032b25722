"""The viewer's pages: runs, filterable episodes, one episode step by step (read-only store)."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from mantra_env.store import RolloutStore

_CSS = (
    "body{font-family:sans-serif;margin:1em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
)
FILTERS = ("model", "suite", "case", "status")
_KEY = "run_id = ? AND case_id = ? AND attempt = ?"


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    html = f"<!doctype html><title>{escape(title)}</title><style>{_CSS}</style><h1>{escape(title)}</h1>{body}"
    return HTMLResponse(html, status_code=status)


def _table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def create_app(db: Path | str) -> Starlette:
    """An app reading ``db`` afresh per request (a live run's snapshot included)."""

    def store() -> RolloutStore:
        return RolloutStore(db, read_only=True)

    async def runs(request: Request) -> HTMLResponse:
        with store() as s:
            rows = s.query(
                "SELECT r.run_id, r.model, r.suite, count(e.case_id), count_if(e.status = 'passed') "
                "FROM runs r LEFT JOIN episodes e USING (run_id) GROUP BY ALL ORDER BY r.run_id"
            )
        shown = [
            (
                f'<a href="/episodes?run={escape(r)}">{escape(r)}</a>',
                escape(m),
                escape(su),
                n,
                f"{p / n:.2f}" if n else "n/a",
            )
            for r, m, su, n, p in rows
        ]
        return _page("Runs", _table(("run", "model", "suite", "episodes", "pass rate"), shown))

    async def episodes(request: Request) -> HTMLResponse:
        q = request.query_params
        where, params = ["true"], []
        for key, column in (
            ("run", "e.run_id"),
            ("model", "r.model"),
            ("suite", "r.suite"),
            ("case", "e.case_id"),
            ("status", "e.status"),
        ):
            if q.get(key):
                where.append(f"{column} = ?")
                params.append(q[key])
        with store() as s:
            rows = s.query(
                "SELECT e.run_id, r.model, r.suite, e.case_id, e.attempt, e.status, e.reward, "
                "e.input_tokens + e.output_tokens, "
                f"e.latency_s FROM episodes e JOIN runs r USING (run_id) WHERE {' AND '.join(where)} ORDER BY ALL",
                params,
            )
        form = (
            "<form>"
            + "".join(f'{k} <input name="{k}" value="{escape(q.get(k, ""))}"> ' for k in ("run", *FILTERS))
            + "<button>filter</button></form>"
        )
        shown = [
            (
                escape(r),
                escape(m),
                escape(su),
                f'<a href="/episode/{escape(r)}/{escape(c)}/{a}">{escape(c)}</a>',
                a,
                st,
                rw,
                t,
                f"{lat:.2f}s",
            )
            for r, m, su, c, a, st, rw, t, lat in rows
        ]
        header = ("run", "model", "suite", "case", "attempt", "status", "reward", "tokens", "latency")
        return _page("Episodes", form + _table(header, shown))

    async def episode(request: Request) -> HTMLResponse:
        key = [request.path_params["run"], request.path_params["case"], request.path_params["attempt"]]
        with store() as s:
            found = s.query(f"SELECT status, messages FROM episodes WHERE {_KEY}", key)
            if not found:
                return _page("Not found", f"<p>no episode {escape(' / '.join(map(str, key)))} in {escape(str(db))}: "
                             'see <a href="/episodes">the episode list</a></p>', 404)  # fmt: skip
            steps = s.query(
                f"SELECT step, tool, arguments, result FROM steps WHERE {_KEY} ORDER BY step",
                key,
            )
            checks = s.query(
                f"SELECT check_id, passed, category, evidence FROM check_verdicts WHERE {_KEY} ORDER BY check_id",
                key,
            )
        status, messages = found[0]
        body = f"<p>status: {escape(status)}</p><h2>Tool calls</h2>" + _table(
            ("step", "tool", "arguments", "result"), [(n, escape(t), escape(a), escape(str(r))) for n, t, a, r in steps]
        )
        body += "<h2>Checks</h2>" + _table(
            ("check", "passed", "category", "evidence"),
            [(escape(c), p, escape(str(k)), escape(e)) for c, p, k, e in checks],
        )
        body += "<h2>Messages</h2><pre>" + escape(json.dumps(json.loads(messages), indent=1)) + "</pre>"
        return _page(f"Episode {key[1]} #{key[2]}", body)

    routes = [
        Route("/", runs),
        Route("/episodes", episodes),
        Route("/episode/{run}/{case}/{attempt:int}", episode),
    ]
    return Starlette(routes=routes)
