"""prompt (seed 004): the current tab's shared prompt, and its export.

``op``: get | set | append | clear | export. ``append`` adds a newline first
when the prompt does not end in one. ``export`` writes the Markdown context
package (prompt, tree, files, slices, codemaps) through the atomic writer:
to ``path`` inside a root, or, without ``path``, under the state directory's
``exports/`` folder.
"""

from __future__ import annotations

import os
import re
import time
from typing import Literal

from pydantic import Field, model_validator

from tooldeck.core import ToolInput, tool
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.selection.service import selection_service
from tooldeck.state.workspaces import workspace_service
from tooldeck.tools.common import resolve_new_file, write_text
from tooldeck.workspace.atomic import write_file

MAX_PROMPT = 1_000_000


class PromptInput(ToolInput):
    op: Literal["get", "set", "append", "clear", "export"] = "get"
    text: str | None = Field(None, max_length=MAX_PROMPT, description="Text for set / append.")
    path: str | None = Field(
        None, description="export: file to write, inside a root (default: a new file under the state directory)."
    )
    if_exists: Literal["error", "overwrite"] = Field("error", description="export: when `path` already exists.")

    @model_validator(mode="after")
    def _needs(self) -> PromptInput:
        if self.op in ("set", "append") and self.text is None:
            raise ValueError(f"op={self.op} needs `text`")
        if self.op not in ("set", "append") and self.text is not None:
            raise ValueError(f"op={self.op} takes no `text`")
        if self.op != "export" and self.path is not None:
            raise ValueError("`path` is for op=export")
        return self


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-")[:40] or "tab"


def build(rt: Runtime) -> Tool:
    def export(args: PromptInput) -> str:
        svc = selection_service(rt)
        sel = svc.snapshot()
        pkg, status = svc.package(sel)
        data = pkg.text().encode("utf-8")
        total = svc.breakdown_of(pkg, sel, status).total
        if args.path:
            ws = rt.workspace
            rp = resolve_new_file(ws, args.path, args.if_exists)
            shown = ws.display(rp.abs)
            # if_exists=error: refused if another writer created the file since the check
            write_text(rp, data.decode("utf-8"), state_dir=rt.state_dir, expect_absent=not rp.exists)
            where = shown
        else:
            tab = workspace_service(rt).current().tab
            rel = f"exports/context-{_slug(tab.name)}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.md"
            write_file(str(rt.state_dir), rel, data, state_dir=rt.state_dir, expect_absent=True)
            where = str(rt.state_dir / rel)
        missing = f"; {len(status)} file(s) without content (see workspace_context)" if status else ""
        return (
            f"Exported the context package to {where}: {len(sel.files)} files, "
            f"{total:,} tokens, {len(data):,} bytes{missing}"
        )

    def prompt(args: PromptInput) -> str:
        svc = selection_service(rt)
        if args.op == "get":
            text = svc.prompt()
            return text if text else "(the prompt is empty; set it with op=set)"
        if args.op == "set":
            text = svc.set_prompt(args.text or "")
            return f"Prompt set ({len(text):,} characters)."
        if args.op == "append":
            text = svc.append_prompt(args.text or "")
            return f"Appended {len(args.text or ''):,} characters; the prompt has {len(text):,}."
        if args.op == "clear":
            svc.set_prompt("")
            return "Prompt cleared."
        return export(args)

    return tool(
        prompt,
        description="The current tab's shared prompt. op: get | set (text) | append (text; a newline separates) "
        "| clear | export (writes the Markdown context package — prompt, tree, files, slices, codemaps — to "
        "`path` inside a root, or under the state directory when no path is given).",
    )
