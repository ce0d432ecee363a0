"""Building an index incrementally, crash-safe.

Files whose content hash equals the one recorded in the live generation keep
their chunks and vectors as they are (no re-read of their text, no
re-chunking, no embedding); new or changed files are chunked, and only chunks
whose text is not already embedded (with the same model) get embedded;
files no longer present simply are not carried over. The whole new
generation is then written beside the live one and published atomically
(:mod:`tooldeck.index.layout`). A build with another embedding model than
the live generation's re-embeds everything.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from tooldeck.index.dense import write_vectors
from tooldeck.index.embed import Embedder, normalise
from tooldeck.index.layout import Layout
from tooldeck.index.lexical import write_lexical
from tooldeck.index.model import BuildReport, Chunk
from tooldeck.index.search import FORMAT, OpenIndex
from tooldeck.index.views import VERSION as VIEWS_VERSION
from tooldeck.index.views import views as embed_views
from tooldeck.workspace.content import content_hash

EMBED_BATCH = 1024
# (stage, done, total): stage is "files" or "embedding"
Progress = Callable[[str, int, int], None]
# rel path -> bytes, or None to skip the file (unreadable, binary, too large)
Loader = Callable[[str], bytes | None]
# rel path, text, bytes -> chunks
Chunker = Callable[[str, str, bytes], list[Chunk]]


@dataclass
class BuildSpec:
    name: str
    kind: str
    source: str  # what was indexed: a folder's absolute path, or package@version
    description: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _noop(stage: str, done: int, total: int) -> None:
    return None


def build_index(
    layout: Layout,
    spec: BuildSpec,
    files: Sequence[str],
    load: Loader,
    chunker: Chunker,
    embedder: Embedder,
    progress: Progress = _noop,
    check: Callable[[], None] = lambda: None,
) -> BuildReport:
    """Build (or update) ``spec.name`` from ``files``; return what was done."""
    t0 = time.perf_counter()
    report = BuildReport(spec.name, spec.kind, model=embedder.model_id)
    with layout.build_lock(spec.name):
        layout.cleanup(spec.name)  # debris of a crashed build goes first
        live = layout.current(spec.name)
        prev = OpenIndex(live) if live is not None else None
        if prev is not None and (
            prev.model_id != embedder.model_id or prev.kind != spec.kind or prev.views_version != VIEWS_VERSION
        ):
            prev = None  # another model, kind or way of making vectors: nothing is reusable
        col = _collect(prev, files, load, chunker, report, progress, check)
        report.files = len(col.file_hashes)
        report.files_removed = len(set(prev.files if prev else {}) - set(col.file_hashes))
        if prev is not None and live is not None and _unchanged(prev, spec, col.file_hashes, report):
            report.chunks, report.generation = len(prev.chunks), live.name
            report.seconds = time.perf_counter() - t0
            return report  # nothing to write: the live generation is this build's result
        vectors = _vectors(col, prev, embedder, spec.kind, report, progress, check)
        build = layout.new_build_dir(spec.name)
        _write_generation(build, spec, embedder.model_id, col, vectors)
        report.chunks = len(col.chunks)
        report.generation = layout.publish(spec.name, build)
        layout.cleanup(spec.name)
    report.seconds = time.perf_counter() - t0
    return report


@dataclass
class _Collected:
    chunks: list[Chunk] = field(default_factory=list)
    hashes: list[str] = field(default_factory=list)
    source_row: list[int] = field(default_factory=list)  # row of a reusable vector in prev, or -1: embed it
    file_hashes: dict[str, str] = field(default_factory=dict)

    def add(self, chunk: Chunk, text_hash: str, row: int) -> None:
        self.chunks.append(chunk)
        self.hashes.append(text_hash)
        self.source_row.append(row)


def _collect(
    prev: OpenIndex | None,
    files: Sequence[str],
    load: Loader,
    chunker: Chunker,
    report: BuildReport,
    progress: Progress,
    check: Callable[[], None],
) -> _Collected:
    """Every file's chunks: an unchanged file's from ``prev``, a changed one's from the chunker."""
    old_files = prev.files if prev is not None else {}
    by_path: dict[str, list[int]] = {}
    by_text: dict[str, int] = {}
    if prev is not None:
        for i, c in enumerate(prev.chunks):
            by_path.setdefault(c.path, []).append(i)
            by_text.setdefault(prev.text_hashes[i], i)
    col = _Collected()
    total = len(files)
    for n, rel in enumerate(files, 1):
        check()
        if n % 50 == 0 or n == total:
            progress("files", n, total)
        data = load(rel)
        if data is None:
            report.skipped.append(rel)
            continue
        h = col.file_hashes[rel] = content_hash(data)
        if prev is not None and old_files.get(rel) == h:
            for i in by_path.get(rel, []):
                col.add(prev.chunks[i], prev.text_hashes[i], i)
            continue
        report.files_changed += 1
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            report.skipped.append(rel)
            del col.file_hashes[rel]
            continue
        for c in chunker(rel, text, data):
            th = c.text_hash
            col.add(c, th, by_text.get(th, -1))
    return col


