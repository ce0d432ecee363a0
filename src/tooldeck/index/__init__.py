"""Retrieval indexes: chunk files, embed the chunks, search them lexically
(tantivy BM25), densely (cosine over numpy vectors) and fused (hybrid).

A pipeline you can read in the file names::

    sources.py        which files an index covers, read through the workspace layer
    chunk_markdown.py Markdown / reST  -> heading-aligned chunks
    chunk_code.py     source files     -> definition-aligned chunks (the codemap layer)
    chunk_pydoc.py    installed Python package -> signature + docstring chunks (ast)
    embed.py          texts -> unit vectors (static model, MiniLM, OpenAI-compatible endpoint)
    lexical.py        tantivy index of the chunks (BM25)
    dense.py          the vectors as one numpy matrix beside it
    fuse.py           reciprocal rank fusion of the two rankings
    layout.py         generations on disk, the CURRENT pointer swapped atomically, the build lock
    build.py          incremental build: unchanged files keep their chunks and vectors
    search.py         an opened generation and its three searches
    service.py        the process-wide IndexService tools call

Knows nothing of tools or hosts.
"""
