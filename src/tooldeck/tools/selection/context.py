"""workspace_context (seed 004): one snapshot of the current tab.

``include`` picks sections: prompt, selection (the file list), code (the
codemaps), files (full and slices contents), tree (the selected files as a
tree), tokens (the breakdown per component with a total, and per file).
Token counts are those of the exported context package (cached by content
hash, so a repeated call only tokenizes what changed).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from tooldeck.core import Output, ToolInput, tool
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.selection.package import fenced
from tooldeck.selection.service import selection_service
from tooldeck.settings import setting
from tooldeck.state.workspaces import workspace_service
from tooldeck.tools.selection import views

Section = Literal["prompt", "selection", "code", "files", "tree", "tokens"]
DEFAULT_INCLUDE: list[Section] = ["prompt", "selection", "code", "tree", "tokens"]
STRUCTURED_FILES = 200


class WorkspaceContextInput(ToolInput):
    include: list[Section] = Field(
        default_factory=lambda: list(DEFAULT_INCLUDE),
        description="Sections: prompt, selection, code (codemaps), files (contents), tree, tokens. "
        "Default: all but files.",
    )

    @field_validator("include", mode="before")
    @classmethod
    def _one(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value


def build(rt: Runtime) -> Tool:
    def workspace_context(args: WorkspaceContextInput) -> Output:
        svc = selection_service(rt)
        cur = workspace_service(rt).current()
        sel = svc.snapshot()
        prompt = svc.prompt()
        want = set(args.include)
        roots = ", ".join(f"{r.id}={r.path}" for r in rt.workspace.roots)
        parts = [f"# Workspace {cur.workspace.name!r} · tab {cur.tab.name!r} · roots: {roots}"]
        pkg, status = svc.package(sel, prompt)
        bd = svc.breakdown_of(pkg, sel, status)
        if "prompt" in want:
            parts.append("## Prompt\n" + (prompt.rstrip("\n") if prompt.strip() else "(empty)"))
        if "selection" in want:
            parts.append("## Selection\n" + views.files(bd, cur, sel.auto_codemaps))
        if "tree" in want:
            parts.append("## File tree\n" + (fenced(svc.tree(sel), "text") if sel.files else "(no files selected)"))
        if want & {"files", "code"}:
            if "code" in want and not any(c.component == "codemaps" for c in pkg.chunks):
                pkg, _ = svc.package(sel, prompt, include_tree=False, include_codemaps=True)  # packaging left them out
            if "files" in want:
                parts.append("## Files\n\n" + (pkg.of("files", "slices") or "(no full or slices files)"))
            if "code" in want:
                parts.append("## Codemaps\n\n" + (pkg.of("codemaps") or "(no codemap files)"))
        encoding = str(setting(rt, "tokens.encoding"))
        if "tokens" in want:
            parts.append("## Tokens\n" + views.tokens(bd, encoding))
        structured = {
            "workspace": cur.workspace.name,
            "tab": cur.tab.name,
            "tokens": bd.components(),
            "encoding": encoding,
            "files": [
                {"path": f.shown, "mode": f.mode, "tokens": f.tokens, "auto": f.auto}
                for f in bd.files[:STRUCTURED_FILES]
            ],
        }
        if len(bd.files) > STRUCTURED_FILES:
            structured["files_left_out"] = len(bd.files) - STRUCTURED_FILES
        return Output.text("\n\n".join(parts), structured)

    return tool(
        workspace_context,
        description="Snapshot of the current tab: prompt, selected files, codemaps, file contents, tree and a "
        "token breakdown per component with a total (that of the exported context package). include: prompt, "
        "selection, code, files, tree, tokens (default: all but files).",
        read_only=True,
        idempotent=True,
    )
