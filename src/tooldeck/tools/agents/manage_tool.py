"""agent_manage (seed 004): agents, sessions, transcripts and workflows.

Sessions persist in the store (see :mod:`tooldeck.state.agent_sessions`);
``agent_run`` controls a session's current run, this tool its history.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal
from xml.sax.saxutils import escape, quoteattr

from pydantic import Field

from tooldeck.agents import workflows
from tooldeck.agents.interact import current_run
from tooldeck.agents.models import ROLES, model_config, preset_for, presets
from tooldeck.core import ToolInput, tool
from tooldeck.core.errors import invalid_arguments
from tooldeck.core.output import Output
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.state.agent_sessions import ItemRow, SessionRow, owner_fields

if TYPE_CHECKING:
    from tooldeck.agents.manager import SessionManager


class AgentManageInput(ToolInput):
    op: Literal[
        "list_agents", "list_sessions", "get_log", "create_session", "resume_session", "stop_session",
        "cleanup_sessions", "list_workflows",
    ] = Field(description="What to do (see the tool description).")  # fmt: skip
    session_id: str | None = Field(None, description="get_log, resume_session, stop_session: the full UUID.")
    session_ids: list[str] | None = Field(None, description="cleanup_sessions: the sessions to delete.")
    session_name: str | None = Field(None, description="create_session: its name.")
    model_id: str | None = Field(None, description="create_session/resume_session: a role or preset id.")
    limit: int | None = Field(None, ge=1, le=500, description="list_sessions (default 20) / get_log (default all).")
    offset: int = Field(0, ge=0, description="get_log: skip this many transcript entries.")
    state: str | None = Field(None, description="list_sessions: only this status (running, completed, failed...).")
    agent: str | None = Field(None, description="list_sessions: only sessions of this agent/model id.")


def _when(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def session_info(row: SessionRow, mgr: SessionManager) -> dict[str, Any]:
    snap = mgr.snapshot(row.id)
    return {"session_id": row.id, "name": row.name, "status": snap["status"], "agent": row.agent_id,
            "model": row.model, "workflow": row.workflow, "parent_session_id": row.parent_session_id,
            "is_mcp_originated": row.mcp_originated, "runs": row.runs, "transcript_item_count": row.item_count,
            "failure_reason": snap.get("failure_reason"), "created": _when(row.created),
            "updated": _when(row.updated)}  # fmt: skip


def transcript_xml(row: SessionRow, items: list[ItemRow], offset: int, total: int) -> str:
    out = [f"<transcript session={quoteattr(row.id)} name={quoteattr(row.name)} offset=\"{offset}\" "
           f"total=\"{total}\">"]  # fmt: skip
    for it in items:
        if it.kind == "message":
            out.append(f"<{it.role} seq=\"{it.seq}\">{escape(it.text)}</{it.role}>")
        elif it.kind == "reasoning":
            out.append(f"<reasoning seq=\"{it.seq}\">{escape(it.text)}</reasoning>")
        elif it.kind == "call":
            out.append(f"<tool_call seq=\"{it.seq}\" name={quoteattr(it.name or '')} id={quoteattr(it.call_id or '')}>"
                       f"{escape(it.text)}</tool_call>")  # fmt: skip
        else:
            err = ' error="true"' if it.is_error else ""
            out.append(f"<tool_result seq=\"{it.seq}\" name={quoteattr(it.name or '')} "
                       f"id={quoteattr(it.call_id or '')}{err}>{escape(it.text)}</tool_result>")  # fmt: skip
    out.append("</transcript>")
    return "\n".join(out)


def _table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(no sessions)"
    return "\n".join(f"{r['session_id']}  {r['status']:<17} {r['name'][:40]:<40} items={r['transcript_item_count']}"
                     for r in rows)  # fmt: skip


def build(rt: Runtime) -> Tool:
    def agent_manage(args: AgentManageInput) -> Output:
        # lazy: the session manager (model loop, store tables) loads on the first call
        from tooldeck.agents.manager import session_manager

        mgr = session_manager(rt)
        op = args.op
        if op in ("get_log", "resume_session", "stop_session") and not args.session_id:
            raise invalid_arguments(f"op={op} needs session_id", field="session_id")
        if op == "list_agents":
            return _agents(rt)
        if op == "list_workflows":
            wfs = [{"id": w.id, "name": w.name, "description": w.description} for w in workflows.all_workflows(rt)]
            text = "\n".join(f"{w['id']}: {w['name']} - {w['description']}" for w in wfs)
            return Output.text(text, structured={"workflows": wfs})
        if op == "list_sessions":
            parent = current_run.get()
            rows = mgr.db.list(limit=args.limit or 20, state=args.state,
                               parent=parent.session_id if parent is not None else None)  # fmt: skip
            if args.agent:
                rows = [r for r in rows if args.agent in (r.agent_id, r.model)]
            infos = [session_info(r, mgr) for r in rows]
            if args.state:  # a live state may differ from the stored one
                infos = [i for i in infos if i["status"] == args.state]
            return Output.text(_table(infos), structured={"sessions": infos})
        if op == "get_log":
            row = mgr.row(args.session_id or "")
            items = mgr.db.items(row.id, offset=args.offset, limit=args.limit)
            xml = transcript_xml(row, items, args.offset, row.item_count)
            entries = [{"seq": i.seq, "run": i.run, "kind": i.kind, "role": i.role, "name": i.name,
                        "call_id": i.call_id, "text": i.text, "is_error": i.is_error} for i in items]  # fmt: skip
            return Output.text(xml, structured={"session_id": row.id, "name": row.name, "transcript_xml": xml,
                                                "offset": args.offset, "total": row.item_count,
                                                "items": entries})  # fmt: skip
        if op == "create_session":
            row = mgr.create(args.session_name, model_ref=args.model_id)
            info = session_info(mgr.row(row.id), mgr)
            return Output.text(f"created session {row.id} ({row.name}); run it with agent_run op=steer",
                               structured=info)  # fmt: skip
        if op == "resume_session":
            return _resume(rt, mgr, args)
        if op == "stop_session":
            mgr.row(args.session_id or "")
            stopped = mgr.request_cancel(args.session_id or "")
            return Output.text(f"stop_requested: {str(stopped).lower()}",
                               structured={"session_id": args.session_id, "stop_requested": stopped})  # fmt: skip
        if not args.session_ids:
            raise invalid_arguments("op=cleanup_sessions needs session_ids (list them with op=list_sessions)",
                                    field="session_ids")  # fmt: skip
        results = {sid: mgr.delete(sid) for sid in args.session_ids}
        deleted = [s for s, r in results.items() if r == "deleted"]
        skipped = {s: r for s, r in results.items() if r != "deleted"}
        text = f"deleted {len(deleted)}" + (f"; skipped: {skipped}" if skipped else "")
        return Output.text(text, structured={"deleted": deleted, "skipped": skipped})

    return tool(
        agent_manage,
        description="Agent sessions and workflows: list agents and sessions, read a session's transcript log "
        "(get_log), create, resume, stop and clean up sessions, list workflows.",
    )


def _agents(rt: Runtime) -> Output:
    ps = presets(rt)
    roles = {r: (preset_for(rt, r) or "default") for r in ROLES}
    agent = {"id": "tooldeck", "name": "tooldeck agent (OpenAI-compatible model loop with the workspace's tools)",
             "models": [p.to_dict() for p in ps], "roles": roles}  # fmt: skip
    lines = [f"{agent['id']}: {agent['name']}"] + [f"  model {p.id}: {p.name} ({p.model})" for p in ps]
    lines += [f"  role {r} -> {t}" for r, t in roles.items()]
    return Output.text("\n".join(lines), structured={"agents": [agent]})


def _resume(rt: Runtime, mgr: SessionManager, args: AgentManageInput) -> Output:
    row = mgr.row(args.session_id or "")
    fields: dict[str, Any] = owner_fields()
    if args.model_id:
        fields.update(agent_id=args.model_id, model=model_config(rt, args.model_id, field="model_id").model)
    live = mgr.live(row.id)
    if live is None or not live.active:
        fields["status_text"] = "resumed: continue it with agent_run op=steer"
    mgr.db.update(row.id, **fields)
    info = session_info(mgr.row(row.id), mgr)
    return Output.text(f"resumed session {row.id} ({row.name}), {row.item_count} transcript items; "
                       "continue with agent_run op=steer", structured=info)  # fmt: skip
