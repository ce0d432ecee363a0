"""CodemapService: codemaps for workspace files, cached, and the symbol index.

The pipeline for a batch of files, in chunks so memory stays flat on big trees:

1. stat each file; the stat cache names the content hash of files unchanged
   since they were last hashed (no read); other files are read and hashed;
2. look the ``version:language:hash`` keys up in memory, then in SQLite;
3. parse the misses (binary, non-UTF-8, minified and oversized files are
   recorded as skipped instead) in worker processes when there are many,
   in-process otherwise; ``parse_count`` counts real parses;
4. write new blobs and stat rows in one transaction per chunk.

Other domains use it through ``codemap_service(rt)``::

    svc = codemap_service(rt)
    cm = svc.codemap(root, "src/app.py")     # Codemap | None
    text = svc.render(cm)
    idx = svc.index()                        # SymbolIndex over the workspace
    idx.definitions("Server"), idx.files_referencing("Server")
"""

from __future__ import annotations

import logging
import os
import stat
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tooldeck.codemap import pool
from tooldeck.codemap.cache_key import blob_key, extractor_version
from tooldeck.codemap.entry import Entry, LazyCodemap, encode_skip
from tooldeck.codemap.fill import MAX_INDEX_FILES, Gate, IndexFill, Submitter, dispatch, indexable_files
from tooldeck.codemap.index import FileRecord, SymbolIndex
from tooldeck.codemap.languages import language_for
from tooldeck.codemap.model import Codemap, Reference, Skipped
from tooldeck.codemap.references import scan
from tooldeck.codemap.render import render as render_codemap
from tooldeck.codemap.unfit import unfit as _unfit
from tooldeck.core.errors import ToolError
from tooldeck.state.codemaps import CodemapCache, StatRow
from tooldeck.workspace.content import content_hash, looks_binary, read_bytes
from tooldeck.workspace.roots import Root

if TYPE_CHECKING:
    from tooldeck.runtime import Runtime

log = logging.getLogger("tooldeck.codemap")

MAX_FILE_BYTES = 2 * 1024 * 1024
CHUNK_FILES = 256
MEMORY_ENTRIES = 256  # decoded entries kept (a decoded codemap is ~5x its JSON: 4,096 held ~100 MB, 512 ~20 MB)

Progress = Callable[[int, int], None]


def codemap_service(rt: Runtime) -> CodemapService:
    """The process-wide service of ``rt`` (built on first use)."""
    return rt.service("codemap", CodemapService)


@dataclass(slots=True)
class _Item:
    """One file moving through the pipeline."""

    rel: str
    language: str
    abs: str
    key: str = ""
    data: bytes | None = None
    stat_row: tuple[str, str, int, int, int, str] | None = None  # to write back
    entry: Entry | None = None
    blob: str | None = None  # newly produced, to store
    unchanged: bool = False  # same key as the caller already knows: not decoded
    twin: _Item | None = None  # an earlier item of this batch with the same key (parsed once, shared)


# (rel, key, entry, skip reason); entry None and reason None = unchanged since the caller's last pass
Result = tuple[str, str, Entry | None, str | None]


