"""The prompts directory: every ``*.chatmd`` is an MCP prompt (and an agent tool).

``tooldeck serve --prompts DIR`` (else ``$MCP_PROMPTS_DIR``, else
``./prompts`` when it exists) publishes each top-level ``*.chatmd`` file as a
prompt named after the file's stem, its arguments taken from its
``{{placeholders}}`` (see :mod:`prompt_reader`).

The directory is re-scanned cheaply (one ``scandir`` and a ``stat`` per file,
compared by mtime and size) on each prompts request and by a background
check every second, so added, edited and deleted files are picked up while
the server runs; a change fires the library's listeners (the server turns
that into ``notifications/prompts/list_changed``, and
``notifications/tools/list_changed`` when the prompt-backed agent tools
change). The directory is operator configuration, not a model-supplied path.

Authority (SPEC §3): the model can write a prompts folder that lies inside a
root (``./prompts`` by default), so a prompt file grants nothing unless the
person approved its bytes (``tooldeck trust allow``): it is still an MCP
prompt and an agent tool with the built-in tools, but what it declares
beyond that (an MCP server, a wider shell runtime, a path outside the roots)
is refused when the agent tool is called (:mod:`tooldeck.chatmd.grants`),
and named once on stderr when the file is first seen. A folder inside a root
is read through the workspace (a link out of the roots is refused); one the
person put outside every root is read directly.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooldeck.authority import report
from tooldeck.core.errors import ToolError
from tooldeck.core.tool import Tool
from tooldeck.mcp.prompt_reader import Argument, Message, arguments_of, description_of, fill, read_messages
from tooldeck.workspace.content import read_bytes
from tooldeck.workspace.person_files import read_named
from tooldeck.workspace.roots import Workspace

log = logging.getLogger("tooldeck.mcp.prompts")

POLL_SECONDS = 1.0
MAX_PROMPT_BYTES = 1 << 20


def resolve_prompts_dir(explicit: str | os.PathLike[str] | None, env: dict[str, str] | None = None) -> Path | None:
    """``--prompts`` wins, then ``$MCP_PROMPTS_DIR``, then ``./prompts`` if it exists."""
    environ = env if env is not None else os.environ
    chosen = explicit or environ.get("MCP_PROMPTS_DIR") or None
    if chosen:
        return Path(chosen)
    default = Path("prompts")
    return default.resolve() if default.is_dir() else None


class PromptArgumentsError(ValueError):
    """prompts/get with missing or unknown arguments."""


@dataclass(frozen=True, slots=True)
class PromptFile:
    name: str
    path: Path
    description: str
    arguments: list[Argument]
    messages: list[Message]

    def render(self, values: dict[str, str] | None) -> list[Message]:
        given = dict(values or {})
        known = {a.name for a in self.arguments}
        unknown = sorted(set(given) - known)
        missing = [a.name for a in self.arguments if a.required and a.name not in given]
        if unknown or missing:
            parts = []
            if missing:
                parts.append(f"missing required argument(s): {', '.join(missing)}")
            if unknown:
                parts.append(f"unknown argument(s): {', '.join(unknown)}")
            accepted = ", ".join(a.name for a in self.arguments) or "(none)"
            raise PromptArgumentsError(f"prompt {self.name!r}: {'; '.join(parts)}; it takes: {accepted}")
        return [Message(m.role, fill(m.text, given, self.arguments)) for m in self.messages]


def load_prompt(path: Path, data: bytes | None = None) -> PromptFile:
    data = (data if data is not None else read_named(path))[:MAX_PROMPT_BYTES]
    text = data.decode("utf-8", "replace")
    messages = read_messages(text, path)
    return PromptFile(path.stem, path, description_of(text, path.stem), arguments_of(messages), messages)


WorkspaceSource = Callable[[], Workspace]


Signature = tuple[int, int]
# ``notices(path, data, workspace, state_dir)``: what a prompt file declares and
# will be refused for want of authority (the ChatMD host's, handed in like the agents).
NoticesFn = Callable[[Path, bytes, Any, Any], Iterable[str]]


class PromptLibrary:
    """The prompts of one directory, kept current by :meth:`scan`."""

    def __init__(
        self,
        directory: Path,
        workspace: WorkspaceSource | None = None,
        state_dir: Any = None,
        notices: NoticesFn | None = None,
    ) -> None:
        self.directory = directory
        self.workspace = workspace  # the roots (None: no confinement, a library caller's folder)
        self.state_dir = state_dir
        self.notices = notices  # what a file asks for and will be refused (the ChatMD host's, handed in)
        # the person put the folder outside every root: read it directly (decided at start, before any call)
        self.outside = workspace is None or self._root_of(os.path.realpath(directory)) is None
        self.prompts: dict[str, PromptFile] = {}
        self.broken: dict[str, str] = {}  # stem -> why it could not be read
        self._seen: dict[str, Signature] = {}
        self._lock = threading.Lock()
        self._listeners: list[Callable[[], Any]] = []
        self.version = 0

    def on_change(self, fn: Callable[[], Any]) -> None:
        self._listeners.append(fn)

    def _signatures(self) -> dict[str, Signature]:
        out: dict[str, Signature] = {}
        try:
            entries = list(os.scandir(self.directory))
        except OSError:
            return out
        for entry in entries:
            if not entry.name.endswith(".chatmd") or entry.name.startswith("."):
                continue
            try:
                st = entry.stat()
            except OSError:
                continue
            if entry.is_file():
                out[entry.name] = (st.st_mtime_ns, st.st_size)
        return out

    def scan(self) -> bool:
        """Reload what changed on disk; True (and listeners fired) if anything did."""
        with self._lock:
            now = self._signatures()
            if now == self._seen:
                return False
            for fname, sig in now.items():
                if self._seen.get(fname) != sig:
                    self._load(self.directory / fname)
            for fname in set(self._seen) - set(now):
                stem = fname[: -len(".chatmd")]
                self.prompts.pop(stem, None)
                self.broken.pop(stem, None)
            self._seen = now
            self.version += 1
        for fn in list(self._listeners):
            try:
                fn()
            except Exception:
                log.exception("prompt change listener failed")
        return True

    def _root_of(self, real: str) -> Any:
        return self.workspace().containing_root(real) if self.workspace is not None else None

    def read(self, path: Path) -> bytes:
        """A prompt's bytes: through the workspace when it lies in a root; outside
        the roots only from a folder the person put there (a link out is refused)."""
        real = os.path.realpath(path)
        root = self._root_of(real)
        if root is not None:
            try:
                return read_bytes(real, str(path), MAX_PROMPT_BYTES, root=root.path).data
            except ToolError as exc:
                raise OSError(exc.message) from exc
        if not self.outside:
            raise OSError(f"{path} resolves to {real}, outside the workspace roots")
        # a regular file only (a FIFO never blocks the scan), and not a link swapped in since realpath
        return read_named(real, follow_links=False)[:MAX_PROMPT_BYTES]

    def _load(self, path: Path) -> None:
        try:
            data = self.read(path)
            prompt = load_prompt(path, data)
            self._report(path, data)
        except Exception as exc:  # one bad file never hides the others
            log.warning("prompt %s cannot be read: %s", path, exc)
            self.prompts.pop(path.stem, None)
            self.broken[path.stem] = str(exc)
            return
        self.broken.pop(path.stem, None)
        self.prompts[prompt.name] = prompt

    def _report(self, path: Path, data: bytes) -> None:
        """Name, once per process and on stderr (stdout may be the MCP channel),
        what the file declares and will be refused for want of authority."""
        if self.workspace is None or self.state_dir is None or self.notices is None:
            return
        for notice in self.notices(path, data, self.workspace, self.state_dir):
            report(notice)  # the host's sink (launch: stderr) says it, once

    def sorted(self) -> list[PromptFile]:
        with self._lock:
            return [self.prompts[k] for k in sorted(self.prompts)]

    async def watch(self, interval: float = POLL_SECONDS) -> None:
        """Re-scan every ``interval`` seconds until cancelled."""
        while True:
            await asyncio.sleep(interval)
            await self.rescan()

    async def rescan(self) -> None:
        """:meth:`scan` off the event loop; a failure is logged, never raised
        (the poll and the server's rescan after a writing call both use it)."""
        try:
            await asyncio.to_thread(self.scan)
        except Exception:
            log.exception("scanning the prompts directory failed")


# prompts as agent tools ------------------------------------------------------

# ``factory(path, rt, name=, description=, read_outside=)``: a prompt as an agent
# tool. The ChatMD host makes them (``chatmd.agents.agent_tool``); the entry
# that starts the server hands it in (``launch.py``), so mcp/ never imports chatmd/.
AgentFactory = Callable[..., Tool]


def tool_name(stem: str) -> str:
    """A prompt's stem as a tool name (``[A-Za-z0-9_-]{1,64}``)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", stem)[:64] or "prompt"


def agent_tools(library: PromptLibrary, rt: Any, factory: AgentFactory | None) -> list[Tool]:
    """One agent tool per prompt (``factory(path, rt, name=, description=)``)."""
    if factory is None:
        return []
    out: list[Tool] = []
    for prompt in library.sorted():
        try:
            out.append(factory(prompt.path, rt, name=tool_name(prompt.name), description=prompt.description))
        except Exception as exc:  # a prompt that cannot become a tool is still a prompt
            log.warning("prompt %s cannot be served as an agent tool: %s", prompt.path, exc)
    return out