def _write_generation(build: Path, spec: BuildSpec, model_id: str, col: _Collected, vectors: np.ndarray) -> None:
    write_lexical(build / "lexical", col.chunks)
    write_vectors(build / "vectors.npy", vectors)
    rows = {"rows": [c.to_row() for c in col.chunks], "hashes": col.hashes}
    (build / "chunks.json").write_text(json.dumps(rows, ensure_ascii=False))
    manifest = {
        "format": FORMAT,
        "name": spec.name,
        "kind": spec.kind,
        "source": spec.source,
        "description": spec.description,
        "model": model_id,
        "views": VIEWS_VERSION,
        "dim": int(vectors.shape[1]) if vectors.ndim == 2 else 0,
        "files": col.file_hashes,
        "chunks": len(col.chunks),
        "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
        **spec.extra,
    }
    (build / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False))


def _unchanged(prev: OpenIndex, spec: BuildSpec, file_hashes: dict[str, str], report: BuildReport) -> bool:
    man = prev.manifest
    return (
        report.files_changed == 0
        and file_hashes == prev.files
        and man.get("source") == spec.source
        and man.get("description") == spec.description
        and all(man.get(k) == v for k, v in spec.extra.items())
    )


def embed_chunks(embedder: Embedder, chunks: list[Chunk], index_kind: str = "") -> np.ndarray:
    """One unit vector per chunk: the normalised sum of its views' vectors."""
    reads_code = bool(getattr(embedder, "reads_code", False))
    views = [embed_views(c, index_kind, reads_code) for c in chunks]
    n = len(views[0]) if views else 0
    flat = embedder.embed([v for vs in views for v in vs])
    if not len(flat):
        return flat
    summed = flat.reshape(len(chunks), n, -1).sum(axis=1)
    return normalise(summed)


def _vectors(
    col: _Collected,
    prev: OpenIndex | None,
    embedder: Embedder,
    kind: str,
    report: BuildReport,
    progress: Progress,
    check: Callable[[], None],
) -> np.ndarray:
    chunks, source_row = col.chunks, col.source_row
    todo = [i for i, r in enumerate(source_row) if r < 0]
    report.chunks_embedded = len(todo)
    new: np.ndarray | None = None
    if todo:
        parts = []
        for a in range(0, len(todo), EMBED_BATCH):
            check()
            batch = todo[a : a + EMBED_BATCH]
            parts.append(embed_chunks(embedder, [chunks[i] for i in batch], kind))
            progress("embedding", min(a + EMBED_BATCH, len(todo)), len(todo))
        new = np.vstack(parts)
    dim = new.shape[1] if new is not None else (prev.vectors.shape[1] if prev is not None and len(prev.chunks) else 0)
    out = np.zeros((len(chunks), dim), dtype=np.float32)
    if new is not None:
        out[todo] = new
    reuse = [i for i, r in enumerate(source_row) if r >= 0]
    if reuse and prev is not None:
        out[reuse] = prev.vectors[[source_row[i] for i in reuse]]
    return out
