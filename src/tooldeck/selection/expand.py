"""Turning the paths a model names into the files a selection holds.

A file is taken as named (even if an ignore rule would hide it: naming it is
explicit). A folder expands recursively to the files the ignore rules admit
(``.gitignore``, ``.tooldeckignore``, the deny list), skipping binary-looking
files and, for codemap mode, files with no codemap language; what was skipped
is reported, never dropped silently. Symlinks that lead outside the roots are
skipped too: every selected path is canonical and inside a root.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from tooldeck.codemap.languages import has_codemap
from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.workspace.content import SNIFF_BYTES, looks_binary, read_bytes
from tooldeck.workspace.roots import Workspace
from tooldeck.workspace.walk import walk_files

MAX_FILES = 5_000


@dataclass(slots=True)
class Expansion:
    files: list[str] = field(default_factory=list)  # canonical absolute paths, in walk order
    skipped_binary: list[str] = field(default_factory=list)
    skipped_no_codemap: list[str] = field(default_factory=list)
    skipped_unreadable: list[str] = field(default_factory=list)  # FIFOs, sockets, vanished or swapped files
    skipped_loops: list[str] = field(default_factory=list)  # symbolic links that lead back to themselves
    folders: int = 0

    def notes(self, ws: Workspace) -> list[str]:
        out = []
        if self.skipped_binary:
            out.append(f"skipped {len(self.skipped_binary)} binary file(s): {_few(ws, self.skipped_binary)}")
        if self.skipped_loops:
            out.append(f"skipped {len(self.skipped_loops)} symbolic link loop(s): {_few(ws, self.skipped_loops)}")
        if self.skipped_unreadable:
            out.append(
                f"skipped {len(self.skipped_unreadable)} entry(ies) that are not readable regular files "
                f"(FIFOs, sockets, devices, vanished): {_few(ws, self.skipped_unreadable)}"
            )
        if self.skipped_no_codemap:
            out.append(
                f"skipped {len(self.skipped_no_codemap)} file(s) with no codemap language: "
                f"{_few(ws, self.skipped_no_codemap)}"
            )
        return out


def _few(ws: Workspace, paths: list[str]) -> str:
    shown = ", ".join(ws.display(p) for p in paths[:5])
    return shown + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")


def is_binary(abs_path: str, root: str) -> bool:
    """Whether the file's head looks binary. Read through the safe path from
    ``root`` (non-blocking: a FIFO is refused, never waited on)."""
    head = read_bytes(abs_path, abs_path, limit=SNIFF_BYTES, root=root).data
    if looks_binary(head):
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:  # a multi-byte character cut at the sniff limit is fine
        return exc.start < len(head) - 3
    return False


def expand(ws: Workspace, paths: list[str], *, codemap_only: bool = False, field_name: str = "paths") -> Expansion:
    """Resolve and expand ``paths`` (files or folders) under the path rules."""
    out = Expansion()
    seen: set[str] = set()

    def take(abs_path: str, explicit: bool, shown: str) -> None:
        if abs_path in seen:
            return
        if codemap_only and not has_codemap(abs_path):
            if explicit:
                raise ToolError(
                    ErrorCode.UNSUPPORTED,
                    f"{shown} has no codemap language; select it as full or slices instead",
                    {"field": field_name},
                )
            out.skipped_no_codemap.append(abs_path)
            return
        root = ws.containing_root(abs_path)
        try:
            if root is None:
                raise ToolError(ErrorCode.OUTSIDE_ROOTS, f"{shown} is outside the workspace roots")
            binary = is_binary(abs_path, root.path)
        except ToolError as exc:
            if explicit:
                raise ToolError(exc.code, exc.message.replace(repr(abs_path), shown)) from exc
            (out.skipped_loops if exc.details.get("loop") else out.skipped_unreadable).append(abs_path)
            return
        if binary:
            if explicit:
                raise ToolError(ErrorCode.BINARY_FILE, f"{shown} looks binary; only text files can be selected")
            out.skipped_binary.append(abs_path)
            return
        seen.add(abs_path)
        out.files.append(abs_path)
        if len(out.files) > MAX_FILES:
            raise ToolError(
                ErrorCode.TOO_LARGE,
                f"the paths expand to more than {MAX_FILES} files; select narrower folders",
                {"field": field_name},
            )

    for i, path in enumerate(paths):
        rp = ws.resolve(path, field_name=f"{field_name}.{i}")
        if os.path.isdir(rp.abs):
            out.folders += 1
            start = "" if rp.rel == "." else rp.rel
            for rel in walk_files(ws.rules(rp.root), start):
                lexical = os.path.join(rp.root.path, rel)
                real = os.path.realpath(lexical)
                if real != lexical and (ws.containing_root(real) is None or not os.path.isfile(real)):
                    continue  # a symlink leading outside the roots, or dangling
                take(real, False, rel)
        elif os.path.isfile(rp.abs):
            take(rp.abs, True, ws.display(rp.abs))
        else:
            raise ToolError(ErrorCode.NOT_A_FILE, f"{path!r} is neither a file nor a folder")
    return out
