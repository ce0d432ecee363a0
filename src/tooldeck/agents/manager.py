"""The per-Runtime agent session manager: runs in the background, a queue, control.

Why a thread with its own event loop: a run must outlive the tool call that
started it (``detach``, ``poll`` later), and hosts differ (the MCP server's
loop, a CLI call's short-lived loop, the dashboard). Runs are tasks on the
manager's loop, at most ``max_runs`` at once (the rest wait in a queue, status
``running`` with status_text ``queued``). Waiters on any loop register an
event the manager sets on every change, so ``op=wait`` wakes at once and no
thread blocks while it waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from tooldeck.agents import workflows
from tooldeck.agents.audit import audit_log
from tooldeck.agents.interact import RunApprover, ask_user_tool, check_response, current_run, gate
from tooldeck.agents.items import item_fields, to_item
from tooldeck.agents.models import model_config
from tooldeck.agents.run import Run
from tooldeck.agents.snapshot import snapshot_of
from tooldeck.core.errors import ErrorCode, ToolError, invalid_arguments
from tooldeck.core.tool import Tool
from tooldeck.core.toolbox import Toolbox
from tooldeck.llm.errors import ModelError
from tooldeck.llm.loop import run_conversation
from tooldeck.llm.provider import Provider
from tooldeck.llm.settings import ModelConfig
from tooldeck.llm.types import Event, Item, Message, ReasoningDelta, TextDelta, ToolDone, ToolStart, TurnDone
from tooldeck.runtime import Runtime
from tooldeck.shell.approval import approver_scope
from tooldeck.state.agent_sessions import ACTIVE, AgentDB, SessionRow, owner_alive, owner_fields
from tooldeck.state.workspaces import workspace_service
from tooldeck.workspace.roots import Workspace

log = logging.getLogger("tooldeck.agents")
DEFAULT_MAX_RUNS = 8
MAX_TURNS = 40


def _source() -> str:
    run = current_run.get()
    return f"agent {run.session_id[:8]}" if run is not None else "chat"


def not_found(sid: str) -> ToolError:
    return ToolError(ErrorCode.NOT_FOUND, f"no agent session {sid!r}; list them with agent_manage op=list_sessions "
                     "(session ids are full UUIDs)")  # fmt: skip


class SessionManager:
    def __init__(self, rt: Runtime, *, max_runs: int | None = None) -> None:
        self.rt = rt
        self.db = AgentDB(rt.store)
        self.recovered = self.db.recover()  # sessions a dead server left running
        env = os.environ.get("TOOLDECK_AGENT_MAX_RUNS")
        self.max_runs = max_runs or (int(env) if env and env.isdigit() else DEFAULT_MAX_RUNS)
        self._runs: dict[str, Run] = {}
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._sem: asyncio.Semaphore | None = None
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
        self._listeners: list[Callable[[str], None]] = []
        self._toolbox: Toolbox | None = None
        self._boxes: dict[tuple[Any, ...], Toolbox] = {}  # per (workspace roots, tools) of a session
        self._bases: dict[tuple[Any, ...], list[Tool]] = {}  # ungated tools per workspace roots

    # infrastructure ---------------------------------------------------------------
    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=loop.run_forever, name="tooldeck-agents", daemon=True)
                self._thread.start()
                self._loop, self._sem = loop, asyncio.Semaphore(self.max_runs)
            return self._loop

    def toolbox(self) -> Toolbox:
        """The workspace's tools for agent runs: destructive ones gated by the
        session's approval policy, plus ``ask_user``."""
        if self._toolbox is None:
            catalog = self.rt.provider("catalog_tools")  # provided by the host's catalog (services don't import it)
            if catalog is None:
                raise ToolError(ErrorCode.UNSUPPORTED, "agent runs need the tool catalog; build the host's toolbox "
                                "with tooldeck.catalog.build_toolbox")  # fmt: skip
            tools = [gate(t) if t.annotations.destructive else t for t in catalog()]
            box = Toolbox([*tools, ask_user_tool()], budget_tokens=self.rt.budget_tokens,
                          count_tokens=self.rt.count_tokens)  # fmt: skip
            audit_log(self.rt).watch(box, _source)
            self._toolbox = box
        return self._toolbox

    def workspace_roots(self, ref: str) -> Workspace:
        """The roots of the server's workspace ``ref`` (not_found lists the known ones)."""
        return workspace_service(self.rt).roots_of(ref)

    def _base_tools(self, workspace: str | None) -> tuple[tuple[Any, ...], list[Tool]]:
        """The ungated tools of a session: the catalog, or on a named workspace the
        root domains over a runtime of that workspace's roots (``${workspace}`` is then
        the workspace's root, not the server's current one)."""
        ws = self.workspace_roots(workspace) if workspace is not None else None
        key = (ws.name, tuple((r.id, r.path, r.read_only) for r in ws.roots)) if ws is not None else (None,)
        hit = self._bases.get(key)
        if hit is not None:
            return key, hit
        make = self.rt.provider("root_tools" if ws is not None else "catalog_tools")
        if make is None:
            raise ToolError(ErrorCode.UNSUPPORTED, "agent runs need the tool catalog; build the host's toolbox "
                            "with tooldeck.catalog.build_toolbox")  # fmt: skip
        if ws is None:
            tools = list(make())
        else:
            child = Runtime(ws, state_dir=self.rt.state_dir, budget_tokens=self.rt.budget_tokens,
                            settings=self.rt.settings)  # fmt: skip
            tools = list(make(child))
        self._bases[key] = tools
        return key, tools

    def toolbox_for(self, row: SessionRow) -> Toolbox:
        """The tools of session ``row``: its workspace's, limited to the names it asked for."""
        if row.workspace is None and row.tools is None:
            return self.toolbox()
        key, base = self._base_tools(row.workspace)
        names = json.loads(row.tools) if row.tools else None
        cache = (*key, row.tools)
        box = self._boxes.get(cache)
        if box is None:
            tools = [t for t in base if names is None or t.name in names]
            tools = [gate(t) if t.annotations.destructive else t for t in tools]
            box = Toolbox([*tools, ask_user_tool()], budget_tokens=self.rt.budget_tokens,
                          count_tokens=self.rt.count_tokens)  # fmt: skip
            audit_log(self.rt).watch(box, _source)
            self._boxes[cache] = box
        return box

    def _check_tools(self, workspace: str | None, tools: list[str]) -> None:
        available = {t.name for t in self._base_tools(workspace)[1]} | {"ask_user"}
        unknown = [n for n in tools if n not in available]
        if unknown:
            where = f"workspace {workspace!r}" if workspace else "this server"
            raise invalid_arguments(f"no tool {unknown[0]!r} for agent sessions on {where}; available: "
                                    f"{', '.join(sorted(available))}", field="tools")  # fmt: skip

    def subscribe(self, fn: Callable[[str], None]) -> Callable[[], None]:
        """``fn(session_id)`` after every change (from the manager's thread)."""
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn) if fn in self._listeners else None

    def _notify(self, run: Run | str) -> None:
        sid = run if isinstance(run, str) else run.session_id
        for loop, ev in list(self._waiters):
            try:
                loop.call_soon_threadsafe(ev.set)
            except RuntimeError:  # that loop closed
                self._waiters.discard((loop, ev))
        for fn in list(self._listeners):
            try:
                fn(sid)
            except Exception:
                log.exception("session listener raised; ignored")

    # lookups ------------------------------------------------------------------------
    def row(self, sid: str) -> SessionRow:
        row = self.db.get(sid)
        if row is None:
            raise not_found(sid)
        return row

    def live(self, sid: str) -> Run | None:
        return self._runs.get(sid)

    def snapshot(self, sid: str) -> dict[str, Any]:
        return snapshot_of(self.row(sid), self._runs.get(sid))

    # creating and starting ------------------------------------------------------------
    def create(self, name: str | None, *, model_ref: str | None = None, workflow: str | None = None,
               policy: str = "auto", tab_id: str | None = None, mcp: bool = True, workspace: str | None = None,
               tools: list[str] | None = None) -> SessionRow:  # fmt: skip
        parent = current_run.get()
        if parent is not None and self.row(parent.session_id).parent_session_id:
            raise ToolError(ErrorCode.DEPTH_LIMIT, "a sub-agent session cannot spawn further agents; "
                            "do the task here instead of delegating")  # fmt: skip
        if workspace is not None:
            workspace = self.workspace_roots(workspace).name  # a name the server knows (not_found lists them)
        if tools is not None:
            self._check_tools(workspace, tools)
        mc = model_config(self.rt, model_ref, field="model_id")
        sid = str(uuid.uuid4())
        return self.db.create(
            sid, name or f"session {sid[:8]}", tab_id=tab_id, agent_id=model_ref or "default", model=mc.model,
            parent_session_id=parent.session_id if parent is not None else None, workflow=workflow,
            policy=policy, mcp_originated=int(mcp), **owner_fields(), workspace=workspace,
            tools=json.dumps(sorted(set(tools))) if tools is not None else None,
        )  # fmt: skip

    def start(self, message: str, *, timeout: float | None = None, history: list[Item] | None = None,
              **create: Any) -> str:  # fmt: skip
        """A new session and its first run. ``history`` (a conversation so far, such as
        a ChatMD file's) becomes the session's transcript before ``message``."""
        wf = workflows.find(self.rt, create.get("workflow"))
        create["workflow"] = wf.id if wf else None
        row = self.create(create.pop("name", None) or message.strip().splitlines()[0][:60], **create)
        for item in history or ():
            self.db.append(row.id, 0, item_fields(item))
        self.launch(row.id, message, timeout=timeout)
        return row.id

    def launch(self, sid: str, message: str, *, timeout: float | None = None) -> Run:
        """A new run of session ``sid``: its transcript so far plus ``message``."""
        row = self.row(sid)
        live = self._runs.get(sid)
        if live is not None and live.active:
            raise ToolError(ErrorCode.CONFLICT, "this session is already running; steer it instead")
        mc = model_config(self.rt, row.agent_id if row.agent_id != "default" else None, field="model_id")
        history = [to_item(i) for i in self.db.items(sid)]
        self.db.append(sid, row.runs + 1, item_fields(Message("user", message)))
        loop = self._ensure_loop()
        self.db.update(sid, status="running", status_text="queued", failure_reason=None, runs=row.runs + 1,
                       assistant_text="", **owner_fields())  # fmt: skip
        run = Run(sid, row.runs + 1, row.policy, loop, self._notify, item_count=row.item_count + 1)
        with self._lock:
            self._runs[sid] = run
        system = Message("system", workflows.system_prompt(self.rt, row.workflow))
        items = [system, *history, Message("user", message)]
        box = self.toolbox_for(row)

        async def begin() -> None:
            depth = 1 if row.parent_session_id else 0
            run.task = loop.create_task(self._execute(run, items, mc, timeout, depth, box))

        asyncio.run_coroutine_threadsafe(begin(), loop).result()
        self._notify(run)
        return run

    # the run ------------------------------------------------------------------------
    async def _execute(self, run: Run, items: list[Item], mc: ModelConfig, timeout: float | None, depth: int,
                       box: Toolbox) -> None:  # fmt: skip
        current_run.set(run)
        assert self._sem is not None
        try:
            async with self._sem:
                run.set(status_text="running")
                self.db.update(run.session_id, status_text="running")
                with approver_scope(RunApprover(run)):  # a shell `ask` waits for the session's respond
                    await self._converse(run, items, mc, timeout, depth, box)
        except TimeoutError:
            self._finish(run, "failed", "timeout", f"timed out after {timeout:g}s; the transcript so far is kept")
        except asyncio.CancelledError:
            self._finish(run, "cancelled", "cancelled", "cancelled")
        except ModelError as exc:
            self._finish(run, "failed", "agent_error", f"model error ({exc.kind}): {exc.message}")
        except Exception as exc:  # a broken run never takes the manager down
            log.exception("agent run %s failed", run.session_id)
            self._finish(run, "failed", "agent_error", f"internal error: {type(exc).__name__}: {exc}")

    async def _converse(self, run: Run, items: list[Item], mc: ModelConfig, timeout: float | None, depth: int,
                        box: Toolbox) -> None:  # fmt: skip
        provider = Provider(mc)
        try:
            coro = run_conversation(
                provider, items, box, on_event=self._on_event(run), on_item=self._on_item(run),
                inbox=run.drain, max_turns=MAX_TURNS, depth=depth,
            )  # fmt: skip
            result = await (asyncio.wait_for(coro, timeout) if timeout else coro)
        finally:
            await provider.aclose()
        note = "completed" if result.stopped == "answer" else f"stopped after {MAX_TURNS} model turns"
        self._finish(run, "completed", None, note, answer=result.text)

    def _on_item(self, run: Run) -> Callable[[Item], None]:
        def on_item(item: Item) -> None:
            self.db.append(run.session_id, run.number, item_fields(item))
            run.set(item_count=run.item_count + 1)

        return on_item

    def _on_event(self, run: Run) -> Callable[[Event], None]:
        def on_event(event: Event) -> None:
            if isinstance(event, TextDelta):
                run.set(assistant_text=run.assistant_text + event.text, live_text=run.live_text + event.text)
            elif isinstance(event, ReasoningDelta):
                run.set(live_reasoning=run.live_reasoning + event.text)
            elif isinstance(event, TurnDone):
                u = event.turn.usage
                run.usage.add(u)
                run.set(live_text="", live_reasoning="", usage_known=run.usage_known or bool(u.total_tokens))
            elif isinstance(event, ToolStart):
                run.set(status_text=f"calling {event.call.name}")
            elif isinstance(event, ToolDone):
                run.set(status_text="running")

        return on_event

    def _finish(self, run: Run, status: str, reason: str | None, text: str, *, answer: str | None = None) -> None:
        final = answer if answer is not None else run.assistant_text
        self.db.update(run.session_id, status=status, failure_reason=reason, status_text=text, assistant_text=final)
        run.set(status=status, failure_reason=reason, status_text=text, assistant_text=final, interaction=None)

    # control ------------------------------------------------------------------------
    def steer(self, sid: str, message: str, *, timeout: float | None = None) -> str:
        """Inject into the active run, or start a new run of the session."""
        self.row(sid)
        run = self._runs.get(sid)
        if run is not None and run.active:
            run.inject(message)
            return "injected"
        self.launch(sid, message, timeout=timeout)
        return "new_run"

    def request_cancel(self, sid: str) -> bool:
        run = self._runs.get(sid)
        if run is None or not run.active:
            return False
        run.cancel_soon()
        return True

    def respond(self, sid: str, interaction_id: str, answer: dict[str, Any]) -> None:
        run = self._runs.get(sid)
        pending = run.interaction if run is not None else None
        if run is None or pending is None:
            raise ToolError(ErrorCode.CONFLICT, "this session has no pending interaction; poll it to see its state")
        if pending.id != interaction_id:
            raise ToolError(ErrorCode.NOT_FOUND, f"interaction {interaction_id!r} is not the pending one "
                            f"({pending.id}, {pending.kind})", {"fields": ["interaction_id"]})  # fmt: skip
        check_response(pending.kind, answer.get("response"), answer.get("answers"), bool(answer.get("skip")))
        run.resolve(interaction_id, answer)

    async def wait(self, sids: list[str], timeout: float, on_tick: Callable[[float], None] | None = None) -> str | None:
        """The first of ``sids`` not plainly running (needs input, or ended), or None at the timeout."""
        for sid in sids:
            self.row(sid)
        loop = asyncio.get_running_loop()
        ev = asyncio.Event()
        key = (loop, ev)
        self._waiters.add(key)
        start = time.monotonic()
        try:
            while True:
                ev.clear()
                for sid in sids:
                    if self.snapshot(sid)["status"] != "running":
                        return sid
                left = timeout - (time.monotonic() - start)
                if left <= 0:
                    return None
                try:
                    await asyncio.wait_for(ev.wait(), min(left, 1.0))
                except TimeoutError:
                    pass
                if on_tick is not None:
                    on_tick(time.monotonic() - start)
        finally:
            self._waiters.discard(key)

    async def wait_change(self, sid: str, version: int, timeout: float) -> None:
        """Return when session ``sid``'s live run changes past ``version`` (a streamed
        delta, an item, an interaction, its end), it has no active run, or at the timeout."""
        self.row(sid)
        loop = asyncio.get_running_loop()
        ev = asyncio.Event()
        key = (loop, ev)
        self._waiters.add(key)
        deadline = time.monotonic() + timeout
        try:
            while True:
                ev.clear()
                run = self._runs.get(sid)
                if run is None or not run.active or run.version != version:
                    return
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(ev.wait(), min(left, 1.0))
        finally:
            self._waiters.discard(key)

    def close(self) -> None:
        """Cancel live runs and stop the loop (tests, a host shutting down)."""
        loop = self._loop
        if loop is None:
            return
        for run in list(self._runs.values()):
            if run.active:
                run.cancel_soon()

        async def drain() -> None:
            tasks = [r.task for r in self._runs.values() if r.task is not None and not r.task.done()]
            if tasks:
                await asyncio.wait(tasks, timeout=5)

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(drain(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(5)
        if not loop.is_running():
            loop.close()  # its selector and wake-up pipe
        self._loop = self._thread = None

    def delete(self, sid: str) -> str:
        row = self.db.get(sid)
        if row is None:
            return "not_found"
        if not row.mcp_originated:
            return "not_mcp_originated"
        run = self._runs.get(sid)
        # active here, or in another live process (a CLI call beside a server): not deleted under its owner
        owned = row.status in ACTIVE and owner_alive(row.owner_pid, row.owner_start)
        if (run is not None and run.active) or (run is None and owned):
            return "active"
        self.db.delete(sid)
        self._runs.pop(sid, None)
        self._notify(sid)
        return "deleted"


def session_manager(rt: Runtime) -> SessionManager:
    return rt.service("agents.sessions", SessionManager)
