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
from typing import Any

import numpy as np

from tooldeck.index.dense import write_vectors
from tooldeck.index.embed import Embedder, normalise
from tooldeck.index.layout import Layout
from tooldeck.index.lexical import write_lexical
from tooldeck.index.model import BuildReport, Chunk
from tooldeck.index.search import FORMAT, OpenIndex
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
        same_model = prev is not None and prev.model_id == embedder.model_id and prev.kind == spec.kind
        old_files = prev.files if same_model and prev is not None else {}
        by_path: dict[str, list[int]] = {}
        by_text: dict[str, int] = {}
        if same_model and prev is not None:
            for i, c in enumerate(prev.chunks):
                by_path.setdefault(c.path, []).append(i)
                by_text.setdefault(prev.text_hashes[i], i)
        chunks: list[Chunk] = []
        hashes: list[str] = []
        source_row: list[int] = []  # row of the reused vector in prev, or -1 when it must be embedded
        file_hashes: dict[str, str] = {}
        total = len(files)
        for n, rel in enumerate(files, 1):
            check()
            if n % 50 == 0 or n == total:
                progress("files", n, total)
            data = load(rel)
            if data is None:
                report.skipped.append(rel)
                continue
            h = content_hash(data)
            file_hashes[rel] = h
            if old_files.get(rel) == h and prev is not None:
                for i in by_path.get(rel, []):
                    chunks.append(prev.chunks[i])
                    hashes.append(prev.text_hashes[i])
                    source_row.append(i)
                continue
            report.files_changed += 1
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                report.skipped.append(rel)
                continue
            for c in chunker(rel, text, data):
                th = c.text_hash
                chunks.append(c)
                hashes.append(th)
                source_row.append(by_text.get(th, -1))
        report.files = len(file_hashes)
        report.files_removed = len(set(old_files) - set(file_hashes))
        if prev is not None and live is not None and _unchanged(prev, spec, file_hashes, report):
            report.chunks, report.generation = len(prev.chunks), live.name
            report.seconds = time.perf_counter() - t0
            return report  # nothing to write: the live generation is this build's result
        vectors = _vectors(chunks, source_row, prev, embedder, report, progress, check)
        build = layout.new_build_dir(spec.name)
        write_lexical(build / "lexical", chunks)
        write_vectors(build / "vectors.npy", vectors)
        (build / "chunks.json").write_text(
            json.dumps({"rows": [c.to_row() for c in chunks], "hashes": hashes}, ensure_ascii=False)
        )
        report.chunks = len(chunks)
        manifest = {
            "format": FORMAT,
            "name": spec.name,
            "kind": spec.kind,
            "source": spec.source,
            "description": spec.description,
            "model": embedder.model_id,
            "dim": int(vectors.shape[1]) if vectors.ndim == 2 else 0,
            "files": file_hashes,
            "chunks": len(chunks),
            "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
            **spec.extra,
        }
        (build / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False))
        report.generation = layout.publish(spec.name, build)
        layout.cleanup(spec.name)
    report.seconds = time.perf_counter() - t0
    return report


def _unchanged(prev: OpenIndex, spec: BuildSpec, file_hashes: dict[str, str], report: BuildReport) -> bool:
    man = prev.manifest
    return (
        report.files_changed == 0
        and file_hashes == prev.files
        and man.get("source") == spec.source
        and man.get("description") == spec.description
        and all(man.get(k) == v for k, v in spec.extra.items())
    )


def embed_chunks(embedder: Embedder, chunks: list[Chunk]) -> np.ndarray:
    """One unit vector per chunk: the normalised sum of its views' vectors."""
    views = [c.embed_views() for c in chunks]
    n = len(views[0]) if views else 0
    flat = embedder.embed([v for vs in views for v in vs])
    if not len(flat):
        return flat
    summed = flat.reshape(len(chunks), n, -1).sum(axis=1)
    return normalise(summed)


def _vectors(
    chunks: list[Chunk],
    source_row: list[int],
    prev: OpenIndex | None,
    embedder: Embedder,
    report: BuildReport,
    progress: Progress,
    check: Callable[[], None],
) -> np.ndarray:
    todo = [i for i, r in enumerate(source_row) if r < 0]
    report.chunks_embedded = len(todo)
    new: np.ndarray | None = None
    if todo:
        parts = []
        for a in range(0, len(todo), EMBED_BATCH):
            check()
            batch = todo[a : a + EMBED_BATCH]
            parts.append(embed_chunks(embedder, [chunks[i] for i in batch]))
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
