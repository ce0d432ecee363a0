"""list_models, chat_send and chats (seed 004 "Chat & Model Tools")."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import Field

from tooldeck.agents.models import ENABLE_HINT, ROLES, default_model, preset_for, presets
from tooldeck.core import ToolInput, tool
from tooldeck.core.errors import ErrorCode, ToolError, invalid_arguments
from tooldeck.core.output import Output
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime


class ListModelsInput(ToolInput):
    pass


class ChatSendInput(ToolInput):
    message: str = Field(..., description="Your message.")
    new_chat: bool = Field(False, description="true: start a new chat; false: continue chat_id or the latest chat.")
    mode: Literal["chat", "plan", "edit", "review"] = Field(
        "chat",
        description="chat: converse. plan: a plan, no edits. edit: the reply's patch is applied. "
        "review: the reply reviews the git diff of the selection (or of everything).",
    )
    model: str | None = Field(None, description="A preset id or name from list_models (default: the default model).")
    chat_id: str | None = Field(None, description="The chat to continue.")
    chat_name: str | None = Field(None, description="A name for a new chat.")
    selected_paths: list[str] | None = Field(None, description="Use these files as context instead of the selection.")
    include_diffs: bool = Field(True, description="edit: include the applied changes in the response.")


class ChatsInput(ToolInput):
    action: Literal["list", "log"] = Field("list", description="list: recent chats. log: one chat's messages.")
    chat_id: str | None = Field(None, description="log: the chat (default: the latest).")
    scope: Literal["workspace", "tab"] = Field("workspace", description="list: this workspace's chats or one tab's.")
    tab_id: str | None = Field(None, description="scope=tab: the tab (default: this connection's tab).")
    limit: int | None = Field(None, ge=1, le=200, description="Max chats (list, default 10) or messages (log, 3).")
    diffs: bool = Field(False, description="log: include the diff summaries of edit replies.")


def _when(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M")


def build_list_models(rt: Runtime) -> Tool:
    def list_models(args: ListModelsInput) -> Output:
        ps = presets(rt)
        roles = {r: preset_for(rt, r) or "default" for r in ROLES}
        data: dict[str, Any] = {"models": [p.to_dict() for p in ps], "roles": roles, "default": default_model(rt)}
        if not ps:
            return Output.text(f"no models configured: {ENABLE_HINT}", structured=data)
        lines = [f"{p.id}: {p.name} ({p.model}) modes={','.join(p.modes)} - {p.description}" for p in ps]
        lines.append("roles: " + ", ".join(f"{r}->{t}" for r, t in roles.items()))
        return Output.text("\n".join(lines), structured=data)

    return tool(list_models, description="List model presets: id, name, description and supported modes "
                "(use the id with chat_send model= or agent_run model_id=; roles map explore/engineer/pair/design "
                "to presets).", read_only=True, idempotent=True)  # fmt: skip


def build_chat_send(rt: Runtime) -> Tool:
    async def chat_send(args: ChatSendInput) -> Output:
        if not args.message.strip():
            raise invalid_arguments("message is empty", field="message")
        if args.chat_id and args.new_chat:
            raise invalid_arguments("give chat_id to continue a chat, or new_chat=true, not both", field="new_chat")
        from tooldeck.agents import chat  # lazy: the chat service (the model loop) waits for the first call
        from tooldeck.agents.manager import session_manager  # lazy: the session manager waits for the first call

        box = session_manager(rt).toolbox()
        reply = await chat.send(rt, box, args.message, mode=args.mode, model=args.model, chat_id=args.chat_id,
                                new_chat=args.new_chat, chat_name=args.chat_name,
                                selected_paths=args.selected_paths)  # fmt: skip
        head = f"chat {reply.chat.id} ({reply.chat.name}), mode {reply.mode}"
        parts = [head, "", reply.text]
        data: dict[str, Any] = {"chat_id": reply.chat.id, "chat_name": reply.chat.name, "mode": reply.mode,
                                "reply": reply.text}  # fmt: skip
        if reply.edits is not None:
            edits = dict(reply.edits)
            if not args.include_diffs:
                edits.pop("summary", None)
            data["edits"] = edits
            parts += ["", "edits: " + ("applied" if edits["applied"] else f"NOT applied: {edits['error']}")]
            if edits.get("summary"):
                parts.append(edits["summary"])
        return Output.text("\n".join(parts), structured=data)

    return tool(chat_send, description="Ask the built-in chat model, with the selected files and the prompt as "
                "context (mode chat, plan, edit or review). Continues the latest chat unless new_chat or chat_id.",
                open_world=True)  # fmt: skip


def build_chats(rt: Runtime) -> Tool:
    def chats(args: ChatsInput) -> Output:
        from tooldeck.agents import chat  # lazy: the chat service (model loop) loads on the first call

        db = chat.chat_db(rt)
        ws, tab = chat.where(rt)
        if args.action == "list":
            tab_filter = (args.tab_id or tab) if args.scope == "tab" else None
            rows = db.list(workspace_id=None if args.tab_id else ws, tab_id=tab_filter, limit=args.limit or 10)
            data = [{"chat_id": r.id, "name": r.name, "tab_id": r.tab_id, "model": r.model,
                     "messages": r.message_count, "updated": _when(r.updated)} for r in rows]  # fmt: skip
            text = "\n".join(f"{d['chat_id']}  {d['updated']}  {d['messages']:>3} msgs  {d['name']}" for d in data)
            return Output.text(text or "(no chats)", structured={"chats": data})
        row = db.get(args.chat_id) if args.chat_id else db.latest(workspace_id=ws, tab_id=None)
        if row is None:
            raise ToolError(ErrorCode.NOT_FOUND, "no such chat; list them with chats action=list",
                            {"fields": ["chat_id"]})  # fmt: skip
        msgs = db.messages(row.id, last=args.limit or 3)
        out, lines = [], [f"chat {row.id} ({row.name}), {row.message_count} messages; the last {len(msgs)}:"]
        for m in msgs:
            entry: dict[str, Any] = {"seq": m.seq, "role": m.role, "mode": m.mode, "text": m.text}
            lines.append(f"\n[{m.seq}] {m.role} ({m.mode}):\n{m.text}")
            if args.diffs and m.diffs:
                entry["diffs"] = m.diffs
                lines.append("diff summary: " + _diff_line(m.diffs))
            out.append(entry)
        return Output.text("\n".join(lines), structured={"chat_id": row.id, "name": row.name, "messages": out})

    return tool(chats, description="List recent chats (scope workspace or tab) or show a chat's messages "
                "(action=log, the last `limit`, diffs=true for the edits each reply applied).",
                read_only=True)  # fmt: skip


def _diff_line(d: dict[str, Any]) -> str:
    if not d.get("applied"):
        return f"not applied ({str(d.get('error', ''))[:200]})"
    return ", ".join(f"{k}: {', '.join(d[k])}" for k in ("added", "modified", "deleted") if d.get(k)) or "no files"