class CodemapService:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.parse_count = 0  # files actually parsed by tree-sitter (cache misses)
        self.scan_count = 0  # files parsed to locate references (find_references)
        self.read_count = 0  # files read from disk (a warm pass over unchanged files reads none)
        self._cache: CodemapCache | None = None
        self._memory: OrderedDict[str, Entry] = OrderedDict()
        self._lock = threading.RLock()
        self._index_lock = threading.Lock()
        self._index: SymbolIndex | None = None
        self._fill: IndexFill | None = None
        rt.on_workspace_change(lambda _ws: self._drop_index())

    # public API ------------------------------------------------------------------
    def codemap(self, root: Root, rel: str) -> Codemap | None:
        """The codemap of one file (cached by content hash); None when the file
        has no grammar, is not readable text, or is minified/too large."""
        result = self.codemaps(root, [rel])[0]
        return result if isinstance(result, Codemap) else None

    def codemaps(self, root: Root, rels: Sequence[str], progress: Progress | None = None) -> list[Codemap | Skipped]:
        """Codemaps of ``rels`` (root-relative files), in order; files without
        one come back as :class:`Skipped` with the reason."""
        out: dict[str, Codemap | Skipped] = {}
        for rel, key, entry, reason in self._entries(root, rels, progress=progress):
            if entry is None or entry.skip is not None:
                out[rel] = Skipped(rel, reason or (entry.skip if entry else None) or "unreadable", root.id)
            else:
                out[rel] = self._codemap(root, rel, key, entry)
        return [out.get(rel) or Skipped(rel, "unreadable", root.id) for rel in rels]

    def render(self, cm: Codemap) -> str:
        """The text shown to models (see :mod:`tooldeck.codemap.render`)."""
        return render_codemap(cm, shown_path=self._shown(cm))

    def index(self, progress: Progress | None = None, *, only: Sequence[tuple[Root, str]] | None = None) -> SymbolIndex:
        """The symbol index over every root, brought up to date (unchanged
        files cost a stat; changed files are re-read, parsed only if their
        content is new to the cache).

        ``only`` (root, rel) pairs: once an index exists, refresh just those
        files — no walk, no stat of the rest (a selection change on a large
        tree costs its own files, not the tree's). The first call, or one
        without ``only``, walks every root (after waiting for a background
        fill, which would otherwise parse the same files twice)."""
        fill = self._fill
        if only is None and fill is not None:
            fill.wait()
        with self._index_lock:
            idx = self._index
            if idx is None:
                idx = self._index = SymbolIndex(self._scan_references)
            elif only is not None:
                self._refresh_pairs(idx, only)
                return idx
            ws = self.rt.workspace
            live: set[tuple[str, str]] = set()
            idx.truncated = False
            for root, rels in indexable_files(ws, idx, MAX_INDEX_FILES):
                self._refresh(idx, root, rels, live, known=idx.keys_of(root.path), progress=progress)
            idx.retain(live)
            idx.complete = True
            return idx

    def partial_index(self, only: Sequence[tuple[Root, str]], *, submitter: Submitter = pool) -> SymbolIndex:
        """The index as it stands, with ``only`` refreshed: no walk. On a large
        tree's first build it holds just those files (``complete`` False);
        :meth:`fill_in_background` adds the rest off the request path.
        ``submitter``: where the parses go (:data:`~tooldeck.codemap.fill.IN_PROCESS`:
        this thread, for a few files, rather than starting the shared workers)."""
        with self._index_lock:
            idx = self._index
            if idx is None:
                idx = self._index = SymbolIndex(self._scan_references)
            self._refresh_pairs(idx, only, submitter)
            return idx

    def _refresh_pairs(self, idx: SymbolIndex, only: Sequence[tuple[Root, str]], submitter: Submitter = pool) -> None:
        by_root: dict[str, tuple[Root, list[str]]] = {}
        for root, rel in only:
            if language_for(rel) is not None:
                by_root.setdefault(root.path, (root, []))[1].append(rel)
        for root, rels in by_root.values():
            self._refresh(idx, root, rels, set(), known=idx.keys_for(root.path, rels), submitter=submitter)

    def fill_in_background(self, first: Gate | None = None) -> IndexFill | None:
        """Start (once) a low-priority thread that walks every root into the
        index (see :mod:`tooldeck.codemap.fill`), after ``first``; None when
        it is complete."""
        with self._index_lock:
            idx = self._index
            if idx is None:
                idx = self._index = SymbolIndex(self._scan_references)
            if idx.complete:
                return None
            if self._fill is None or self._fill.index is not idx or self._fill.failed:
                self._fill = IndexFill(self, idx, first)
                self._fill.start()
            return self._fill

    @property
    def index_complete(self) -> bool:
        return self._index is not None and self._index.complete

    def mark_complete(self, idx: SymbolIndex) -> bool:
        with self._index_lock:
            idx.complete = self._index is idx
            return idx.complete

    @property
    def filling(self) -> IndexFill | None:
        """The background fill of the current index, if one was started."""
        return self._fill if self._fill is not None and self.is_current(self._fill.index) else None

    def is_current(self, idx: SymbolIndex) -> bool:
        return self._index is idx

    def _refresh(
        self,
        idx: SymbolIndex,
        root: Root,
        rels: Sequence[str],
        live: set[tuple[str, str]],
        *,
        known: dict[str, str],
        progress: Progress | None = None,
        cas: bool = False,
        submitter: Submitter = pool,
        between: Callable[[], None] | None = None,
    ) -> None:
        """Bring ``rels`` of ``root`` up to date in ``idx``; adds the files still
        indexed to ``live``. ``cas``: change a file's record only if its key is
        still the one in ``known`` (a background fill must not overwrite what a
        fresher foreground refresh put meanwhile). ``between``: called before
        each chunk of files is read (a background fill yields there)."""
        ws = self.rt.workspace
        entries = self._entries(
            root, rels, known=known, progress=progress, prefetch=len(rels) > 1, submitter=submitter, between=between
        )
        for rel, key, entry, _reason in entries:
            if entry is None and _reason is None:  # unchanged since the last refresh
                live.add((root.path, rel))
                continue
            if entry is None or entry.skip is not None:
                if cas:
                    idx.remove_if(root.path, rel, known.get(rel))
                else:
                    idx.remove(root.path, rel)
                continue
            live.add((root.path, rel))
            record = FileRecord.from_entry(
                root.path, root.id, rel, ws.display(os.path.join(root.path, rel)), language_for(rel) or "", entry
            )
            if cas:
                idx.put_if(record, known.get(rel))
            else:
                idx.put(record)
            self._forget(key)  # the record holds what the index needs: no second copy (blob text, refs) in memory

    @property
    def cache(self) -> CodemapCache:
        if self._cache is None:
            with self._lock:
                if self._cache is None:
                    cache = CodemapCache(self.rt.store)
                    cache.prune_versions(extractor_version())
                    self._cache = cache
        return self._cache

    # internals -----------------------------------------------------------------
    def _drop_index(self) -> None:
        with self._index_lock:
            self._index = None
            if self._fill is not None:
                self._fill.stop()

    def _shown(self, cm: Codemap) -> str:
        ws = self.rt.workspace
        for root in ws.roots:
            if root.id == cm.root:
                return ws.display(os.path.join(root.path, cm.path))
        return cm.path

    def _codemap(self, root: Root, rel: str, key: str, entry: Entry) -> Codemap:
        _version, language, digest = key.split(":", 2)
        return LazyCodemap(rel, language, digest, root.id, entry)

    def _remember(self, key: str, entry: Entry) -> None:
        with self._lock:
            self._memory[key] = entry
            self._memory.move_to_end(key)
            while len(self._memory) > MEMORY_ENTRIES:
                self._memory.popitem(last=False)

    def _forget(self, key: str) -> None:
        with self._lock:
            self._memory.pop(key, None)

    def _recall(self, key: str) -> Entry | None:
        with self._lock:
            entry = self._memory.get(key)
            if entry is not None:
                self._memory.move_to_end(key)
            return entry

    def _entries(
        self,
        root: Root,
        rels: Sequence[str],
        *,
        known: dict[str, str] | None = None,
        progress: Progress | None = None,
        prefetch: bool = False,
        submitter: Submitter = pool,
        between: Callable[[], None] | None = None,
    ) -> Iterator[Result]:
        """Resolve every file to its cache entry, parsing what is missing.
        With ``known`` (rel → key from an earlier pass), files whose key is
        unchanged yield ``entry=None, reason=None`` without being decoded.
        ``prefetch`` fetches the blobs of cached files in bulk (the caller
        will read them all) instead of one by one on first use."""
        total = len(rels)
        done = 0
        in_flight: deque[tuple[list[_Item], list[tuple[list[_Item], Future[list[str]]]]]] = deque()
        for start in range(0, total, CHUNK_FILES):
            chunk = rels[start : start + CHUNK_FILES]
            if between is not None:
                between()
            early, items, misses = self._prepare(root, chunk, known, prefetch)
            yield from early
            jobs = dispatch(misses, submitter, follow=bool(in_flight and in_flight[-1][1]))
            in_flight.append((items, jobs))
            if len(in_flight) > 1:  # overlap: read the next chunk while workers parse this one
                finished = in_flight.popleft()
                yield from self._finish(root, *finished, known, submitter)
                done += len(finished[0])
            done += len(early)
            if progress is not None:
                progress(min(done, total), total)
        while in_flight:
            finished = in_flight.popleft()
            yield from self._finish(root, *finished, known, submitter)
            done += len(finished[0])
            if progress is not None:
                progress(min(done, total), total)

    def _prepare(
        self, root: Root, chunk: Sequence[str], known: dict[str, str] | None, prefetch: bool = False
    ) -> tuple[list[Result], list[_Item], list[_Item]]:
        """Stat, hash when needed, and look up the cache for one chunk."""
        early: list[Result] = []
        items: list[_Item] = []
        stats = self.cache.stats(root.path, chunk)
        for rel in chunk:
            language = language_for(rel)
            if language is None:
                early.append((rel, "", None, "no grammar"))
                continue
            item = _Item(rel, language, os.path.join(root.path, rel))
            reason = self._identify(root, item, stats.get(rel))
            if reason is not None:
                early.append((rel, "", None, reason))
                continue
            if known is not None and known.get(rel) == item.key:
                item.unchanged = True
                item.data = None
            items.append(item)
        for item in items:
            if not item.unchanged:
                item.entry = self._recall(item.key)
        wanted = [it.key for it in items if it.entry is None and not it.unchanged]
        stored = self.cache.lookup(wanted) if wanted else {}
        texts = self.cache.load_many(k for k, skip in stored.items() if skip is None) if prefetch and stored else {}
        misses: list[_Item] = []
        first_of: dict[str, _Item] = {}
        for item in items:
            if item.entry is not None or item.unchanged:
                continue
            twin = first_of.setdefault(item.key, item)
            if twin is not item:
                item.twin = twin
                continue
            if item.key in stored:
                item.entry = Entry(item.key, data=texts.get(item.key), skip=stored[item.key], loader=self.cache.load)
                self._remember(item.key, item.entry)
                continue
            if item.data is None and not self._read(item):  # not stored: says nothing about the content
                item.entry = Entry(item.key, data=encode_skip("missing or unreadable"), skip="missing or unreadable")
                continue
            reason = _unfit(item.rel, item.data or b"")
            if reason is not None:
                item.blob = encode_skip(reason)
                item.entry = Entry(item.key, data=item.blob, skip=reason)
                continue
            misses.append(item)
        return early, items, misses

    def _identify(self, root: Root, item: _Item, row: StatRow | None) -> str | None:
        """Set ``item.key`` (from the stat cache or by hashing); a reason when
        the file cannot have a codemap."""
        try:
            st = os.lstat(item.abs)
            if stat.S_ISLNK(st.st_mode):
                real = os.path.realpath(item.abs)
                if self.rt.workspace.containing_root(real) is None:
                    return "symbolic link leaving the workspace"
                item.abs = real
                st = os.stat(real)
        except OSError:
            return "missing or unreadable"
        if not stat.S_ISREG(st.st_mode):
            return "not a regular file"
        if st.st_size > MAX_FILE_BYTES:
            return f"too large ({st.st_size} bytes; limit {MAX_FILE_BYTES})"
        if row is not None and row.trusted_for(st.st_size, st.st_mtime_ns, st.st_ino):
            item.key = blob_key(item.language, row.hash)
            return None
        if not self._read(item):
            return "missing or unreadable"
        digest = content_hash(item.data or b"")
        item.key = blob_key(item.language, digest)
        item.stat_row = (root.path, item.rel, st.st_size, st.st_mtime_ns, st.st_ino, digest)
        return None

    def _read(self, item: _Item) -> bool:
        """Read the file through the safe path from its root (no link below
        the root followed, a FIFO never waited on)."""
        with self._lock:
            self.read_count += 1
        root = self.rt.workspace.containing_root(item.abs)
        if root is None:
            return False
        try:
            item.data = read_bytes(item.abs, item.rel, root=root.path).data
        except (ToolError, OSError):
            return False
        return True

    def _finish(
        self,
        root: Root,
        items: list[_Item],
        jobs: list[tuple[list[_Item], Future[list[str]]]],
        known: dict[str, str] | None,
        submitter: Submitter = pool,
    ) -> Iterator[Result]:
        for group, fut in jobs:
            try:
                blobs = fut.result()
            except Exception as exc:  # a worker died: parse this group here, and stop using workers
                log.warning("codemap worker failed (%s); parsing in process from now on", exc)
                submitter.mark_broken()
                continue
            for item, blob in zip(group, blobs, strict=True):
                item.blob = blob
                item.entry = Entry(item.key, data=blob)
            with self._lock:
                self.parse_count += len(group)
        for item in items:
            if item.unchanged:
                continue
            if item.entry is None and item.twin is not None:
                item.entry = item.twin.entry
            if item.entry is None:  # not sent to workers (small batch, or workers unavailable)
                item.blob = pool.extract_one(item.language, item.data or b"")
                item.entry = Entry(item.key, data=item.blob)
                with self._lock:
                    self.parse_count += 1
            if item.blob is not None:
                self._remember(item.key, item.entry)
            item.data = None
        new_blobs = {it.key: (it.blob, it.entry.skip) for it in items if it.blob is not None and it.entry is not None}
        new_stats = [it.stat_row for it in items if it.stat_row is not None]
        self.cache.write(new_blobs, new_stats)
        for item in items:
            entry = item.entry
            if item.unchanged or entry is None:
                yield (item.rel, item.key, None, None)
            else:
                yield (item.rel, item.key, entry, entry.skip)

    def _scan_references(self, rec: FileRecord, name: str) -> list[Reference]:
        item = _Item(rec.rel, rec.language, os.path.join(rec.root_path, rec.rel))
        if os.path.islink(item.abs):  # indexed through a link inside the workspace: read its target
            real = os.path.realpath(item.abs)
            if self.rt.workspace.containing_root(real) is None:
                return []
            item.abs = real
        if not self._read(item) or item.data is None or looks_binary(item.data):
            return []
        symbols = rec.symbols
        digest = content_hash(item.data)
        if blob_key(rec.language, digest) != rec.key:  # changed since indexed: use its current codemap
            root = next((r for r in self.rt.workspace.roots if r.path == rec.root_path), None)
            cm = self.codemap(root, rec.rel) if root is not None else None
            symbols = cm.symbols if cm is not None else []
        with self._lock:
            self.scan_count += 1
        return [
            Reference(rec.shown, line, text, enclosing, rec.root_id)
            for line, text, enclosing in scan(rec.language, item.data, name, symbols)
        ]
