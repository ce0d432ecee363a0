"""The lexical side: a tantivy (BM25) index of the chunks.

Two text fields, ``title`` (heading path or symbol and signature, boosted)
and ``body``, both with tantivy's English stemming tokenizer; a stored
``id`` field maps a hit back to the chunk's row. Identifiers are split
before indexing and querying (``parseArgs`` -> ``parse args``,
``make_context`` -> ``make context``) because the tokenizer keeps camelCase
words whole, and a question in prose names the parts.

Queries are plain words: every run of letters and digits in the user's text,
OR-ed (BM25 rewards documents that hold more of them). Query syntax is never
passed through, so a ``:`` or ``(`` in a question cannot make it fail.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tooldeck.index.model import Chunk

TITLE_BOOST = 0.6  # chosen by bench/index_eval.py (grid 0.4-3.0): titles repeat words of the body
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_WORD = re.compile(r"[A-Za-z0-9]+")
# Function words of questions ("how do I ...", "where is the ..."): in BM25 they only add noise.
STOPWORDS = frozenset(
    "a an and are as at be by can do does for from how i in into is it its my of on or so that the this to "
    "was what when where which who why will with you your me we our".split()
)


@functools.lru_cache(maxsize=262_144)
def split_identifier(ident: str) -> tuple[str, ...]:
    """``parseArgs`` -> (parse, Args); ``make_context`` -> (make, context); a plain word -> ()."""
    if "_" not in ident and ident[1:].islower():
        return ()
    pieces = [p for w in ident.split("_") for p in _CAMEL.findall(w)]
    return tuple(pieces) if len(pieces) > 1 else ()


def expand_identifiers(text: str) -> str:
    """The parts of every compound identifier in ``text``, space-joined (to
    append to the text; the whole identifiers stay too)."""
    parts: list[str] = []
    for ident in set(_IDENT.findall(text)):
        parts.extend(split_identifier(ident))
    return " ".join(parts)


def _schema() -> Any:
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_unsigned_field("id", stored=True, indexed=True)
    sb.add_text_field("title", stored=False, tokenizer_name="en_stem")
    sb.add_text_field("body", stored=False, tokenizer_name="en_stem")
    return sb.build()


def write_lexical(path: Path, chunks: Sequence[Chunk]) -> None:
    """Create the tantivy index of ``chunks`` in the empty folder ``path``."""
    import tantivy

    path.mkdir(parents=True, exist_ok=True)
    index = tantivy.Index(_schema(), path=str(path))
    writer = index.writer(heap_size=64_000_000, num_threads=1)
    for i, c in enumerate(chunks):
        title = f"{c.title} {expand_identifiers(c.title)}"
        body = f"{c.path} {c.text} {expand_identifiers(c.text)}"
        doc = tantivy.Document()
        doc.add_unsigned("id", i)
        doc.add_text("title", title)
        doc.add_text("body", body)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()


class LexicalIndex:
    """An opened tantivy index (read-only)."""

    def __init__(self, path: Path) -> None:
        import tantivy

        self._index = tantivy.Index.open(str(path))
        self._searcher = self._index.searcher()

    def search(self, query: str, limit: int, title_boost: float = TITLE_BOOST) -> list[tuple[int, float]]:
        """``(chunk id, BM25 score)`` best first."""
        words = _WORD.findall(query)
        extra = expand_identifiers(query)
        terms = [w.lower() for w in words + extra.split() if w.lower() not in STOPWORDS]
        if not terms:
            return []
        q, _errors = self._index.parse_query_lenient(
            " ".join(dict.fromkeys(terms)), ["title", "body"], field_boosts={"title": title_boost}
        )
        result = self._searcher.search(q, limit)
        out: list[tuple[int, float]] = []
        for score, addr in result.hits:
            doc = self._searcher.doc(addr)
            out.append((int(doc["id"][0]), float(score)))
        return out
