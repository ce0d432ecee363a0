"""The built-in chat behind ``chat_send``: one model reply per message, with the
workspace's selection and prompt as context.

Modes (seed 004): ``chat`` converses, ``plan`` plans without edits, ``edit``
asks for a V4A patch and applies it through the ``apply_patch`` tool (all or
nothing; a refused patch changes nothing and the reply says why), ``review``
adds the git diff of the selected files (or of everything) to the context.
Why the context is rebuilt on every message: the selection changes between
messages; the transcript keeps only what was said.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tooldeck.agents.models import model_config
from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.core.toolbox import Toolbox
from tooldeck.llm.errors import ModelError
from tooldeck.llm.loop import run_conversation
from tooldeck.llm.provider import Provider
from tooldeck.llm.types import Item, Message
from tooldeck.selection.service import selection_service
from tooldeck.state.chats import ChatDB, ChatRow
from tooldeck.state.selections import SelectedFile, Selection
from tooldeck.state.workspaces import workspace_service

if TYPE_CHECKING:
    from tooldeck.runtime import Runtime

MODE_PROMPTS = {
    "chat": "You are a senior engineer answering questions about the user's code. Be concise and concrete; "
    "cite file paths.",
    "plan": "You are an architect. Produce a step-by-step implementation plan (files, functions, order, risks). "
    "Do not write patches.",
    "edit": "You change the user's code. Reply with a short explanation, then ONE patch in V4A format between "
    "'*** Begin Patch' and '*** End Patch' (*** Update File: path / *** Add File: path / *** Delete File: path; "
    "hunks start with @@ and use ' ', '-', '+' lines with 3 lines of context). Paths relative to the root.",
    "review": "You review the changes in the git diff below. List concrete problems (file:line, why, fix), "
    "most important first; say so if the change looks right.",
}
PATCH_RE = re.compile(r"\*\*\* Begin Patch\n.*?\n\*\*\* End Patch", re.S)


@dataclass
class ChatReply:
    chat: ChatRow
    mode: str
    text: str
    edits: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)


def chat_db(rt: Runtime) -> ChatDB:
    return rt.service("agents.chats", lambda r: ChatDB(r.store))


def where(rt: Runtime) -> tuple[str | None, str | None]:
    """(workspace id, tab id) of this process, or (None, None) if the store has none."""
    try:
        cur = workspace_service(rt).current()
    except Exception:  # a broken store: chats still work, unscoped
        return None, None
    return cur.workspace.id, cur.tab.id


def _selection_override(rt: Runtime, paths: list[str]) -> Selection:
    sel = Selection(auto_codemaps=False)
    for p in paths:
        rp = rt.workspace.resolve(p, must_exist=True)
        sel.files[rp.abs] = SelectedFile(rp.abs, "full")
    return sel


def context_text(rt: Runtime, selected_paths: list[str] | None) -> str:
    svc = selection_service(rt)
    sel = _selection_override(rt, selected_paths) if selected_paths else None
    pkg, _status = svc.package(sel)
    return pkg.text()


async def review_diff(box: Toolbox, scoped: bool) -> str:
    args = {"op": "diff", "detail": "patches", "scope": "selected" if scoped else "all"}
    res = await box.call("git", args)
    if res.is_error:
        return f"(no git diff available: {res.text})"
    return res.text


def _history(rt: Runtime, chat: ChatRow) -> list[Item]:
    out: list[Item] = []
    for m in chat_db(rt).messages(chat.id):
        out.append(Message("user" if m.role == "user" else "assistant", m.text))
    return out


def open_chat(rt: Runtime, *, chat_id: str | None, new_chat: bool, name: str | None, model: str) -> ChatRow:
    db = chat_db(rt)
    ws, tab = where(rt)
    if chat_id:
        row = db.get(chat_id)
        if row is None:
            raise ToolError(ErrorCode.NOT_FOUND, f"no chat {chat_id!r}; list them with chats action=list",
                            {"fields": ["chat_id"]})  # fmt: skip
        return row
    if not new_chat:
        row = db.latest(workspace_id=ws, tab_id=tab)
        if row is not None:
            return row
    cid = str(uuid.uuid4())
    db.create(cid, name or "chat", workspace_id=ws, tab_id=tab, model=model)
    row = db.get(cid)
    assert row is not None
    return row


async def send(rt: Runtime, box: Toolbox, message: str, *, mode: str, model: str | None, chat_id: str | None,
               new_chat: bool, chat_name: str | None, selected_paths: list[str] | None) -> ChatReply:  # fmt: skip
    mc = model_config(rt, model)
    chat = open_chat(rt, chat_id=chat_id, new_chat=new_chat, name=chat_name or message.strip()[:50], model=mc.model)
    context = context_text(rt, selected_paths)
    if mode == "review":
        context += "\n## Git diff\n\n" + await review_diff(box, bool(selected_paths) or _has_selection(rt))
    items: list[Item] = [Message("system", MODE_PROMPTS[mode]), Message("system", context), *_history(rt, chat),
                         Message("user", message)]  # fmt: skip
    provider = Provider(mc)
    try:
        result = await run_conversation(provider, items, Toolbox([]), max_turns=1)
    except ModelError as exc:
        raise ToolError(ErrorCode.MODEL_ERROR, f"chat model: {exc.message}") from exc
    finally:
        await provider.aclose()
    db = chat_db(rt)
    db.add(chat.id, "user", mode, message)
    reply = ChatReply(chat, mode, result.text)
    if mode == "edit":
        reply.edits = await apply_reply_patch(box, result.text)
    db.add(chat.id, "assistant", mode, result.text, reply.edits)
    reply.chat = db.get(chat.id) or chat
    return reply


def _has_selection(rt: Runtime) -> bool:
    return bool(selection_service(rt).selected_paths())


async def apply_reply_patch(box: Toolbox, text: str) -> dict[str, Any]:
    """Apply the reply's patch through ``apply_patch`` (atomic); report what changed or why nothing did."""
    m = PATCH_RE.search(text)
    if m is None:
        return {"applied": False, "error": "the reply contained no *** Begin Patch ... *** End Patch block"}
    res = await box.call("apply_patch", m.group(0))
    if res.is_error:
        return {"applied": False, "error": res.text}
    data = dict(res.output.structured or {}) if res.output is not None else {}
    return {"applied": True, "summary": res.text, **{k: data.get(k, []) for k in ("added", "modified", "deleted")}}
