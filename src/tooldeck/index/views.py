"""What a chunk's vector is made of: the texts embedded for it, per index kind.

A static embedding model averages token vectors, so one long text blurs into
its most frequent tokens: a function's body of ``self``, ``return``, type
annotations and local names drowns what the function is for, and a section's
code sample drowns its prose. So a chunk is not embedded as it is:

* **code** (``index_code``): one *summary* sentence, the words of the
  enclosing symbol's qualified name split (``Context.lookup_default`` ->
  ``context lookup default``), the words of the file's path
  (``click/termui.py`` -> ``click termui``) and the first sentence of its
  docstring or comments; with neither, the words of the identifiers its code
  uses (``get_text_stderr``, ``echo`` -> ``get text stderr echo``; language
  keywords and ``self``-like noise left out), not the raw code and its type
  annotations. This is close to how a question about code is phrased ("where
  does the context look up a default?"). On the tuning half of the code set
  of ``bench/index_eval.py`` it lifted dense MRR from 0.18 (three views:
  title with signature, prose, body) to 0.48; summing the prose or the body
  in again lowered it (docs/index.md has the table). A contextual model
  (``reads_code`` on the embedder: MiniLM, an endpoint) does not blur a long
  text that way, and gets the summary and the code's first 1,500 characters
  (the better of the two on the tuning half with MiniLM).
* **markdown** and **pydoc**: three views embedded apart and summed: the
  **title** with split identifiers (heading path, or qualified name and
  signature), the **prose** (a section's text without its fenced code), and
  the **body** (first 1,500 characters). Whole-chunk embeddings gave dense
  recall@5 0.60 on the docs set, the three views 0.72.

``VERSION`` is recorded in every index: vectors made from other views are not
reused by an incremental build (they would not match the new ones).
"""

from __future__ import annotations

import keyword
import re
from typing import TYPE_CHECKING

from tooldeck.index.lexical import expand_identifiers, split_identifier

if TYPE_CHECKING:
    from tooldeck.index.model import Chunk

VERSION = 2  # 1: three views for every kind; 2: one summary view for code
VIEWS = 3  # texts embedded per markdown or pydoc chunk (code: 1, or 2 for a contextual model)
BODY_CHARS = 1500
PROSE_CHARS = 1000
SENTENCE_CHARS = 300
_TRIPLE = re.compile(r'(?:"""|\'\'\')(.*?)(?:"""|\'\'\')', re.S)
# a comment line; a lone "*" continues a /* */ block only when followed by a space (not "*args:")
_COMMENT = re.compile(r"^\s*(?:#|//+|/\*+|\*(?=\s|$)|--|;;|\(\*)\s?(.*)$", re.M)
_FENCED = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.S | re.M)
_SENTENCE = re.compile(r"(.+?[.!?])(?=\s|$)", re.S)
_NAME_PARTS = re.compile(r"[A-Za-z0-9]+(?:_[A-Za-z0-9]+)*")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
CODE_WORDS = 30  # words of identifiers standing in for a missing docstring
# words of code that say nothing about what it does (keywords of the common languages, self, typing)
_NOISE = frozenset(
    {w.lower() for w in keyword.kwlist}
    | set(
        "self cls this t any none null nil true false str int bool float args kwargs typing cabc optional list "
        "dict tuple overload def fn func function var let const val void static public private protected new "
        "end then do".split()
    )
)


def prose(chunk: Chunk) -> str:
    text = " ".join(_FENCED.sub(" ", chunk.text).split()) if chunk.kind == "section" else _doc(chunk)
    return text[:PROSE_CHARS] if text else chunk.text[:SENTENCE_CHARS]


def name_words(name: str) -> str:
    """``Context.lookup_default`` -> ``context lookup default``; ``click/_compat.py``
    -> ``click compat py``: the words a person would use for a name."""
    out: list[str] = []
    for part in _NAME_PARTS.findall(name):
        pieces = split_identifier(part) or (part,)
        out.extend(p.lower() for p in pieces if p.strip("_"))
    return " ".join(out)


def first_sentence(text: str) -> str:
    m = _SENTENCE.match(text)
    return (m.group(1) if m else text)[:SENTENCE_CHARS]


def code_words(text: str, limit: int = CODE_WORDS) -> str:
    """The first ``limit`` distinct words of the identifiers in ``text``, noise left out."""
    out: dict[str, None] = {}
    for ident in _IDENT.findall(text):
        for w in name_words(ident).split():
            if len(w) > 1 and w not in _NOISE:
                out[w] = None
                if len(out) >= limit:
                    return " ".join(out)
    return " ".join(out)


def _doc(chunk: Chunk) -> str:
    """The chunk's docstrings and comments (empty when it has none)."""
    parts = _TRIPLE.findall(chunk.text) + [m for m in _COMMENT.findall(chunk.text) if m.strip()]
    return " ".join(" ".join(parts).split())


def code_summary(chunk: Chunk) -> str:
    """Symbol words, path words (without the extension), then the doc's first
    sentence or, lacking a doc, the words of the code's identifiers."""
    path = chunk.path.rsplit(".", 1)[0] if "." in chunk.path.rsplit("/", 1)[-1] else chunk.path
    symbol = name_words(chunk.symbol) if chunk.symbol else "module"
    doc = _doc(chunk)
    about = first_sentence(doc) if doc else code_words(chunk.text)
    return f"{symbol} {name_words(path)} {about}".strip()


def views(chunk: Chunk, index_kind: str = "", reads_code: bool = False) -> list[str]:
    """The texts embedded for ``chunk`` (their vectors are summed); the same
    count for every chunk of one index kind. ``reads_code``: the embedder is a
    contextual model (MiniLM, an endpoint), which also gets the code itself."""
    if index_kind == "code":
        summary = code_summary(chunk)
        return [summary, chunk.text[:BODY_CHARS] or summary] if reads_code else [summary]
    title = f"{chunk.title} {expand_identifiers(chunk.title)}".strip() or chunk.path
    return [title, prose(chunk), chunk.text[:BODY_CHARS] or title]
