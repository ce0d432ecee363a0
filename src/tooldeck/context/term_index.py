"""Term counts for the content signal from an index, instead of a ripgrep pass per build.

Once the walk stopped costing a warm build a third of a second (see
:mod:`tooldeck.context.universe`), the ripgrep pass that counts the task's
words in every file was its longest wait: 0.6 s of CPU over a 12,800-file
tree, on a 2-core machine half of the build's wall time. The counts it gives
(how often each word occurs, whole-word and ASCII case-insensitive, in each
file) are what a full-text index stores, so SQLite's FTS5 (in the standard
library) keeps them: an ``ascii`` tokenizer with ``_`` as a word character
splits text exactly where ``rg --word-regexp --no-unicode`` puts word
boundaries, and its ``fts5vocab`` instance table yields, per file, how often
each asked word occurs. A query of a dozen words takes 20-80 ms.

The index lives in its own database in the state directory (bulk inserts never
hold the main store's write lock; its tables and queries are
:mod:`tooldeck.state.terms`) and is *contentless*: the texts are not kept a
second time. A file that changes gets a new document; the old one is left
behind as a tombstone that no query maps back to a file, and when tombstones
outnumber live documents the index is emptied and refilled. Processes sharing
a state directory (a server and a ``tooldeck call``) take document numbers
from the database inside their write transaction, and one that empties the
index moves an epoch the others check before each build (then re-read it).

It is kept up to date from the walks the builder already makes: the first walk
of a set of roots fills it in a background thread (builds meanwhile count with
ripgrep, as before); every later walk names the files that changed, which are
re-read before the query. A file is re-indexed only when its bytes differ
(BLAKE2 digest), so a link reported at every walk costs one refused open.

What it reads is what ripgrep searches
(:func:`~tooldeck.workspace.ripgrep.searchable_bytes`: regular files, a link
not followed, at most 2 MiB, no NUL byte in the first 8 KiB), and a word's
count is capped per file as ripgrep's is
(:data:`~tooldeck.workspace.ripgrep.MAX_PER_FILE`): the two give the same
counts.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tooldeck.context.memory import release_freed_memory
from tooldeck.context.query import Query
from tooldeck.context.retrieve import ContentSearch, FileInfo, content_terms, start_content
from tooldeck.context.universe import RACY_NS, Stamp, Walked
from tooldeck.core.foreground import yield_to_requests
from tooldeck.state import terms as term_db
from tooldeck.state.terms import TermTables
from tooldeck.workspace.ripgrep import MAX_PER_FILE, count_terms_in, searchable_bytes
from tooldeck.workspace.roots import Workspace

BATCH = 256  # files per write transaction while filling
FIRST_WAIT = 20.0  # seconds the symbol index's fill waits for this one at most (:meth:`TermIndex.after_fill`)
REFILL_MIN_DEAD = 2_000  # tombstones tolerated before the index is emptied and refilled

_WORD = re.compile(r"[A-Za-z0-9_]+")  # a token of the index (the ascii tokenizer, ``_`` a word character)

# every byte of a multi-byte character becomes a space: ripgrep's --no-unicode word boundaries
# see a non-ASCII byte as a non-word character, where the ascii tokenizer would keep it in a token
_ASCII_ONLY = bytes(range(128)) + b" " * 128


@dataclass(slots=True)
class _Row:
    doc: int | None
    size: int
    mtime_ns: int
    indexed_ns: int
    digest: bytes | None


@dataclass(slots=True)
class _Batch:
    """Rows of a write transaction waiting to be inserted, a group per statement
    (:mod:`tooldeck.state.terms`); flushed every :data:`BATCH` files."""

    dead: list[int] = field(default_factory=list)
    texts: list[tuple[int, str]] = field(default_factory=list)
    files: list[term_db.FileRow] = field(default_factory=list)

    def flush(self, db: sqlite3.Connection) -> None:
        term_db.bury(db, self.dead)
        term_db.put_texts(db, self.texts)
        term_db.put_files(db, self.files)
        self.dead, self.texts, self.files = [], [], []


class Counted:
    """Per-file counts already known: the same ``result()`` as a running
    :class:`~tooldeck.workspace.ripgrep.TermSearch`."""

    def __init__(self, hits: dict[str, Counter[str]]) -> None:
        self._hits = hits

    def result(self) -> dict[str, Counter[str]]:
        return self._hits


class TermIndex:
    """The term index of one state directory, for one builder's walks."""

    def __init__(self, state_dir: Path) -> None:
        self._state_dir = state_dir
        self._tables: TermTables | None = None
        self._rows: dict[str, _Row] = {}
        self._next_doc = 1  # read from term_seq in each write transaction
        self._epoch = 0
        self._dead = 0
        self._lock = threading.Lock()  # one writer: the filling thread or a build
        self._roots: tuple[tuple[str, str], ...] | None = None  # the roots the index is complete for
        self._filling: threading.Thread | None = None
        self._pending: set[tuple[str, str]] = set()  # (root id, rel) changed while filling
        self._generation = 0  # bumped by each fill: a stale one stops
        self._failed: tuple[tuple[str, str], ...] | None = None  # roots whose fill failed: not retried
        self._state = threading.RLock()  # the fields above, for builds running at once
        self._urgent = threading.Event()  # someone waits for the fill: it no longer yields to builds

    def search(self, ws: Workspace, walked: Walked, query: Query, started: ContentSearch | None) -> ContentSearch:
        """The term counts of ``query`` from the index when it is up to date
        for this walk (and ripgrep was not ``started``), else ripgrep's. The
        index failing (a full disk...) costs only its speed."""
        try:
            if self.refresh(ws, walked) and started is None:
                return self.counts(ws, walked.files, content_terms(query))
        except Exception:
            pass
        return started if started is not None else start_content(ws, query)

    # keeping up to date -----------------------------------------------------------------
    def refresh(self, ws: Workspace, walked: Walked) -> bool:
        """Bring the index up to date with ``walked``; True when it can answer
        for this walk now. The first walk of these roots asks for the fill,
        run in the background once the build is done (:meth:`start_fill`;
        the build that walked counts with ripgrep, which it started before
        the walk), and answers False until it is done."""
        roots = tuple((r.id, r.path) for r in ws.roots)
        with self._state:  # two builds may run at once
            filling = self._is_filling()
            if walked.changed is None or (self._roots != roots and not filling):
                if roots == self._failed:
                    return False  # the fill failed for these roots (a full disk...): ripgrep it is
                return self._start_fill(ws, walked, roots)
            if filling:
                self._pending.update((r.id, rel) for r, rel in walked.changed)
                return False
            changed = {(r.id, rel) for r, rel in walked.changed} | self._pending
            self._pending.clear()
            if changed:
                by_key = {(f.root_id, f.rel): f for f in walked.files}
                found = {k: by_key.get(k) for k in changed}
                gone = [k for k, f in found.items() if f is None]
                # re-read even when the stamp is unchanged: the walk's watch saw a write
                self._index_files(ws, [f for f in found.values() if f is not None], walked, gone, force=True)
            if self._too_many_tombstones() or self._emptied_elsewhere():
                return self._start_fill(ws, walked, roots)  # the fill empties (or re-reads) the index first
            return True

    def ready_for(self, ws: Workspace) -> bool:
        """Whether the index was complete for these roots at the last walk (a
        build then need not start ripgrep before its walk)."""
        with self._state:
            return not self._is_filling() and self._roots == tuple((r.id, r.path) for r in ws.roots)

    def wait(self, timeout: float | None = None) -> None:
        """Wait for a background fill (benchmarks and tests); it stops yielding to builds."""
        self._urgent.set()
        self.start_fill()
        if self._filling is not None:
            self._filling.join(timeout)

    def after_fill(self, give_up: Callable[[], bool], limit: float = FIRST_WAIT) -> None:
        """Return once no fill of this index is asked for or running (or
        ``give_up()`` says so, or after ``limit`` seconds). The symbol
        index's background fill waits here before its first file.

        Why: a build made during the fills counts its words with ripgrep
        until this index is complete (0.3 s of wall time and 0.4 s of CPU
        on a 12,800-file tree, half of such a build), and this fill takes
        3.4 s alone but 5-6 s beside the symbol fill's thread and workers.
        Run first, it is done before a user's third question; the symbol
        fill (10 s) ends ~3 s later, and builds meanwhile parse their own
        best candidates as before."""
        end = time.monotonic() + limit
        while not give_up() and time.monotonic() < end:
            with self._state:
                thread = self._filling if self._is_filling() else None
            if thread is None:
                return
            if thread.ident is None:  # asked for by the first build's walk, started when it ends
                time.sleep(0.05)
            else:
                thread.join(0.05)

    def start_fill(self) -> None:
        """Start the fill a walk asked for. The builder calls it when its
        build is done: a fill beside the first build took it 1.2 s longer
        (the two share the GIL and the cores)."""
        with self._state:
            if self._filling is not None and self._filling.ident is None:
                self._filling.start()

    def _too_many_tombstones(self) -> bool:
        return self._dead > max(REFILL_MIN_DEAD, len(self._rows))

    def _is_filling(self) -> bool:
        """A fill asked for and not finished (maybe not started yet)."""
        return self._filling is not None and (self._filling.ident is None or self._filling.is_alive())

    def _start_fill(self, ws: Workspace, walked: Walked, roots: tuple[tuple[str, str], ...]) -> bool:
        self._roots = None
        self._pending.clear()
        self._generation += 1  # a fill still running for other roots stops at its next batch
        files = list(walked.files)
        self._filling = threading.Thread(
            target=self._fill,
            args=(ws, files, walked, roots, self._generation),
            name="tooldeck-term-index",
            daemon=True,
        )
        return False

    def _fill(
        self, ws: Workspace, files: list[FileInfo], walked: Walked, roots: tuple[tuple[str, str], ...], gen: int
    ) -> None:
        try:
            tables = self._open()
            if self._emptied_elsewhere():
                self._load(tables)
            if self._too_many_tombstones():
                self._empty(tables)
            for i in range(0, len(files), BATCH):
                yield_to_requests(self._urgent.is_set)  # a build in flight first: GIL and cores
                if gen != self._generation:
                    return
                self._index_files(ws, files[i : i + BATCH], walked)
            if gen == self._generation:
                self._roots = roots
            release_freed_memory()  # the fill read every file once: hand the freed heap back
        except Exception:  # a broken index leaves the builds on ripgrep, never breaks one
            self._roots = None
            self._failed = roots

    def _index_files(
        self,
        ws: Workspace,
        files: Iterable[FileInfo],
        walked: Walked,
        gone_keys: Iterable[tuple[str, str]] = (),
        *,
        force: bool = False,
    ) -> None:
        """(Re-)index ``files`` (unless their stored stamp is trusted and not
        ``force``); forget ``gone_keys``. A file's document changes only when
        its bytes do."""
        tables = self._open()
        root_paths = {r.id: r.path for r in ws.roots}
        now = time.time_ns()
        batch = _Batch()
        with self._lock, tables.write() as db:
            self._next_doc = term_db.next_doc(db)
            for root_id, rel in gone_keys:
                path = f"{root_paths.get(root_id, '').rstrip('/')}/{rel}"
                row = self._rows.pop(path, None)
                if row is not None:
                    self._bury(batch, row.doc)
                    term_db.forget_file(db, path)
            for f in files:
                stamp = walked.stamp(f)
                row = self._rows.get(f.abs)
                if not force and row is not None and stamp is not None and _trusted(row, stamp):
                    continue
                self._index_one(batch, f, root_paths.get(f.root_id, ""), stamp or (f.size, 0), row, now)
                if len(batch.files) >= BATCH:  # a large change set (a checkout) is not held in memory whole
                    batch.flush(db)
            batch.flush(db)
            term_db.set_next_doc(db, self._next_doc)

    def _index_one(self, batch: _Batch, f: FileInfo, root_path: str, stamp: Stamp, row: _Row | None, now: int) -> None:
        data = searchable_bytes(root_path, f.abs, f.shown) if root_path else None
        digest = hashlib.blake2b(data, digest_size=16).digest() if data is not None else None
        doc = row.doc if row is not None and row.digest == digest else None
        if doc is None and data is not None:
            if row is not None:
                self._bury(batch, row.doc)
            doc = self._next_doc
            self._next_doc += 1
            batch.texts.append((doc, data.translate(_ASCII_ONLY).decode("ascii")))
        elif data is None and row is not None:
            self._bury(batch, row.doc)
        self._rows[f.abs] = _Row(doc, stamp[0], stamp[1], now, digest)
        batch.files.append((f.abs, doc, stamp[0], stamp[1], now, digest))

    def _bury(self, batch: _Batch, doc: int | None) -> None:
        if doc is not None:
            batch.dead.append(doc)
            self._dead += 1

    def _empty(self, tables: TermTables) -> None:
        with self._lock, tables.write() as db:
            self._epoch = term_db.empty(db)
            self._rows.clear()
            self._dead = 0

    def _open(self) -> TermTables:
        if self._tables is None:
            tables = TermTables(self._state_dir)
            self._load(tables)
            self._tables = tables
        return self._tables

    def _load(self, tables: TermTables) -> None:
        """The files' rows as stored (maybe by another process), and the epoch they belong to."""
        with self._lock:
            self._epoch, rows, self._dead = tables.load()
            self._rows = {path: _Row(*rest) for path, *rest in rows}

    def _emptied_elsewhere(self) -> bool:
        """Another process sharing the state directory emptied the index since it was loaded."""
        if self._tables is None:
            return False
        return self._tables.epoch() != self._epoch

    # answering --------------------------------------------------------------------------
    def counts(self, ws: Workspace, files: list[FileInfo], terms: list[str]) -> list[tuple[str, Counted]]:
        """Per root, rel → how often each term occurs (the shape of
        :func:`tooldeck.context.retrieve.start_content`'s searches). A term
        the tokenizer splits (``case-insensitive``, ``a.b``) is counted by
        reading the files that hold all its parts."""
        whole = {t.lower(): t for t in terms if _WORD.fullmatch(t)}
        split = {t: tuple(p.lower() for p in _WORD.findall(t)) for t in terms if not _WORD.fullmatch(t)}
        asked = set(whole) | {p for parts in split.values() for p in parts}
        by_doc: dict[int, FileInfo] = {}
        for f in files:
            row = self._rows.get(f.abs)
            if row is not None and row.doc is not None:
                by_doc[row.doc] = f
        per_root: dict[str, dict[str, Counter[str]]] = {}
        held: dict[int, set[str]] = {}  # doc -> the asked words it holds
        if asked:
            for doc, term, n in self._open().vocab_counts(asked):
                f = by_doc.get(doc)
                if f is None:
                    continue
                held.setdefault(doc, set()).add(term)
                if term in whole:
                    per_root.setdefault(f.root_id, {}).setdefault(f.rel, Counter())[whole[term]] = min(n, MAX_PER_FILE)
        if split:
            self._count_split(ws, split, held, by_doc, per_root)
        return [(root_id, Counted(hits)) for root_id, hits in per_root.items()]

    def _count_split(
        self,
        ws: Workspace,
        split: dict[str, tuple[str, ...]],
        held: dict[int, set[str]],
        by_doc: dict[int, FileInfo],
        per_root: dict[str, dict[str, Counter[str]]],
    ) -> None:
        """Count the split terms in the files where the index holds some
        term's parts side by side (an FTS5 phrase query: ``http.client`` is
        the tokens ``http client`` in a row wherever it occurs as a word), in
        Python. The phrase only narrows which files are read (a superset of
        those the word is in: ``http client`` matches too); the counts are
        :func:`count_terms_in`'s."""
        docs: set[int] = set()
        tables = self._open()
        for parts in split.values():
            if not parts:
                continue
            phrase = '"' + " ".join(parts) + '"'  # parts are [a-z0-9_]+: nothing to escape
            docs.update(tables.phrase_docs(phrase))
        wanted: dict[str, set[str]] = {}  # root id -> rels to read
        for doc in docs:
            f = by_doc.get(doc)
            if f is not None and doc in held:
                wanted.setdefault(f.root_id, set()).add(f.rel)
        roots = {r.id: r for r in ws.roots}
        for root_id, rels in wanted.items():
            root = roots.get(root_id)
            if root is None:
                continue
            found = count_terms_in(ws.rules(root), sorted(rels), list(split), MAX_PER_FILE)
            hits = per_root.setdefault(root_id, {})
            for rel, counts in found.items():
                hits.setdefault(rel, Counter()).update(counts)

    def close(self) -> None:
        if self._tables is not None:
            self._tables.close()


def _trusted(row: _Row, stamp: Stamp) -> bool:
    """The stored stamp still describes the file, and was old enough when
    read that a same-tick write could not hide behind it."""
    return (row.size, row.mtime_ns) == stamp and row.mtime_ns < row.indexed_ns - RACY_NS
