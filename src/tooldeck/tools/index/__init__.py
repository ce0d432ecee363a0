"""Indexes: index_markdown_docs + markdown_search, index_code + query_vector_db,
pydoc_search.

The work lives in :mod:`tooldeck.index`; these modules turn arguments into
service calls and hits into text. Nothing heavy is imported here: tantivy,
numpy and the embedding model load on the first call.
"""

from __future__ import annotations

from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.tools.index import code, markdown, pydoc


def tools(rt: Runtime) -> list[Tool]:
    return [*markdown.build(rt), *code.build(rt), pydoc.build(rt)]
