"""What a chunk's vector is made of: three views, embedded apart and summed.

A static embedding model averages token vectors, so one long text blurs into
its most frequent tokens: a function's body of ``self``, ``return`` and
local names drowns its docstring, and a section's code sample drowns its
prose. Measured on the evaluation sets (``bench/index_eval.py``), embedding
the whole chunk gave dense recall@5 of 0.60 (docs) and 0.08 (code); the sum
of three unit vectors below gave 0.75 and 0.27:

* the **title** with its identifiers split (``Context.lookup_default`` ->
  ``Context lookup default``): what the chunk is;
* its **prose**: docstrings and comments of code, the text of a section
  without its fenced code: what it says about itself;
* the **body** (first 1,500 characters): what it contains.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tooldeck.index.lexical import expand_identifiers

if TYPE_CHECKING:
    from tooldeck.index.model import Chunk

VIEWS = 3  # texts embedded per chunk
BODY_CHARS = 1500
PROSE_CHARS = 1000
_TRIPLE = re.compile(r'(?:"""|\'\'\')(.*?)(?:"""|\'\'\')', re.S)
_COMMENT = re.compile(r"^\s*(?:#|//+|/\*+|\*|--|;;|\(\*)\s?(.*)$", re.M)
_FENCED = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.S | re.M)


def prose(chunk: Chunk) -> str:
    if chunk.kind in ("section",):
        text = _FENCED.sub(" ", chunk.text)
    else:
        parts = _TRIPLE.findall(chunk.text) + [m for m in _COMMENT.findall(chunk.text) if m.strip()]
        text = " ".join(parts)
    text = " ".join(text.split())
    return text[:PROSE_CHARS] if text else chunk.text[:300]


def views(chunk: Chunk) -> list[str]:
    title = f"{chunk.title} {expand_identifiers(chunk.title)}".strip() or chunk.path
    return [title, prose(chunk), chunk.text[:BODY_CHARS] or title]
