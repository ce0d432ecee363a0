"""How selections, changes and token breakdowns read to a model.

Kept apart from the tools so manage_selection and workspace_context show the
same lines for the same state.
"""

from __future__ import annotations

from tooldeck.selection.service import Breakdown, Change, FileTokens
from tooldeck.state.workspaces import Current
from tooldeck.workspace.roots import Workspace

SUMMARY_FILES = 30
MODE_NAMES = {"full": "full", "slices": "slices", "codemap": "codemap"}


def n(x: int) -> str:
    return f"{x:,}"


def headline(bd: Breakdown, cur: Current, auto: bool) -> str:
    counts = {m: sum(1 for f in bd.files if f.mode == m) for m in ("full", "slices", "codemap")}
    autos = sum(1 for f in bd.files if f.auto)
    parts = [f"{counts['full']} full", f"{counts['slices']} slices", f"{counts['codemap']} codemaps"]
    if autos:
        parts[-1] += f" ({autos} auto)"
    c = bd.components()
    return (
        f"Selection: {len(bd.files)} files ({', '.join(parts)}) · {n(c['files'] + c['code'])} tokens "
        f"(files {n(c['files'])}, code {n(c['code'])}) — tab {cur.tab.name!r} of workspace "
        f"{cur.workspace.name!r}, auto codemaps {'on' if auto else 'off'}"
    )


def file_line(f: FileTokens, *, descriptions: bool) -> str:
    mode = MODE_NAMES[f.mode] + (" (auto)" if f.auto else "")
    extra = ""
    if f.mode == "slices":
        extra = " lines " + ", ".join(r.label() for r in f.ranges)
    status = f"  [{f.status}]" if f.status else ""
    line = f"  {f.shown}  {mode}{extra}  {n(f.tokens)} tokens{status}"
    if descriptions and f.mode == "slices":
        for r in f.ranges:
            if r.description:
                line += f"\n      {r.label()}: {r.description}"
    return line


def summary(bd: Breakdown, cur: Current, auto: bool) -> str:
    lines = [headline(bd, cur, auto)]
    if not bd.files:
        lines.append("  (nothing selected: manage_selection op=add paths=[...])")
    shown = sorted(bd.files, key=lambda f: (f.mode == "codemap", f.shown))
    for f in shown[:SUMMARY_FILES]:
        lines.append(file_line(f, descriptions=False))
    if len(shown) > SUMMARY_FILES:
        lines.append(f"  … and {len(shown) - SUMMARY_FILES} more (view=files lists every file)")
    return "\n".join(lines)


def files(bd: Breakdown, cur: Current, auto: bool) -> str:
    lines = [headline(bd, cur, auto)]
    for f in sorted(bd.files, key=lambda f: (f.mode == "codemap", f.shown)):
        lines.append(file_line(f, descriptions=True))
    return "\n".join(lines)


def tokens(bd: Breakdown, encoding: str) -> str:
    c = bd.components()
    lines = [
        f"prompt {n(c['prompt'])} · tree {n(c['tree'])} · files {n(c['files'])} "
        f"(full {n(c['full'])}, slices {n(c['slices'])}) · code {n(c['code'])} · framing {n(c['framing'])} "
        f"· total {n(c['total'])} ({encoding})"
    ]
    for f in sorted(bd.files, key=lambda f: -f.tokens)[:50]:
        lines.append(f"  {n(f.tokens):>8}  {f.shown}  {MODE_NAMES[f.mode]}")
    if len(bd.files) > 50:
        lines.append(f"  … {len(bd.files) - 50} smaller files")
    return "\n".join(lines)


def change(ch: Change, ws: Workspace) -> str:
    def few(paths: list[str]) -> str:
        shown = ", ".join(ws.display(p) for p in paths[:8])
        return shown + (f" and {len(paths) - 8} more" if len(paths) > 8 else "")

    verb = "Would change" if ch.op == "preview" else ch.op.capitalize()
    lines: list[str] = []
    for label, paths in (
        ("added", ch.added),
        ("updated", ch.updated),
        ("removed", ch.removed),
        ("unchanged", ch.unchanged),
        ("auto codemaps added", ch.auto_added),
        ("auto codemaps dropped", ch.auto_removed),
    ):
        if paths:
            lines.append(f"{label} {len(paths)}: {few(paths)}")
    if not lines:
        lines.append("no change")
    head = f"{verb}: " + "; ".join(lines[:1])
    out = [head, *lines[1:]]
    out.extend(f"note: {note}" for note in ch.notes)
    return "\n".join(out)
