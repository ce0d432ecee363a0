"""The codemap cache's key: which extractor made a payload.

A codemap is stored under ``<version>:<language>:<content hash>``
(:func:`blob_key`); the version (:func:`extractor_version`) folds in the
query files, the extraction code and the installed grammars, so changing a
query invalidates old entries without a manual bump. The cache itself (its
tables and queries) is :mod:`tooldeck.state.codemaps`; blobs are described in
:mod:`tooldeck.codemap.entry`.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from pathlib import Path

FORMAT_VERSION = "1"

# the modules whose code shapes a payload: the tree it is read from (grammars, hollow*), what is
# read (extract, specs, kinds), the references (lexer) and the stored form (entry, blob)
_SHAPING = (
    "extract.py", "specs.py", "kinds.py", "lexer.py", "grammars.py", "hollow.py", "hollow_braces.py",
    "entry.py", "blob.py",
)  # fmt: skip


@functools.cache
def extractor_version() -> str:
    """A short fingerprint of everything that shapes a payload: that code,
    the queries, and the installed versions of tree-sitter and its grammar
    wheels (a new grammar may name its nodes differently)."""
    here = Path(__file__).parent
    h = hashlib.sha256(FORMAT_VERSION.encode())
    code = [here / name for name in _SHAPING]
    for path in [*sorted((here / "queries").glob("*.scm")), *code]:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    for name in _grammar_dists():
        h.update(name.encode())
    return h.hexdigest()[:10]


def _grammar_dists() -> list[str]:
    """``tree_sitter*-<version>.dist-info`` names on the path: listing the
    folders is a millisecond where ``importlib.metadata`` takes ~70."""
    found: set[str] = set()
    for folder in {p for p in sys.path if p.endswith(("site-packages", "dist-packages"))}:
        try:
            found.update(n for n in os.listdir(folder) if n.startswith("tree_sitter") and n.endswith(".dist-info"))
        except OSError:
            continue
    return sorted(found)


def blob_key(language: str, digest: str) -> str:
    return f"{extractor_version()}:{language}:{digest}"
