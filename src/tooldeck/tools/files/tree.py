"""get_file_tree: an ASCII tree of the workspace, sized for a model.

``mode``: ``full`` (every admitted file), ``folders`` (directories only),
``selected`` (only selected files, with their folders), ``auto`` (the deepest
level whose rendering fits ~10k tokens; folders cut off show how many files
they hold). ``+`` marks files that have a codemap, ``*`` selected files.
Ignored files (gitignore, .tooldeckignore, the deny list) are left out.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field

from tooldeck.codemap.languages import has_codemap
from tooldeck.core import ToolError, ToolInput, tool
from tooldeck.core.errors import ErrorCode
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.workspace.roots import Root
from tooldeck.workspace.walk import walk

AUTO_TOKENS = 10_000
MAX_ENTRIES = 250_000


@dataclass
class Node:
    name: str
    is_dir: bool
    children: dict[str, Node] = field(default_factory=dict)
    files: int = 0  # files below (recursive), for collapsed folders

    def child(self, name: str, is_dir: bool) -> Node:
        node = self.children.get(name)
        if node is None:
            node = self.children[name] = Node(name, is_dir)
        return node


class FileTreeInput(ToolInput):
    type: Literal["files", "roots"] = Field("files", description="files: a tree; roots: the workspace roots.")
    mode: Literal["auto", "full", "folders", "selected"] = Field(
        "auto", description="auto fits ~10k tokens; full; folders (dirs only); selected (selected files only)."
    )
    path: str | None = Field(None, description="Start folder (default: every root).")
    max_depth: int | None = Field(None, ge=0, description="Limit depth (the start folder = 0).")


def build_tree(
    root: Root, rt: Runtime, start_rel: str, *, max_depth: int | None, only: set[str] | None
) -> tuple[Node, bool]:
    """Walk once into a node tree; returns (tree, capped)."""
    top = Node(start_rel or ".", True)
    prefix = f"{start_rel}/" if start_rel else ""
    count = 0
    rules = rt.workspace.rules(root)
    for entry in walk(rules, start_rel, max_depth=max_depth):
        count += 1
        if count > MAX_ENTRIES:
            return top, True
        rel = entry.rel[len(prefix) :] if prefix else entry.rel
        if only is not None and not entry.is_dir and entry.rel not in only:
            continue
        parts = rel.split("/")
        node = top
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            if only is not None and entry.is_dir and last:
                break  # folders appear only when they hold a selected file
            node = node.child(part, entry.is_dir if last else True)
        if not entry.is_dir:
            top.files += 1
            n = top
            for part in parts[:-1]:
                n = n.children[part]
                n.files += 1
    return top, False


def render(top: Node, title: str, *, depth: int | None, folders_only: bool, rel_base: str, selected: set[str]) -> str:
    lines = [title]

    def visit(node: Node, indent: str, level: int, rel: str) -> None:
        kids = sorted(node.children.values(), key=lambda n: (not n.is_dir, n.name.lower(), n.name))
        if folders_only:
            kids = [k for k in kids if k.is_dir]
        for i, kid in enumerate(kids):
            last = i == len(kids) - 1
            branch = "└── " if last else "├── "
            kid_rel = f"{rel}/{kid.name}" if rel else kid.name
            if kid.is_dir:
                collapsed = depth is not None and level >= depth and kid.children
                extra = f" ({kid.files} files)" if collapsed or (folders_only and kid.files) else ""
                lines.append(f"{indent}{branch}{kid.name}/{extra}")
                if not collapsed:
                    visit(kid, indent + ("    " if last else "│   "), level + 1, kid_rel)
            else:
                marks = (" *" if kid_rel in selected else "") + (" +" if has_codemap(kid.name) else "")
                lines.append(f"{indent}{branch}{kid.name}{marks}")

    visit(top, "", 1, rel_base)
    return "\n".join(lines)


def tree_height(node: Node) -> int:
    return 1 + max((tree_height(c) for c in node.children.values() if c.is_dir), default=0)


def build(rt: Runtime) -> Tool:
    def selected_paths() -> set[str]:
        provider = rt.provider("selected_paths")
        return set(provider()) if provider else set()

    def one_tree(root: Root, start_rel: str, args: FileTreeInput, budget: int) -> str:
        selected = selected_paths()
        only = selected if args.mode == "selected" else None
        top, capped = build_tree(root, rt, start_rel, max_depth=args.max_depth, only=only)
        title = root.path if not start_rel else f"{root.path}/{start_rel}"
        folders = args.mode == "folders"
        if args.mode != "auto":
            text = render(top, title, depth=args.max_depth, folders_only=folders, rel_base=start_rel, selected=selected)
        else:
            height = tree_height(top)
            text = render(top, title, depth=None, folders_only=False, rel_base=start_rel, selected=selected)
            depth = height
            while depth > 1 and rt.count_tokens(text) > budget:
                depth -= 1
                text = render(top, title, depth=depth, folders_only=False, rel_base=start_rel, selected=selected)
            if depth < height:
                text += (
                    f"\n[auto: showing {depth} level(s) to fit ~{budget} tokens; folders marked (N files) "
                    "are collapsed: call again with path=that folder]"
                )
        if capped:
            text += f"\n[stopped after {MAX_ENTRIES} entries: call again with a narrower path]"
        if args.mode == "selected" and not top.children:
            text += "\n(no files selected)"
        return text

    def get_file_tree(args: FileTreeInput) -> str:
        ws = rt.workspace  # read per call: manage_workspaces can switch it
        if args.type == "roots":
            return ws.describe_roots()
        if args.path:
            rp = ws.resolve(args.path)
            if not os.path.isdir(rp.abs):
                raise ToolError(ErrorCode.NOT_A_DIRECTORY, f"{args.path!r} is a file, not a folder")
            return one_tree(rp.root, "" if rp.rel == "." else rp.rel, args, AUTO_TOKENS)
        per_root = max(1000, AUTO_TOKENS // len(ws.roots))
        return "\n\n".join(one_tree(r, "", args, per_root) for r in ws.roots)

    return tool(
        get_file_tree,
        description="ASCII tree of the workspace (ignored files left out). mode auto fits ~10k tokens; "
        "full; folders; selected. `+` marks files with a codemap (see get_code_structure), `*` selected "
        "files. type=roots lists the roots.",
        read_only=True,
        idempotent=True,
    )
