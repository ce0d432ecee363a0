"""The chat's one door into the ChatMD engine (:mod:`tooldeck.chatmd`).

Why a bridge: hosts never import each other (SPEC §1), yet ``tooldeck chat``
must run a conversation exactly as ``tooldeck run`` does: the same parser and
imports, the same declarations judged by the same authority rules, the same
``<config>``, the same transcript writer, so a file made in the chat continues
with ``tooldeck run`` and back. That engine lives in the ``chatmd`` host
package today; a later structure issue moves it down into a service. Until
then this module is the only one in :mod:`tooldeck.tui` that imports
``tooldeck.chatmd``, and it adds no behaviour of its own: it re-exports and
wires. When the engine moves, this file's imports change and nothing else.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tooldeck.catalog import canonical_name
from tooldeck.chatmd.conversation import close_dangling, items_of
from tooldeck.chatmd.document import Document
from tooldeck.chatmd.named import NamedFile
from tooldeck.chatmd.runner import launch_runtime
from tooldeck.chatmd.session import Session, config_of, prepare
from tooldeck.chatmd.transcript import Transcript
from tooldeck.llm.types import Item
from tooldeck.markup.element import ChatmdError
from tooldeck.runtime import Runtime
from tooldeck.workspace.roots import Workspace

__all__ = [
    "ChatmdError",
    "NamedFile",
    "Remote",
    "Session",
    "Transcript",
    "close_dangling",
    "create_conversation",
    "named_file",
    "new_file_text",
    "open_document",
    "read_items",
    "remote_plan",
    "runtime_for",
    "session_for",
]

NEW_FILE_TOOLS = ("read_file", "read_dir", "file_search")


def new_file_text(model: str | None) -> str:
    """The head of a conversation the chat starts: read-only built-ins over the
    launch roots (tools are opt-in, seed 000: edit the file to declare more)."""
    lines = ["<!-- a tooldeck chat: continue it with `tooldeck chat FILE` or `tooldeck run FILE` -->"]
    if model:
        lines.append(f'<config model="{_attr(model)}"/>')
    lines += [f'<tool name="{name}"/>' for name in NEW_FILE_TOOLS]
    return "\n".join(lines) + "\n"


def create_conversation(path: Path, model: str | None) -> None:
    """Write the head of a new conversation; never over an existing file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(new_file_text(model))


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def runtime_for(roots: list[str] | None, state_dir: str | os.PathLike[str] | None) -> Runtime:
    """The launch roots: the current directory as ``cwd`` (as ``tooldeck run``), or ``--root`` folders."""
    if not roots:
        return launch_runtime(state_dir)
    return Runtime(Workspace.from_dirs(roots), state_dir=state_dir)


def named_file(path: Path, rt: Runtime) -> NamedFile:
    """The conversation file the person named, judged against its transcript
    record at every load (a declaration the model added is refused)."""
    return NamedFile(path, rt)


def open_document(named: NamedFile, model: str | None) -> tuple[Document, bool]:
    """The file, or the head of a new one (not written until the first message)."""
    if named.path.exists():
        return named.load(), True
    return named.load(new_file_text(model)), False


def session_for(doc: Document, rt: Runtime, model: str | None) -> Session:
    """Declarations checked, tools built, model resolved: raises ChatmdError or ModelError."""
    return prepare(doc, rt, model=model)


def read_items(named: NamedFile) -> list[Item]:
    """The conversation as the file holds it now (dangling calls closed, as a
    run sees them), judged against the record: an element the model added that
    needs authority (a <doc> outside the roots) raises instead of being read."""
    return items_of(named.load())


@dataclass(frozen=True)
class Remote:
    """What a file asks of a connected session: the built-in tools it declares
    (offered from the server's catalog over the server's workspace) and its model."""

    tools: tuple[str, ...]
    model: str | None
    items: list[Item]
    show_tool_call: bool = False


CONNECTED_HINT = (
    "in connected mode the server's workspace gives the roots and the tools; declare built-ins by name "
    '(<tool name="read_file"/>) or run the file locally without --connect'
)


def remote_plan(doc: Document, model: str | None) -> Remote:
    """The file's declarations for a session the server runs. Only built-ins by
    name travel: a ``<read>`` root, a ``command=``/``agent=``/``mcp_server=``
    tool or a ``<shell_access>`` runtime is this machine's authority and is
    refused here (ChatmdError naming the line), never sent."""
    names: list[str] = []
    for el in doc.of("tool"):
        if any(el.has(k) for k in ("command", "agent", "mcp_server", "type")) or el.elements("read"):
            raise ChatmdError(el.pos, f"this <tool> cannot run on the server: {CONNECTED_HINT}")
        name = el.get("name")
        if not name:
            raise ChatmdError(el.pos, '<tool> needs name="..."')
        ns = el.get("namespace")
        if ns:
            raise ChatmdError(el.pos, f"namespace= is not supported in connected mode: {CONNECTED_HINT}")
        names.append(canonical_name(name))
    for el in doc.of("shell_access"):
        raise ChatmdError(el.pos, f"<shell_access> cannot run on the server: {CONNECTED_HINT}")
    overrides, show = config_of(doc)
    return Remote(tuple(dict.fromkeys(names)), model or overrides.get("model"), items_of(doc), show)
