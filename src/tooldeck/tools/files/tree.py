"""get_file_tree: an ASCII tree of the workspace, sized for a model.

``mode``: ``full`` (every admitted file), ``folders`` (directories only),
``selected`` (only selected files, with their folders), ``auto`` (the deepest
level whose rendering fits ~10k tokens; folders cut off show how many files
they hold). ``+`` marks files that have a codemap, ``*`` selected files.
Ignored files (gitignore, .tooldeckignore, the deny list) are left out.

One walk builds a light tree (directories as nodes, files as names); ``auto``
then renders only depths whose line count could fit the budget, deepest
first. Everything is iterative: a very deep tree cannot hit the recursion
limit. A long walk reports progress on the ``activity`` channel.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field

from tooldeck.codemap.languages import has_codemap
from tooldeck.core import Invocation, ToolError, ToolInput, tool
from tooldeck.core.errors import ErrorCode
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.settings import setting
from tooldeck.workspace.roots import Root
from tooldeck.workspace.walk import walk

AUTO_TOKENS = 10_000
MAX_ENTRIES = 250_000
PROGRESS_EVERY = 5_000  # entries between two progress updates


@dataclass(slots=True)
class Dir:
    name: str
    dirs: list[Dir] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    total: int = 0  # files below, recursively (shown on collapsed folders)


def _sort_key(name: str) -> tuple[str, str]:
    return (name.lower(), name)


@dataclass(slots=True)
class Scan:
    top: Dir
    capped: bool
    per_depth: list[int]  # per_depth[d] = entries shown at depth d (d >= 1)


def scan(
    root: Root,
    rt: Runtime,
    start_rel: str,
    *,
    max_depth: int | None,
    only: set[str] | None,
    inv: Invocation | None = None,
) -> Scan:
    """Walk once into a :class:`Dir` tree (files kept only if in ``only``)."""
    top = Dir(start_rel or ".")
    dirs: dict[str, Dir] = {"": top}
    prefix = f"{start_rel}/" if start_rel else ""
    capped = False
    observed = inv is not None and inv.is_observed
    if observed:
        inv.emit_text("activity", f"walking {root.path}/{start_rel}".rstrip("/"), replace=True)  # type: ignore[union-attr]
    count = 0
    stop = inv.check_cancelled if inv is not None else None  # per folder: a cancelled call stops the walk
    for entry in walk(rt.workspace.rules(root), start_rel, max_depth=max_depth, stop=stop):
        count += 1
        if count > MAX_ENTRIES:
            capped = True
            break
        if observed and count % PROGRESS_EVERY == 0:
            inv.emit_text("activity", f"walked {count} entries", replace=True)  # type: ignore[union-attr]
        rel = entry.rel[len(prefix) :] if prefix else entry.rel
        parent_rel, _, name = rel.rpartition("/")
        parent = dirs.get(parent_rel)
        if parent is None:
            continue
        if entry.is_dir:
            node = Dir(name)
            parent.dirs.append(node)
            dirs[rel] = node
        elif only is None or entry.rel in only:
            parent.files.append(name)
    if observed:
        inv.emit_text("activity", f"walked {count} entries", replace=True)  # type: ignore[union-attr]
    per_depth = _finish(top, prune_empty=only is not None)
    return Scan(top, capped, per_depth)


def _finish(top: Dir, *, prune_empty: bool) -> list[int]:
    """Sort children, total the files below each folder (post-order, without
    recursion), optionally drop folders with no file below; count entries per depth."""
    order: list[tuple[Dir, int]] = []
    stack = [(top, 0)]
    while stack:
        node, depth = stack.pop()
        order.append((node, depth))
        stack.extend((d, depth + 1) for d in node.dirs)
    per_depth: list[int] = [0]
    for node, depth in reversed(order):  # children before parents
        if prune_empty:
            node.dirs = [d for d in node.dirs if d.total]
        node.dirs.sort(key=lambda d: _sort_key(d.name))
        node.files.sort(key=_sort_key)
        node.total = len(node.files) + sum(d.total for d in node.dirs)
        while len(per_depth) <= depth + 1:
            per_depth.append(0)
        per_depth[depth + 1] += len(node.dirs) + len(node.files)
    while len(per_depth) > 1 and per_depth[-1] == 0:
        per_depth.pop()
    return per_depth


Row = tuple[str, Dir | None]  # a folder (name, node) or a file (name, None)


def render(
    top: Dir, title: str, *, depth: int | None, folders_only: bool, rel_base: str, selected: set[str]
) -> list[str]:
    """The tree's lines; folders at ``depth`` are collapsed to ``name/ (N files)``."""
    lines = [title]

    def rows(node: Dir) -> list[Row]:
        out: list[Row] = [(d.name, d) for d in node.dirs]
        if not folders_only:
            out.extend((f, None) for f in node.files)
        return out

    # stack of (indent, level, rel of the folder, its rows, next row index)
    stack: list[tuple[str, int, str, list[Row], int]] = [("", 1, rel_base, rows(top), 0)]
    while stack:
        indent, level, rel, kids, i = stack.pop()
        if i >= len(kids):
            continue
        stack.append((indent, level, rel, kids, i + 1))
        name, sub = kids[i]
        last = i == len(kids) - 1
        branch = "└── " if last else "├── "
        kid_rel = f"{rel}/{name}" if rel else name
        if sub is not None:
            collapsed = depth is not None and level >= depth and (sub.dirs or sub.files)
            extra = f" ({sub.total} files)" if collapsed or (folders_only and sub.total) else ""
            lines.append(f"{indent}{branch}{name}/{extra}")
            if not collapsed:
                stack.append((indent + ("    " if last else "│   "), level + 1, kid_rel, rows(sub), 0))
        else:
            marks = (" *" if kid_rel in selected else "") + (" +" if has_codemap(name) else "")
            lines.append(f"{indent}{branch}{name}{marks}")
    return lines


