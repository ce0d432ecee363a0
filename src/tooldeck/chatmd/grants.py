"""Which ChatMD file may ask for what (SPEC §3, authority), decided on the bytes read.

A declaration that needs authority — an MCP server, a shell runtime beyond
the built-in ones, a ``<read>`` root, ``<doc>``, ``<img>``, ``<import>``,
``agent=`` or script path outside the roots — is an :class:`Ask`. Each file
of a load gets a :class:`Verdict` from the exact bytes that were parsed:

* the file the person named (``tooldeck run FILE``) has authority, bounded
  by the transcript record (:mod:`tooldeck.chatmd.record`) once tooldeck
  has run it;
* a file the person approved by content (``tooldeck trust allow``) has it;
* every other file — an import, an ``agent=`` prompt, a prompt of the
  prompts folder — has none, wherever it lies. Location is not evidence of
  authorship: another tooldeck process, a ``<read>`` root of an earlier run,
  a mounted MCP server or a wider shell runtime may have let a model write
  a file outside this process's roots, and the roots change while a server
  runs. A file's authority is never lent by the file that imports it.

An Ask from a file without authority is refused with an
:class:`AuthorityError` carrying a :class:`~tooldeck.authority.Notice` (file,
line, what it asked, ``tooldeck trust allow PATH``) before anything runs or
is read. Reads go through :meth:`Grants.read`: inside a root through the
workspace (no link followed below the root), outside only for a file with
authority.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tooldeck.authority import Notice, has_authority, report
from tooldeck.core.errors import ToolError
from tooldeck.markup.element import ChatmdError, Element
from tooldeck.workspace.content import read_bytes
from tooldeck.workspace.person_files import read_named
from tooldeck.workspace.roots import Root, Workspace, make_root

MAX_READ_BYTES = 16 * 1024 * 1024
WorkspaceSource = Callable[[], Workspace | None]


@dataclass(frozen=True, slots=True)
class Ask:
    """One declaration that needs authority: the element, a position-free key, what it asks."""

    el: Element
    key: str
    what: str


@dataclass(frozen=True, slots=True)
class Verdict:
    full: bool  # approved by content, or named by the person and not yet run
    honoured: frozenset[str] = frozenset()  # keys honoured without `full` (the transcript record)
    recorded: bool = False  # bounded by a transcript record


@dataclass(frozen=True, slots=True)
class RecordNotice(Notice):
    """A declaration missing from the transcript record of a file the person named."""

    def text(self) -> str:
        return (
            f"{self.where}: {self.what} needs authority, and it was not in this file when tooldeck last ran it "
            f"(the model can edit a transcript during a run), so it is refused. If you added it, run "
            f"`{self.fix}` (the approval holds for the file's current content only)."
        )


class AuthorityError(ChatmdError):
    """An Ask refused for want of authority; ``notice`` names file, line, what and the fix."""

    def __init__(self, notice: Notice) -> None:
        super().__init__(None, notice.text())
        self.notice = notice


def canonical(el: Element) -> str:
    """An element as a position-free string (tag, attributes, nested elements, text)."""

    def walk(e: Element) -> list[object]:
        kids = [walk(c) if isinstance(c, Element) else c.strip() for c in e.children]
        return [e.tag, sorted((k, v) for k, v in e.attrs.items()), [k for k in kids if k != ""]]

    return json.dumps(walk(el), ensure_ascii=False, separators=(",", ":"))


@dataclass
class Grants:
    """The authority context of one load: a ``tooldeck run``, or one agent call."""

    workspace: WorkspaceSource | None = None  # the roots reads are confined to (see roots())
    state_dir: str | os.PathLike[str] | None = None
    named: Path | None = None  # the file the person named (absolute, links not followed)
    record: frozenset[str] | None = None  # the named file's transcript record (None: no record)
    verdicts: dict[Path | None, Verdict] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)  # keys honoured in the named file (to record)

    # verdicts ------------------------------------------------------------------
    def judge(self, path: Path | None, content: bytes) -> Verdict:
        """Decide (once per load) the verdict of ``path`` from the bytes that were parsed."""
        if path is None or path == self.named:
            approved = path is not None and self._approved(path, content)
            unbounded = approved or self.record is None  # approved, or never run: the person's as named
            verdict = Verdict(True) if unbounded else Verdict(False, self.record or frozenset(), recorded=True)
        else:
            verdict = Verdict(self._approved(path, content))
        self.verdicts[path] = verdict
        return verdict

    def _approved(self, path: Path, content: bytes) -> bool:
        """Approved by content, and not reached through a link (a link the model
        planted would give an approved file another folder for its relative paths)."""
        real = os.path.realpath(path)
        if real != os.path.join(os.path.realpath(path.parent), path.name):
            return False
        return has_authority(real, content, state_dir=self.state_dir)

    def verdict(self, path: Path | None) -> Verdict:
        return self.verdicts.get(path, Verdict(False))

    def allowed(self, ask: Ask) -> bool:
        v = self.verdict(ask.el.pos.file)
        return v.full or ask.key in v.honoured

    def require(self, ask: Ask) -> None:
        """Pass when the asking file has authority for ``ask``; else report and raise AuthorityError."""
        file = ask.el.pos.file
        v = self.verdict(file)
        if v.full or ask.key in v.honoured:
            if file is None or file == self.named:
                self.used.add(ask.key)
            return
        kind = RecordNotice if v.recorded else Notice
        notice = kind(str(file) if file is not None else "<string>", ask.what, ask.el.pos.line)
        report(notice)
        raise AuthorityError(notice)

    # roots and reads -------------------------------------------------------------
    def roots(self) -> Workspace | None:
        """The roots reads are confined to; unset (a library load before
        :func:`~tooldeck.chatmd.session.prepare` binds its runtime's): the current directory."""
        if self.workspace is not None:
            return self.workspace()
        try:
            return Workspace([make_root(os.getcwd(), "cwd")])
        except (FileNotFoundError, OSError):
            return None

    def root_of(self, real: str) -> Root | None:
        ws = self.roots()
        return ws.containing_root(real) if ws is not None else None

    def read(self, el: Element, target: Path, ask: Callable[[str], Ask], limit: int = MAX_READ_BYTES) -> bytes:
        """The bytes of ``target``, named by ``el``: through the workspace when it
        resolves inside a root; else only when ``el``'s file may ``ask(real)``."""
        real = os.path.realpath(target)
        root = self.root_of(real)
        if root is not None:
            try:
                got = read_bytes(real, str(target), limit, root=root.path)
            except ToolError as exc:
                raise ChatmdError(el.pos, f"cannot read {target}: {exc.message}") from exc
            if got.truncated:
                raise ChatmdError(el.pos, f"{target} is over {limit} bytes")
            return got.data
        self.require(ask(real))
        return read_outside(el, Path(real), limit)

    def inside(self, target: Path) -> str | None:
        """``target``'s real path when it lies inside a root, else None."""
        real = os.path.realpath(target)
        return real if self.root_of(real) is not None else None


def read_outside(el: Element, real: Path, limit: int = MAX_READ_BYTES) -> bytes:
    """A file outside the roots, for a file with authority (a regular file; a FIFO
    never blocks; ``real`` is resolved already, so a link swapped in since is refused)."""
    try:
        return read_named(real, limit, follow_links=False)
    except FileNotFoundError as exc:
        raise ChatmdError(el.pos, f"cannot read {real} (no such file)") from exc
    except OSError as exc:  # not a regular file, a link, or over the limit
        raise ChatmdError(el.pos, f"cannot read {real} ({exc.strerror or exc})") from exc


def for_person(
    path: Path | None, workspace: WorkspaceSource | None = None, state_dir: str | os.PathLike[str] | None = None
) -> Grants:
    """Grants for a file the person named, never run by tooldeck (a library caller's load)."""
    return Grants(workspace=workspace, state_dir=state_dir, named=path)
