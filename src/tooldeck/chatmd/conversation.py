"""A loaded document -> the conversation items the model loop takes.

Why the transcript needs care on the way in: a file is a resumable session,
so whatever an interrupted run left must still make a valid request. A
``<tool_call>`` whose ``<tool_response>`` never got written (Ctrl-C while
the tool ran) gets a synthetic "interrupted" result, placed right after its
group of calls as both wire APIs require; the model then decides to retry.

Inline ``<doc src="..." local/>`` is replaced by the file's text (the runner
stores large tool payloads that way under ``.chatmd/``) and ``<img src="..."
local/>`` becomes an image input. Paths are relative to the file the element
is written in. They are read through :meth:`Grants.read
<tooldeck.chatmd.grants.Grants.read>`: inside a root through the workspace;
outside the roots only for a file with authority (a prompt the model could
have written must not put ``/root/.ssh/id_rsa`` into the conversation).
"""

from __future__ import annotations

import base64
import mimetypes
from pathlib import Path

from tooldeck.chatmd import asks
from tooldeck.chatmd.document import Document
from tooldeck.chatmd.grants import AuthorityError, Grants
from tooldeck.imaging import image_refusal
from tooldeck.llm.types import FunctionCall, FunctionResult, ImageInput, Item, Message, Reasoning
from tooldeck.markup.element import ChatmdError, Element

ROLES = ("system", "developer", "user", "assistant")
INTERRUPTED = "error [cancelled]: this call was interrupted before it returned; call it again if you still need it"
MAX_DOC_BYTES = 8 * 1024 * 1024
MAX_IMG_BYTES = 32 * 1024 * 1024


def _local_path(el: Element) -> Path:
    src = el.get("src")
    if not src:
        raise ChatmdError(el.pos, f'<{el.tag}> needs src="..."')
    if "://" in src:
        raise ChatmdError(el.pos, f"<{el.tag} src={src!r}>: only local files are supported (no network at run time)")
    return asks.local_src(el)


def _read(el: Element, grants: Grants, limit: int) -> tuple[Path, bytes]:
    path = _local_path(el)
    try:
        return path, grants.read(el, path, lambda real: asks.path(el, "src", real), limit)
    except AuthorityError:
        raise
    except ChatmdError as exc:
        raise ChatmdError(el.pos, f"<{el.tag} src={el.get('src')!r}>: {exc.message}") from exc


def doc_text(el: Element, grants: Grants) -> str:
    return _read(el, grants, MAX_DOC_BYTES)[1].decode("utf-8", "replace")


def img_input(el: Element, grants: Grants) -> ImageInput:
    path = _local_path(el)
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    if not mime.startswith("image/"):
        raise ChatmdError(el.pos, f"<img src={el.get('src')!r}>: {path.name} is not an image ({mime})")
    data = _read(el, grants, MAX_IMG_BYTES)[1]
    uri = f"data:{mime};base64,{base64.b64encode(data).decode()}"
    refused = image_refusal(uri)  # the one limit for every image a conversation sends
    if refused is not None:
        raise ChatmdError(el.pos, f"<img src={el.get('src')!r}>: {refused}")
    return ImageInput(uri, el.get("detail") or "auto")


def body(el: Element, grants: Grants) -> tuple[str, tuple[ImageInput, ...]]:
    """An element's text (docs inlined) and images, outer whitespace trimmed."""
    parts: list[str] = []
    images: list[ImageInput] = []
    for child in el.children:
        if isinstance(child, str):
            parts.append(child)
        elif child.tag == "doc":
            parts.append(doc_text(child, grants))
        elif child.tag == "img":
            images.append(img_input(child, grants))
        elif child.tag == "agent":
            raise ChatmdError(child.pos, "inline <agent> is not supported; declare <tool name=... agent=...> instead")
        else:
            parts.append(child.text())
    return "".join(parts).strip(), tuple(images)


def _call_of(el: Element, grants: Grants) -> FunctionCall:
    name = el.get("function_name") or el.get("name")
    call_id = el.get("tool_call_id") or el.get("id")
    if not name or not call_id:
        raise ChatmdError(el.pos, '<tool_call> needs function_name="..." and tool_call_id="..."')
    return FunctionCall(call_id, name, body(el, grants)[0])


def items_of(doc: Document) -> list[Item]:
    """The conversation of ``doc`` in order (declarations and config skipped)."""
    items: list[Item] = []
    names: dict[str, str] = {}
    grants = doc.grants
    for el in doc.elements:
        if el.tag in ROLES or el.tag == "msg":
            role = el.get("role") if el.tag == "msg" else el.tag
            if role not in ROLES:
                raise ChatmdError(el.pos, f"<msg> needs role= one of {', '.join(ROLES)}")
            text, images = body(el, grants)
            items.append(Message(role, text, images))  # type: ignore[arg-type]
        elif el.tag == "tool_call":
            call = _call_of(el, grants)
            names[call.call_id] = call.name
            items.append(call)
        elif el.tag == "tool_response":
            cid = el.get("tool_call_id") or el.get("id")
            if not cid:
                raise ChatmdError(el.pos, '<tool_response> needs tool_call_id="..."')
            if cid not in names:
                raise ChatmdError(el.pos, f"<tool_response> answers {cid!r}, which no earlier <tool_call> made")
            text, images = body(el, grants)  # a tool's image results are <img> elements in its response
            items.append(FunctionResult(cid, names[cid], text, el.has("error"), images))
        elif el.tag in ("doc", "img", "summary", "agent"):
            where = "<reasoning>" if el.tag == "summary" else "a message such as <user>"
            raise ChatmdError(el.pos, f"<{el.tag}> belongs inside {where}, not at top level")
        elif el.tag == "reasoning":
            summaries = el.elements("summary")
            text = "\n\n".join(body(s, grants)[0] for s in summaries) if summaries else body(el, grants)[0]
            items.append(Reasoning(text, el.get("id")))
    return close_dangling(items)


def close_dangling(items: list[Item]) -> list[Item]:
    """Give every call without a result an "interrupted" one, after its group."""
    out: list[Item] = []
    pending: dict[str, FunctionCall] = {}

    def flush() -> None:
        for call in pending.values():
            out.append(FunctionResult(call.call_id, call.name, INTERRUPTED, True))
        pending.clear()

    for item in items:
        if isinstance(item, FunctionCall):
            pending[item.call_id] = item
        elif isinstance(item, FunctionResult):
            pending.pop(item.call_id, None)
        else:
            flush()
        out.append(item)
    flush()
    return out
