"""index_code and query_vector_db: hybrid retrieval over code (seed 000's
index_ocaml_code, for every language with a codemap grammar)."""

from __future__ import annotations

from pydantic import Field

from tooldeck.core import Invocation, Output, ToolInput, tool
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.tools.index.common import Mode, ModeField, build_output, progress, render_hits


class IndexCodeInput(ToolInput):
    folder: str = Field(".", description="Source folder to index (relative to a workspace root, or absolute).")
    index_name: str = Field("code", description="Name of the index to create or update.")


class QueryVectorDbInput(ToolInput):
    query: str = Field(min_length=1, description="What the code does, in words, or identifiers.")
    num_results: int = Field(5, ge=1, le=50, description="Number of chunks to return.")
    index: str = Field("code", description="Index built by index_code.")
    mode: Mode = ModeField


def build(rt: Runtime) -> list[Tool]:
    def index_code(args: IndexCodeInput, inv: Invocation) -> Output:
        """Index source code for query_vector_db: one chunk per definition (tree-sitter), BM25 + embeddings.

        Every language with a codemap grammar. Incremental: unchanged files keep their chunks and vectors."""
        # lazy: the index service (numpy, tantivy, the embedder) waits for the first call
        from tooldeck.index.service import index_service

        report = index_service(rt).build_code(args.folder, args.index_name, progress=progress(inv))
        return build_output(report, f'search it with query_vector_db {{"query": ..., "index": "{report.name}"}}')

    def query_vector_db(args: QueryVectorDbInput) -> Output:
        """Hybrid search (BM25 + embeddings, fused) over a code index built by index_code.

        Each result: file, line range, enclosing symbol and the chunk's first lines."""
        # lazy: the index service (numpy, tantivy, the embedder) waits for the first call
        from tooldeck.index.service import index_service

        svc = index_service(rt)
        hits = svc.search(args.index, args.query, args.num_results, args.mode, kind="code")
        idx = svc.open(args.index, "code")
        return render_hits(hits, args.query, str(idx.manifest.get("source", "")), rt.workspace, args.index)

    return [
        tool(index_code, idempotent=True),
        tool(query_vector_db, read_only=True, idempotent=True),
    ]
