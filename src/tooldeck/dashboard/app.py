"""The dashboard's HTTP app, mounted beside ``/mcp`` (see :func:`with_dashboard`).

Same access rules as ``/mcp``: bound to loopback, any local request (whose
Host header names a loopback address: a page on another origin cannot rebind
its name onto us); bound elsewhere, the bearer token, sent as the header, or
once as ``?token=`` which sets a cookie so a browser can keep browsing.
Live status comes from server-sent events fed by the session manager.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from tooldeck.agents.audit import audit_log
from tooldeck.agents.chat import chat_db
from tooldeck.agents.manager import SessionManager, session_manager
from tooldeck.core.errors import ToolError
from tooldeck.dashboard import pages
from tooldeck.runtime import Runtime
from tooldeck.selection.service import selection_service

COOKIE = "tooldeck_token"
LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "[::1]", "::1"}


def _sessions(mgr: SessionManager, limit: int = 100) -> str:
    rows = mgr.db.list(limit=limit)
    return pages.sessions_table([(r, mgr.snapshot(r.id)) for r in rows])


def _session(mgr: SessionManager, sid: str) -> str:
    row = mgr.row(sid)
    return pages.transcript(row, mgr.snapshot(sid), mgr.db.items(sid))


def _selection(rt: Runtime) -> str:
    svc = selection_service(rt)
    return pages.selection_view(svc.breakdown(), svc.prompt())


def dashboard_app(rt: Runtime) -> Starlette:
    mgr = session_manager(rt)

    def html(title: str, active: str, body: str, **kw: Any) -> HTMLResponse:
        return HTMLResponse(pages.page(title, active, body, **kw))

    async def index(request: Request) -> Response:
        return html("Agent sessions", "/", f'<div id="sessions" data-fragment="/fragment/sessions">'
                    f"{_sessions(mgr)}</div>")  # fmt: skip

    async def session(request: Request) -> Response:
        sid = request.path_params["sid"]
        try:
            body = _session(mgr, sid)
        except ToolError as exc:
            return PlainTextResponse(exc.message, status_code=404)
        name = mgr.row(sid).name
        return html(f"Session {name}", "/", f'<div id="session" data-fragment="/fragment/sessions/{sid}">{body}</div>',
                    session=sid)  # fmt: skip

    async def fragment(request: Request) -> Response:
        sid = request.path_params.get("sid")
        try:
            return HTMLResponse(_session(mgr, sid) if sid else _sessions(mgr))
        except ToolError as exc:
            return PlainTextResponse(exc.message, status_code=404)

    async def selection(request: Request) -> Response:
        body = await asyncio.to_thread(_selection, rt)
        return html("Selection", "/selection", body)

    async def chats(request: Request) -> Response:
        return html("Chats", "/chats", pages.chats_table(chat_db(rt).list(limit=100)))

    async def chat(request: Request) -> Response:
        cid = request.path_params["cid"]
        row = chat_db(rt).get(cid)
        if row is None:
            return PlainTextResponse("no such chat", status_code=404)
        return html(f"Chat {row.name}", "/chats", pages.chat_view(chat_db(rt).messages(cid)))

    async def audit(request: Request) -> Response:
        return html("Audit of tool calls", "/audit", pages.audit_table(audit_log(rt).recent(300)))

    async def api_sessions(request: Request) -> Response:
        rows = mgr.db.list(limit=100)
        return Response(json.dumps([mgr.snapshot(r.id) for r in rows]), media_type="application/json")

    async def events(request: Request) -> Response:
        return StreamingResponse(_events(mgr), media_type="text/event-stream",
                                 headers={"cache-control": "no-cache", "x-accel-buffering": "no"})  # fmt: skip

    return Starlette(routes=[
        Route("/", index), Route("/sessions/{sid}", session), Route("/fragment/sessions", fragment),
        Route("/fragment/sessions/{sid}", fragment), Route("/selection", selection), Route("/chats", chats),
        Route("/chats/{cid}", chat), Route("/audit", audit), Route("/api/sessions", api_sessions),
        Route("/events", events),
    ])  # fmt: skip


async def _events(mgr: SessionManager) -> AsyncIterator[str]:
    """Session snapshots as they change (coalesced, at most ~6 batches a second)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str] = asyncio.Queue()

    def changed(sid: str) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, sid)

    unsubscribe = mgr.subscribe(changed)
    try:
        yield "retry: 1000\n\n"
        while True:
            try:
                first = await asyncio.wait_for(queue.get(), 15)
            except TimeoutError:
                yield ": keep-alive\n\n"
                continue
            await asyncio.sleep(0.15)
            sids = {first}
            while not queue.empty():
                sids.add(queue.get_nowait())
            for sid in sids:
                try:
                    snap = mgr.snapshot(sid)
                except ToolError:
                    snap = {"session_id": sid, "status": "deleted"}
                yield f"event: session\ndata: {json.dumps(snap)}\n\n"
    finally:
        unsubscribe()


def _host_ok(scope: dict[str, Any]) -> bool:
    """The Host header names loopback: ``localhost`` or a loopback address
    literal (any of 127.0.0.0/8, as ``--http 127.0.0.2:PORT`` binds). A
    rebinding attack needs a DNS name of the attacker's; an address literal
    is not one."""
    headers = dict(scope.get("headers") or [])
    host = headers.get(b"host", b"").decode("latin-1")
    name = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
    if name in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


def _token_of(scope: dict[str, Any]) -> tuple[str | None, str | None]:
    """(token from header or cookie, token from ?token=)."""
    headers = dict(scope.get("headers") or [])
    auth = headers.get(b"authorization", b"").decode("latin-1")
    got = auth[7:] if auth.startswith("Bearer ") else None
    for part in headers.get(b"cookie", b"").decode("latin-1").split(";"):
        k, _, v = part.strip().partition("=")
        if k == COOKIE and got is None:
            got = v
    query = scope.get("query_string", b"").decode("latin-1")
    param = next((p[6:] for p in query.split("&") if p.startswith("token=")), None)
    return got, param


def with_dashboard(mcp_app: Any, rt: Runtime, *, loopback: bool, token: str | None) -> Any:
    """An ASGI app: ``/mcp`` (and lifespan) to ``mcp_app``, everything else to the dashboard."""
    dash = dashboard_app(rt)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/mcp"):
            await mcp_app(scope, receive, send)
            return
        if token:
            got, param = _token_of(scope)
            if param is not None and hmac.compare_digest(param, token):
                resp: Response = RedirectResponse(scope["path"], status_code=303)
                resp.set_cookie(COOKIE, token, httponly=True, samesite="strict")
                await resp(scope, receive, send)
                return
            if got is None or not hmac.compare_digest(got, token):
                await PlainTextResponse("unauthorized: open /?token=<token> once, or send Authorization: Bearer",
                                        status_code=401)(scope, receive, send)  # fmt: skip
                return
        elif loopback and not _host_ok(scope):
            await PlainTextResponse("forbidden host", status_code=403)(scope, receive, send)
            return
        await dash(scope, receive, send)

    return app
