"""One opened generation of an index and its three searches.

``lexical`` (BM25 over title and body), ``dense`` (cosine over the vectors)
and ``hybrid`` (both, fused by :mod:`tooldeck.index.fuse`). An opened
generation is immutable: a rebuild publishes a new one beside it, so a search
running during a rebuild reads a consistent snapshot.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import numpy as np

from tooldeck.index import fuse
from tooldeck.index.dense import load_vectors, top_k
from tooldeck.index.lexical import LexicalIndex
from tooldeck.index.model import Chunk, Hit

Mode = Literal["hybrid", "lexical", "dense"]
FORMAT = 1


class OpenIndex:
    def __init__(self, gen_dir: Path) -> None:
        self.dir = gen_dir
        self.manifest: dict[str, Any] = json.loads((gen_dir / "manifest.json").read_text())
        data = json.loads((gen_dir / "chunks.json").read_text())
        self.chunks: list[Chunk] = [Chunk.from_row(r) for r in data["rows"]]
        self.text_hashes: list[str] = data["hashes"]
        self.vectors: np.ndarray = load_vectors(gen_dir / "vectors.npy")
        self._lexical: LexicalIndex | None = None

    @property
    def name(self) -> str:
        return str(self.manifest["name"])

    @property
    def kind(self) -> str:
        return str(self.manifest["kind"])

    @property
    def model_id(self) -> str:
        return str(self.manifest["model"])

    @property
    def views_version(self) -> int:
        """How the vectors were made (:data:`tooldeck.index.views.VERSION`; 1 before it was recorded)."""
        return int(self.manifest.get("views", 1))

    @property
    def files(self) -> dict[str, str]:
        return dict(self.manifest.get("files", {}))

    def lexical(self) -> LexicalIndex:
        if self._lexical is None:
            self._lexical = LexicalIndex(self.dir / "lexical")
        return self._lexical

    def search(
        self,
        query: str,
        k: int,
        mode: Mode = "hybrid",
        query_vector: np.ndarray | None = None,
        fusion: fuse.Fusion | None = None,
    ) -> list[Hit]:
        n = fuse.CANDIDATES if mode == "hybrid" else k
        lex = self.lexical().search(query, max(n, k)) if mode in ("hybrid", "lexical") else []
        den = top_k(self.vectors, query_vector, max(n, k)) if mode != "lexical" and query_vector is not None else []
        if mode == "lexical":
            return [Hit(self.chunks[i], s, r, None) for r, (i, s) in enumerate(lex[:k], 1)]
        if mode == "dense":
            return [Hit(self.chunks[i], s, None, r) for r, (i, s) in enumerate(den[:k], 1)]
        fused = fuse.fuse(lex, den, self.vectors, query_vector, fusion or fuse.for_kind(self.kind, self.model_id))
        return [Hit(self.chunks[i], s, lr, dr) for i, s, lr, dr in fused[:k]]
