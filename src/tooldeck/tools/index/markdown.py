"""index_markdown_docs and markdown_search (seed 000)."""

from __future__ import annotations

from pydantic import Field

from tooldeck.core import Invocation, Output, ToolInput, tool
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.tools.index.common import Mode, ModeField, build_output, progress, render_hits


class IndexMarkdownDocsInput(ToolInput):
    root: str = Field(".", description="Folder of Markdown/reST docs (relative to a workspace root, or absolute).")
    index_name: str = Field("docs", description="Name of the index to create or update.")
    description: str = Field("", description="What the docs are about (shown when indexes are listed).")


class MarkdownSearchInput(ToolInput):
    query: str = Field(min_length=1, description="What to look for, in words (a question works).")
    k: int = Field(5, ge=1, le=50, description="Number of sections to return.")
    index_name: str = Field("docs", description="Index built by index_markdown_docs.")
    mode: Mode = ModeField


def build(rt: Runtime) -> list[Tool]:
    def index_markdown_docs(args: IndexMarkdownDocsInput, inv: Invocation) -> Output:
        """Index a folder of Markdown/reST docs for markdown_search: sections split at headings, BM25 + embeddings.

        Incremental: a second call re-embeds only files whose content changed and drops deleted files."""
        # lazy: the index service (numpy, tantivy, the embedder) waits for the first call
        from tooldeck.index.service import index_service

        svc = index_service(rt)
        report = svc.build_markdown(args.root, args.index_name, args.description, progress(inv))
        return build_output(report, f'search it with markdown_search {{"query": ..., "index_name": "{report.name}"}}')

    def markdown_search(args: MarkdownSearchInput) -> Output:
        """Search Markdown docs indexed by index_markdown_docs; returns sections with file, lines and heading path."""
        # lazy: the index service (numpy, tantivy, the embedder) waits for the first call
        from tooldeck.index.service import index_service

        svc = index_service(rt)
        hits = svc.search(args.index_name, args.query, args.k, args.mode, kind="markdown")
        idx = svc.open(args.index_name, "markdown")
        return render_hits(hits, args.query, str(idx.manifest.get("source", "")), rt.workspace, args.index_name)

    return [
        tool(index_markdown_docs, idempotent=True),
        tool(markdown_search, read_only=True, idempotent=True),
    ]