class FileTreeInput(ToolInput):
    type: Literal["files", "roots"] = Field("files", description="files: a tree; roots: the workspace roots.")
    mode: Literal["auto", "full", "folders", "selected"] | None = Field(
        None,
        description="auto fits ~10k tokens; full; folders (dirs only); selected (selected files only). "
        "Default: setting tree.default_mode (auto).",
    )
    path: str | None = Field(None, description="Start folder (default: every root).")
    max_depth: int | None = Field(None, ge=0, description="Limit depth (the start folder = 0).")


def build(rt: Runtime) -> Tool:
    def selected_paths() -> set[str]:
        provider = rt.provider("selected_paths")
        return set(provider()) if provider else set()

    def fit_depth(found: Scan, title: str, start_rel: str, selected: set[str], budget: int) -> tuple[str, int]:
        """The deepest rendering that fits ``budget`` tokens, and its depth.
        Each line costs at least one token, so depths with more lines than the
        budget are never rendered."""
        height = len(found.per_depth) - 1
        shown = 1
        depth = 0
        for d in range(1, height + 1):
            shown += found.per_depth[d]
            if shown > budget:
                break
            depth = d
        depth = max(depth, 1)
        while True:
            lines = render(found.top, title, depth=depth, folders_only=False, rel_base=start_rel, selected=selected)
            text = "\n".join(lines)
            if depth <= 1 or rt.count_tokens(text) <= budget:
                return text, depth
            depth -= 1

    def one_tree(root: Root, start_rel: str, args: FileTreeInput, budget: int, inv: Invocation) -> str:
        selected = selected_paths()
        only = selected if args.mode == "selected" else None
        title = root.path if not start_rel else f"{root.path}/{start_rel}"
        if args.max_depth == 0:
            return title
        found = scan(root, rt, start_rel, max_depth=args.max_depth, only=only, inv=inv)
        height = len(found.per_depth) - 1
        if args.mode == "auto":
            text, depth = fit_depth(found, title, start_rel, selected, budget)
            if depth < height:
                text += (
                    f"\n[auto: showing {depth} level(s) to fit ~{budget} tokens; folders marked (N files) "
                    "are collapsed: call again with path=that folder]"
                )
        else:
            folders = args.mode == "folders"
            lines = render(
                found.top, title, depth=args.max_depth, folders_only=folders, rel_base=start_rel, selected=selected
            )
            text = "\n".join(lines)
        if found.capped:
            text += f"\n[stopped after {MAX_ENTRIES} entries: call again with a narrower path]"
        if args.mode == "selected" and not found.top.dirs and not found.top.files:
            text += "\n(no files selected)"
        return text

    def get_file_tree(args: FileTreeInput, inv: Invocation) -> str:
        ws = rt.workspace  # read per call: manage_workspaces can switch it
        if args.type == "roots":
            return ws.describe_roots()
        if args.mode is None:
            args = args.model_copy(update={"mode": str(setting(rt, "tree.default_mode"))})
        if args.path:
            rp = ws.resolve(args.path)
            if not os.path.isdir(rp.abs):
                raise ToolError(ErrorCode.NOT_A_DIRECTORY, f"{args.path!r} is a file, not a folder")
            return one_tree(rp.root, "" if rp.rel == "." else rp.rel, args, AUTO_TOKENS, inv)
        per_root = max(1000, AUTO_TOKENS // len(ws.roots))
        return "\n\n".join(one_tree(r, "", args, per_root, inv) for r in ws.roots)

    return tool(
        get_file_tree,
        description="ASCII tree of the workspace (ignored files left out). mode auto fits ~10k tokens; "
        "full; folders; selected. `+` marks files with a codemap (see get_code_structure), `*` selected "
        "files. type=roots lists the roots.",
        read_only=True,
        idempotent=True,
    )
