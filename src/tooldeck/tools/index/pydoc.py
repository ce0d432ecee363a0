"""pydoc_search: the Python counterpart of ochat's odoc_search."""

from __future__ import annotations

from pydantic import Field

from tooldeck.core import Invocation, Output, ToolInput, tool
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.tools.index.common import Mode, ModeField, progress, render_hits


class PydocSearchInput(ToolInput):
    query: str = Field(min_length=1, description="What you need, in words (e.g. `open a file lazily`).")
    package: str = Field(min_length=1, description="Installed package: import name (`yaml`) or distribution name.")
    k: int = Field(5, ge=1, le=50, description="Number of results.")
    mode: Mode = ModeField


def build(rt: Runtime) -> Tool:
    def pydoc_search(args: PydocSearchInput, inv: Invocation) -> Output:
        """Search the docstrings and signatures of an installed Python package (read with ast, never imported).

        The package's index is built on first use and rebuilt when its version changes."""
        # lazy: the index service (numpy, tantivy, the embedder) waits for the first call
        from tooldeck.index.service import index_service

        svc = index_service(rt)
        name, _report = svc.ensure_pydoc(args.package, progress(inv))
        hits = svc.search(name, args.query, args.k, args.mode, kind="pydoc")
        src = str(svc.open(name).manifest.get("source", ""))
        out = render_hits(hits, args.query, "", None, name)
        head = f"{args.package} ({src.rsplit('@', 1)[-1]}): {len(hits)} result(s)\n"
        return Output.text(head + out.as_text(), out.structured)

    return tool(pydoc_search, read_only=True, idempotent=True)
