"""What the index tools share: progress reporting and rendering hits."""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import Field

from tooldeck.core import Invocation, Output
from tooldeck.index.model import BuildReport, Hit
from tooldeck.workspace.roots import Workspace

ModeField = Field(
    "hybrid", description="hybrid (default: BM25 and embeddings fused), lexical (BM25 only) or dense (embeddings only)."
)
Mode = Literal["hybrid", "lexical", "dense"]
SNIPPET_LINES = 12


def progress(inv: Invocation) -> Any:
    """A build progress callback that emits ``indexing: n/N files`` updates."""

    def report(stage: str, done: int, total: int) -> None:
        inv.check_cancelled()
        if inv.is_observed:
            what = "files" if stage == "files" else "chunks embedded"
            inv.emit_text("activity", f"indexing: {done}/{total} {what}", replace=True)

    return report


def build_output(report: BuildReport, extra: str = "") -> Output:
    text = report.summary() + (f"\n{extra}" if extra else "")
    if report.skipped:
        text += f"\nskipped {len(report.skipped)} unreadable or binary file(s): " + ", ".join(report.skipped[:10])
    data = {
        "index": report.name,
        "kind": report.kind,
        "files": report.files,
        "files_changed": report.files_changed,
        "files_removed": report.files_removed,
        "chunks": report.chunks,
        "chunks_embedded": report.chunks_embedded,
        "model": report.model,
        "seconds": round(report.seconds, 3),
    }
    return Output.text(text, data)


def shown_path(ws: Workspace | None, source: str, rel: str) -> str:
    """How a hit's file is named: as the workspace shows it (for read_file)."""
    if ws is None or not source.startswith("/"):
        return rel
    return ws.display(os.path.join(source, rel))


def render_hits(hits: list[Hit], query: str, source: str, ws: Workspace | None, index: str) -> Output:
    if not hits:
        return Output.text(f"No results for {query!r} in index {index!r}.", {"index": index, "results": []})
    lines: list[str] = []
    rows = []
    for n, h in enumerate(hits, 1):
        c = h.chunk
        path = shown_path(ws, source, c.path)
        sym = f"  [{c.symbol}]" if c.symbol else ""
        lines.append(f"{n}. {path}:{c.start_line}-{c.end_line}  {c.title}{sym}")
        body = c.text.splitlines()
        snippet = body[:SNIPPET_LINES]
        lines.extend("   " + s for s in snippet)
        if len(body) > SNIPPET_LINES:
            lines.append(f"   [... {len(body) - SNIPPET_LINES} more lines: read_file {path} from line {c.start_line}]")
        lines.append("")
        rows.append(
            {
                "path": path,
                "start_line": c.start_line,
                "end_line": c.end_line,
                "title": c.title,
                "symbol": c.symbol,
                "kind": c.kind,
                "score": round(h.score, 6),
            }
        )
    return Output.text("\n".join(lines).rstrip() + "\n", {"index": index, "results": rows})
