"""agent_run (seed 004): start, poll, wait, cancel, steer and respond to agent runs.

Runs execute in the background (see :mod:`tooldeck.agents.manager`); this
tool only controls them and reports control snapshots. While it waits it
emits progress (the MCP host turns it into ``notifications/progress``).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from tooldeck.agents.snapshot import render
from tooldeck.core import Invocation, ToolInput, tool
from tooldeck.core.errors import ErrorCode, ToolError, invalid_arguments
from tooldeck.core.output import Output
from tooldeck.core.tool import Tool
from tooldeck.llm.types import FunctionCall, FunctionResult, Item, Message, Reasoning
from tooldeck.runtime import Runtime

if TYPE_CHECKING:
    from tooldeck.agents.manager import SessionManager

DEFAULT_WAIT = 300.0
MAX_WAIT = 3600.0


class HistoryItem(ToolInput):
    kind: Literal["message", "reasoning", "call", "result"] = "message"
    role: Literal["system", "developer", "user", "assistant"] | None = Field(None)
    name: str | None = Field(None)
    call_id: str | None = Field(None)
    text: str = Field("", description="Message text, call arguments or result.")
    is_error: bool = Field(False)

    def item(self) -> Item:
        if self.kind == "message":
            return Message(self.role or "user", self.text)
        if self.kind == "reasoning":
            return Reasoning(self.text)
        if not self.call_id or not self.name:
            raise invalid_arguments(f"a {self.kind} entry of history needs name and call_id", field="history")
        if self.kind == "call":
            return FunctionCall(self.call_id, self.name, self.text)
        return FunctionResult(self.call_id, self.name, self.text, self.is_error)


class AgentRunInput(ToolInput):
    op: Literal["start", "poll", "wait", "cancel", "steer", "respond"] = Field(
        description="start a session; poll; wait until it needs input or ends; cancel; steer (continue it); "
        "respond (to its pending interaction)."
    )
    message: str | None = Field(None, description="start/steer: the instruction.")
    session_id: str | None = Field(None, description="The session's UUID.")
    session_ids: list[str] | None = Field(None, description="wait/poll: several.")
    session_name: str | None = Field(None, description="start: its name.")
    model_id: str | None = Field(
        None, description="start: explore, engineer, pair, design or a list_models id."
    )
    workflow_id: str | None = Field(None, description="start: agent_manage list_workflows id.")
    workflow_name: str | None = Field(None)
    detach: bool = Field(False, description="start: return at once.")
    timeout: float | None = Field(
        None,
        ge=0,
        description="wait: seconds (default 300; 0 = check). start/steer: the run's time limit.",
    )
    wait: bool = Field(False, description="steer: block until it ends or needs input.")
    timeout_seconds: float | None = Field(None, ge=0, description="steer: seconds to wait.")
    interaction_id: str | None = Field(None, description="respond: its id.")
    response: str | None = Field(
        None,
        description="respond: accept|accept_for_session|accept_with_amendment|decline|cancel, or the answer.",
    )
    answers: dict[str, Any] | None = Field(None)
    amendment: str | None = Field(None)
    reason: str | None = Field(None)
    skip: bool = Field(False)
    approval: Literal["auto", "ask"] = Field(
        "auto", description="start: ask = approve each destructive call."
    )
    history: list[HistoryItem] | None = Field(
        None, description="start: the conversation so far."
    )
    workspace: str | None = Field(
        None, description="start: a workspace name or id (default: current)."
    )
    tools: list[str] | None = Field(None, description="start: only these tools.")
    changed_since: int | None = Field(
        None, description="wait: return once the run's version differs."
    )


def _check(args: AgentRunInput) -> None:
    op = args.op
    if args.session_id and args.session_ids:
        raise invalid_arguments("session_id and session_ids are mutually exclusive", fields=["session_ids"])
    if args.session_ids is not None and op not in ("wait", "poll"):
        raise invalid_arguments("session_ids is only for op=wait and op=poll", field="session_ids")
    if op == "start":
        if args.session_id:
            raise invalid_arguments("op=start always creates a new session; use op=steer to continue "
                                    "session_id", field="session_id")  # fmt: skip
        if not (args.message or "").strip():
            raise invalid_arguments("op=start needs message", field="message")
    elif op in ("poll", "wait"):
        if not args.session_id and not args.session_ids:
            raise invalid_arguments(f"op={op} needs session_id or session_ids", field="session_id")
    elif not args.session_id:
        raise invalid_arguments(f"op={op} needs session_id", field="session_id")
    if op == "steer" and not (args.message or "").strip():
        raise invalid_arguments("op=steer needs message", field="message")
    if op != "start" and (args.history is not None or args.workspace or args.tools is not None):
        raise invalid_arguments("history, workspace and tools are only for op=start", field="history")
    if args.changed_since is not None and (op != "wait" or args.session_ids is not None):
        raise invalid_arguments("changed_since is for op=wait on one session_id", field="changed_since")
    if op == "respond" and not args.interaction_id:
        raise invalid_arguments("op=respond needs interaction_id (from the snapshot's interaction)",
                                field="interaction_id")  # fmt: skip


def _out(snap: dict[str, Any], **extra: Any) -> Output:
    data = {**snap, **extra}
    return Output.text(render(snap), structured=data)


async def _wait_one(mgr: SessionManager, sids: list[str], timeout: float, inv: Invocation) -> str | None:
    def tick(elapsed: float) -> None:
        inv.check_cancelled()  # each second: a wait whose call was cancelled (or lost its connection) ends
        states = ", ".join(f"{s[:8]} {mgr.snapshot(s)['status_text'][:60]}" for s in sids[:4])
        inv.emit_text("activity", f"waiting {elapsed:.0f}s: {states}\n")

    return await mgr.wait(sids, timeout, tick)


def build(rt: Runtime) -> Tool:
    async def agent_run(args: AgentRunInput, inv: Invocation) -> Output:
        _check(args)
        # lazy: the session manager (model loop, store tables) loads on the first call
        from tooldeck.agents.manager import session_manager

        mgr = session_manager(rt)
        wait_for = min(args.timeout if args.timeout is not None else DEFAULT_WAIT, MAX_WAIT)
        if args.op == "start":
            history = [h.item() for h in args.history or ()]
            sid = await asyncio.to_thread(
                mgr.start, args.message or "", timeout=args.timeout or None, name=args.session_name,
                model_ref=args.model_id, workflow=args.workflow_id or args.workflow_name, policy=args.approval,
                history=history, workspace=args.workspace, tools=args.tools,
            )  # fmt: skip
            if not args.detach:
                # with a run time limit, wait past it: the run itself then ends with status timeout
                await _wait_one(mgr, [sid], min(args.timeout + 10 if args.timeout else DEFAULT_WAIT, MAX_WAIT), inv)
            return _out(mgr.snapshot(sid))
        if args.op == "poll":
            if args.session_ids is not None:
                snaps = [mgr.snapshot(s) for s in args.session_ids]
                text = "\n\n".join(render(s) for s in snaps)
                meta = {"count": len(snaps), "statuses": {s["session_id"]: s["status"] for s in snaps}}
                return Output.text(text, structured={"mode": "collection", "poll": meta, "snapshots": snaps})
            return _out(mgr.snapshot(args.session_id or ""))
        if args.op == "wait":
            sids = args.session_ids if args.session_ids is not None else [args.session_id or ""]
            if not sids:
                raise invalid_arguments("session_ids is empty", field="session_ids")
            if args.changed_since is not None:
                await mgr.wait_change(sids[0], args.changed_since, wait_for)
                return _out(mgr.snapshot(sids[0]))
            winner = await _wait_one(mgr, sids, wait_for, inv)
            if args.session_ids is None:
                return _out(mgr.snapshot(sids[0]))
            top = mgr.snapshot(winner or sids[0])
            meta = {"mode": "first", "result": "ready" if winner else "timeout", "winner_session_id": winner,
                    "pending_session_ids": [s for s in sids if mgr.snapshot(s)["status"] == "running"]}  # fmt: skip
            return _out(top, wait=meta)
        return await _control(mgr, args, inv)

    return tool(
        agent_run,
        description="agent_run: start and control background coding-agent runs (sub-agents) and their sessions: "
        "start (message; returns session_id), poll, wait, steer, cancel, respond (approval/question). "
        "Status: running, waiting_for_input, completed, failed, cancelled, expired.",
        open_world=True,
    )


async def _control(mgr: SessionManager, args: AgentRunInput, inv: Invocation) -> Output:
    sid = args.session_id or ""
    if args.op == "cancel":
        snap = mgr.snapshot(sid)
        if snap["status"] not in ("running", "waiting_for_input"):
            raise ToolError(ErrorCode.CONFLICT, f"cancel only applies to a running or waiting_for_input run; this "
                            f"session is {snap['status']}")  # fmt: skip
        mgr.request_cancel(sid)
        await mgr.wait([sid], 30.0)
        return _out(mgr.snapshot(sid))
    if args.op == "steer":
        how = await asyncio.to_thread(mgr.steer, sid, args.message or "", timeout=args.timeout or None)
        if args.wait or args.timeout_seconds is not None:
            await asyncio.sleep(0)  # let an injected message reach the run before checking
            await _wait_one(mgr, [sid], min(args.timeout_seconds or DEFAULT_WAIT, MAX_WAIT), inv)
        return _out(mgr.snapshot(sid), steer=how)
    answer = {"response": args.response, "answers": args.answers, "amendment": args.amendment,
              "reason": args.reason, "skip": args.skip}  # fmt: skip
    mgr.respond(sid, args.interaction_id or "", answer)
    for _ in range(50):  # the run picks the answer up on its loop: report the state after it did
        snap = mgr.snapshot(sid)
        if snap.get("interaction_id") != args.interaction_id:
            break
        await asyncio.sleep(0.01)
    return _out(mgr.snapshot(sid), responded=args.interaction_id)
