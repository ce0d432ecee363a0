"""Connected mode: the conversation runs as an agent session on a ``tooldeck serve --http``.

The server owns the workspaces, their roots and the model credentials; the
chat sends the file's conversation (its messages, tool calls and results), the
built-in tools it declares and its model, and the server runs it with
``agent_run`` on the workspace the person chose (``--workspace NAME``:
``${workspace}`` is that workspace's root there, ``${tool_dir}`` the server's
launch directory; this machine's current directory selects nothing). The chat
follows the run change by change (``op=wait changed_since``), appends every
entry the session produces to the local file exactly as ``tooldeck run``
would, and answers its approvals and questions. Closing the terminal does not
stop the session: reopening the file (or ``--session ID``) shows what it did
meanwhile and continues it; the dashboard shows it too.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tooldeck.llm.types import Item, Message, Usage
from tooldeck.tui.events import Added, Ask, Busy, Event, Failed, Notice, Opened, Settled, Stream, Tokens
from tooldeck.tui.links import Link, Links, file_digest
from tooldeck.tui.server import RemoteError, Server, endpoint, entry_of, item_of, read_token, shown
from tooldeck.tui.worker import EngineThread

log = logging.getLogger("tooldeck.tui")
Emit = Callable[[Event], None]
OUTCOMES = {"completed": "answer", "cancelled": "cancelled", "failed": "error", "expired": "answer"}

__all__ = ["RemoteChat", "RemoteError", "read_token"]


REFUSED = "the server refused the token (401): set TOOLDECK_HTTP_TOKEN or --token-file to its bearer token"


def _reason(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return str(exc) or type(exc).__name__


class RemoteChat:
    def __init__(
        self, path: Path, emit: Emit, *, url: str, token: str | None, workspace: str | None = None,
        session: str | None = None, model: str | None = None, approval: str = "auto",
        state_dir: str | os.PathLike[str] | None = None,
    ) -> None:  # fmt: skip
        self.path, self.emit, self.url, self.token = path, emit, url, token
        self.workspace_ref, self.session_flag, self.model_flag = workspace, session, model
        self.approval, self.state_dir = approval, state_dir
        self.links = Links(state_dir)
        self.sid: str | None = None
        self.seq = 0  # entries of the session already in the file
        self.workspace = ""
        self._engine = EngineThread("tooldeck-chat-remote")
        self._commands: asyncio.Queue[tuple[Any, ...]] | None = None
        self._follow_task: asyncio.Task[None] | None = None
        self._server: Server | None = None
        self._named: Any = None  # the engine's NamedFile: loads judged against the transcript record
        self._on_item: Any = None  # appends an element to the file and saves the record
        self._live = {"text": "", "reasoning": ""}
        self._usage = Usage()
        self._ask: tuple[str, Ask] | None = None
        self.exists = path.exists()

    # the screen's side ------------------------------------------------------------------
    def open(self) -> None:
        self._engine.submit(self._main())

    def send(self, text: str) -> None:
        self._command("send", text)

    def cancel(self) -> None:
        self._command("cancel")

    def close(self) -> None:
        self._command("close")
        self._engine.stop(timeout=5)

    def _command(self, *cmd: Any) -> None:
        def put() -> None:
            if self._commands is not None:
                self._commands.put_nowait(cmd)

        self._engine.call(put)

    # connection --------------------------------------------------------------------------
    async def _main(self) -> None:
        import httpx2
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        self._commands = asyncio.Queue()
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        refused: list[int] = []

        async def seen(response: Any) -> None:  # the SDK reports a 401 as a generic error: keep the status
            if response.status_code == 401:
                refused.append(401)

        try:
            url = endpoint(self.url)
            async with (
                httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300), trust_env=False,
                                   event_hooks={"response": [seen]}) as http,
                streamable_http_client(url, http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                self._server = Server(session, url)
                if await self._attach():
                    await self._serve()
        except RemoteError as exc:
            self.emit(Failed(str(exc)))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.debug("connected chat failed", exc_info=True)
            self.emit(Failed(f"{shown(self.url)}: {REFUSED if refused else _reason(exc)}"))

    async def _serve(self) -> None:
        assert self._commands is not None
        while True:
            cmd = await self._commands.get()
            try:
                if cmd[0] == "close":
                    break
                if cmd[0] == "send":
                    await self._send(cmd[1])
                elif cmd[0] == "cancel" and self.sid is not None and self._following():
                    await self._server_().cancel(self.sid)
                elif cmd[0] == "answer":
                    await self._server_().respond(cmd[1], cmd[2], cmd[3])
            except RemoteError as exc:
                self.emit(Notice(str(exc), "error"))
        if self._follow_task is not None:
            self._follow_task.cancel()

    def _server_(self) -> Server:
        assert self._server is not None
        return self._server

    # opening -------------------------------------------------------------------------------
    async def _workspace(self) -> dict[str, Any]:
        listed = await self._server_().workspaces()
        ref = self.workspace_ref
        for w in listed:
            if (ref is None and w.get("current")) or ref in (w.get("name"), w.get("id")):
                return w
        names = ", ".join(repr(w.get("name")) for w in listed) or "(none)"
        raise RemoteError(f"no workspace {ref!r} on {shown(self.url)}; its workspaces: {names}")

    async def _attach(self) -> bool:
        from tooldeck.tui import engine as eng  # lazy: ChatMD (~200 modules) loads on the engine thread
        from tooldeck.tui.blocks import warm_up  # lazy: rich loads on the engine thread (warm_up)

        warm_up()
        ws = await self._workspace()
        self.workspace = str(ws["name"])
        try:
            self._named = eng.named_file(self.path, eng.runtime_for(None, self.state_dir))
            doc, exists = eng.open_document(self._named, self.model_flag)
            plan = eng.remote_plan(doc, self.model_flag)
            self._named.save()  # what this chat honours, before the model can touch the file
        except eng.ChatmdError as exc:
            self.emit(Failed(str(exc)))
            return False
        except OSError as exc:
            self.emit(Failed(f"cannot record the file's authority: {exc.strerror or exc}"))
            return False
        self.exists = exists
        self._on_item = self._named.recording(plan.show_tool_call)
        items: list[Item] = list(plan.items)
        sid, seq, note = self._resume_point(exists)
        model = plan.model or "server default"
        if sid is not None:
            snap = await self._server_().poll(sid)
            self.sid, self.seq = sid, seq
            model = snap.get("agent", {}).get("model") or model
        where = f"{shown(self.url)} · workspace {self.workspace}" + (f" · session {self.sid[:8]}" if self.sid else "")
        roots = tuple(str(f) for f in ws.get("folders") or ())
        self.emit(Opened(self.path, exists, str(model), roots, tuple(items), where=where))
        if note:
            self.emit(Notice(note, "warning"))
        self.emit(Settled())
        if self.sid is not None:
            await self._sync()
            self._follow_task = asyncio.get_running_loop().create_task(self._follow())
        return True

    def _resume_point(self, exists: bool) -> tuple[str | None, int, str]:
        """The session this file continues (and how much of it the file holds), if any."""
        link = self.links.get(self.path)
        fresh = link is not None and link.url == shown(self.url) and link.workspace == self.workspace
        same = fresh and link is not None and link.sha256 == file_digest(self.path)
        if self.session_flag:
            if link is not None and link.session == self.session_flag and same:
                return link.session, link.seq, ""
            if exists:
                raise RemoteError(f"{self.path} is not this chat's record of session {self.session_flag}; "
                                  "open it without --session (a new session starts from it), or name a new file")
            return self.session_flag, 0, ""
        if link is None or not fresh:
            return None, 0, ""
        if not same:
            return None, 0, (f"{self.path.name} changed since it last followed session {link.session[:8]}; "
                             "your next message starts a new session from the file")  # fmt: skip
        return link.session, link.seq, ""

    # talking -----------------------------------------------------------------------------------
    async def _send(self, text: str) -> None:
        from tooldeck.tui import engine as eng  # lazy: ChatMD (~200 modules) loads on the engine thread

        server = self._server_()
        if self.sid is None:
            if not self.path.exists():
                eng.create_conversation(self.path, self.model_flag)
                self.emit(Notice(f"created {self.path}"))
            plan = eng.remote_plan(eng.open_document(self._named, self.model_flag)[0], self.model_flag)
            items, held = list(plan.items), 0
            if not text:  # the file's own last <user> message starts the session: it is already in the file
                last = items[-1] if items else None
                if not isinstance(last, Message) or last.role != "user":
                    self.emit(Notice("nothing to answer: the file does not end with a user message; type one"))
                    return
                text, items, held = last.text, items[:-1], 1
            history = [entry_of(i) for i in items]
            args: dict[str, Any] = {"message": text, "history": history, "workspace": self.workspace,
                                    "tools": list(plan.tools), "approval": self.approval,
                                    "session_name": self.path.name}  # fmt: skip
            if plan.model:
                args["model_id"] = plan.model
            snap = await server.start(**args)
            self.sid, self.seq = str(snap["session_id"]), len(history) + held
            self._save_link()
            self.emit(Notice(f"session {self.sid} on {shown(self.url)} (workspace {self.workspace})"))
        elif not text:
            self.emit(Notice("nothing to send: type a message"))
            return
        else:
            await server.steer(self.sid, text)
            if self._following():
                self.emit(Notice("queued: your message joins the session at its next model turn"))
        if not self._following():
            self._follow_task = asyncio.get_running_loop().create_task(self._follow())

    def _following(self) -> bool:
        return self._follow_task is not None and not self._follow_task.done()

    async def _follow(self) -> None:
        """Follow the session's run until it ends: entries, live text, questions."""
        assert self.sid is not None
        server, version, busy = self._server_(), None, False
        try:
            while True:
                snap = await (server.poll(self.sid) if version is None else server.changed(self.sid, version))
                version = snap.get("version")
                await self._sync(snap)
                self._live_update(snap)
                status = snap.get("status")
                if status in ("running", "waiting_for_input"):
                    if not busy:
                        self.emit(Busy(True))
                        busy = True
                    self._interaction(snap.get("interaction"))
                    if version is None:
                        await asyncio.sleep(1.0)  # a run this server does not hold live: look again
                    continue
                self._interaction(None)
                message = snap.get("status_text", "") if status != "completed" else ""
                self.emit(Busy(False, OUTCOMES.get(str(status), "answer"), message))  # type: ignore[arg-type]
                return
        except RemoteError as exc:
            self.emit(Busy(False, "error", str(exc)))

    async def _sync(self, snap: dict[str, Any] | None = None) -> None:
        """Append the session's new entries to the file, then show them."""
        if self.sid is None or (snap is not None and int(snap.get("transcript_item_count", 0)) <= self.seq):
            return
        entries = await self._server_().log(self.sid, self.seq)
        if entries and not self.path.exists():
            from tooldeck.tui import engine as eng  # lazy: ChatMD (~200 modules) loads on the engine thread

            eng.create_conversation(self.path, self.model_flag)
        for entry in entries:
            item = item_of(entry)
            self._on_item(item)
            self.seq = int(entry["seq"])
            self.emit(Added(item))
        if entries:
            self._save_link()

    def _save_link(self) -> None:
        assert self.sid is not None
        self.links.put(self.path, Link(shown(self.url), self.workspace, self.sid, self.seq, file_digest(self.path)))

    def _live_update(self, snap: dict[str, Any]) -> None:
        live = snap.get("live") or {}
        for kind in ("reasoning", "text"):
            text = str(live.get(kind) or "")
            if text and text != self._live[kind]:
                self.emit(Stream(kind, text, replace=True))  # type: ignore[arg-type]
            self._live[kind] = text
        usage = snap.get("usage")
        if usage:
            seen = Usage(int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0)))
            if seen.total_tokens < self._usage.total_tokens:
                self._usage = Usage()  # a new run counts from zero
            delta = Usage(seen.input_tokens - self._usage.input_tokens, seen.output_tokens - self._usage.output_tokens)
            if delta.total_tokens:
                self.emit(Tokens(delta, known=True))
            self._usage = seen

    def _interaction(self, pending: dict[str, Any] | None) -> None:
        """Show the session's pending approval or question; withdraw one it no longer has."""
        if self._ask is not None and (pending is None or pending.get("id") != self._ask[0]):
            self._ask[1].answer.cancel()
            self._ask = None
        if pending is None or self._ask is not None:
            return
        kind = pending.get("kind")
        details = pending.get("details") or {}
        ui_kind = "shell" if details.get("kind") == "shell" else str(kind)
        title = {"approval": "the session asks for approval", "shell": "the session wants to run a command"}.get(
            ui_kind, "the session asks you")
        ask = Ask(ui_kind, title, str(pending.get("prompt") or ""), tuple(details.get("options") or ()))  # type: ignore[arg-type]
        iid, sid = str(pending["id"]), self.sid
        self._ask = (iid, ask)

        def answered(fut: Any) -> None:
            if not fut.cancelled() and fut.exception() is None:
                self._command("answer", sid, iid, fut.result())

        ask.answer.add_done_callback(answered)
        self.emit(ask)
