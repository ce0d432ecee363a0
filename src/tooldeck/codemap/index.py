"""The symbol index: definitions and references by name over the workspace.

Built from the same cached codemaps (no extra parse): each file contributes
its symbols (definitions) and its reference words. The index is kept in
memory and refreshed incrementally by the service: a file whose content key
did not change keeps its record untouched.

Finding reference *lines* needs the file's text; the service supplies a
scanner for that (``references`` only scans files whose reference words
contain the name, so it reads few files).
"""

from __future__ import annotations

import sys
import threading
import zlib
from array import array
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from tooldeck.codemap.definers import Definers, DefinersMap, as_tuple
from tooldeck.codemap.model import Definition, Reference, Symbol

if TYPE_CHECKING:
    from tooldeck.codemap.entry import Entry


class FileRecord:
    """One indexed file. Its symbols are kept packed (one tuple per field,
    names, kinds and parents interned) and made into :class:`Symbol` objects
    when read: half a million symbols of a 13k-file tree took ~185 MB as
    objects, about a third of that packed."""

    __slots__ = ("_packed", "key", "language", "refs", "rel", "root_id", "root_path", "shown")

    def __init__(
        self,
        root_path: str,
        root_id: str,
        rel: str,
        shown: str,  # how the path is shown to models (workspace display form)
        language: str,
        key: str,  # cache key: changes iff the content (or extractor) changed
        symbols: list[Symbol],
        refs: str,  # " word word ... " (padded, for substring membership tests)
    ) -> None:
        self.root_path = root_path
        self.root_id = root_id
        self.rel = rel
        self.shown = shown
        self.language = language
        self.key = key
        self.refs = refs
        self._packed = _pack(symbols)

    @classmethod
    def from_entry(cls, root_path: str, root_id: str, rel: str, shown: str, language: str, entry: Entry) -> FileRecord:
        """The record of a cache entry, packed straight from its stored rows."""
        rows, refs = entry.index_fields()
        if any(len(r) != ROW_FIELDS for r in rows):  # an older row shape: through Symbol and its defaults
            return cls(root_path, root_id, rel, shown, language, entry.key, [Symbol(*r) for r in rows], f" {refs} ")
        rec = cls.__new__(cls)
        rec.root_path, rec.root_id, rec.rel, rec.shown, rec.language = root_path, root_id, rel, shown, language
        rec.key, rec.refs = entry.key, f" {refs} "
        rec._packed = _pack_rows(rows)
        return rec

    @property
    def names(self) -> tuple[str, ...]:
        """The defined names, in symbol order (no objects made)."""
        return self._packed[0] if self._packed else ()

    @property
    def symbols(self) -> list[Symbol]:
        p = self._packed
        if not p:
            return []
        kinds, (table, codes) = _KINDS, p[4]
        return [
            Symbol(name, kinds[kind], sig, line, table[parent], end, depth)
            for name, kind, sig, line, parent, end, depth in zip(
                p[0], p[1], _split(p[2]), p[3], codes, p[5], p[6], strict=True
            )
        ]

    def definitions_of(self, name: str) -> list[Definition]:
        """Its definitions named ``name`` (made from the packed fields: no Symbol objects)."""
        p = self._packed
        if not p or name not in p[0]:
            return []
        names, kinds, lines, (table, parents), kind_of = p[0], p[1], p[3], p[4], _KINDS
        sig_text, sig_at = _text_of(p[2]), p[2][1]
        return [
            Definition(
                self.shown,
                lines[k],
                sig_text[sig_at[k] : sig_at[k + 1]],
                kind_of[kinds[k]],
                name,
                table[parents[k]],
                self.root_id,
            )
            for k, n in enumerate(names)
            if n == name
        ]

    def references_word(self, word: str) -> bool:
        # references hold identifier characters only: `paid?` (Ruby) is stored as `paid`
        core = word.strip("?!$@:#")
        return bool(core) and f" {core} " in self.refs


# names, kinds (codes into _KINDS), signatures (one string, maybe compressed, + offsets), lines,
# parents (codes into the file's own parent table, 0 = none), end lines, depths; numbers in the
# narrowest array type that holds them (2 or 1 bytes a symbol where they fit, not 8 of a tuple slot)
_Sigs = tuple[str | bytes, array]
_Parents = tuple[tuple[str | None, ...], array]
_Packed = tuple[tuple[str, ...], array, _Sigs, array, _Parents, array, array]

_KINDS: list[str] = []  # every kind seen (a few dozen): a symbol's kind is its index here
_KIND_CODE: dict[str, int] = {}
_KIND_LOCK = threading.Lock()


def _kind_codes(kinds: tuple[str, ...]) -> array:
    codes = _KIND_CODE
    if any(k not in codes for k in kinds):
        with _KIND_LOCK:
            for k in kinds:
                if k not in codes:
                    _KINDS.append(sys.intern(k))
                    codes[k] = len(_KINDS) - 1
    return _narrow([codes[k] for k in kinds])


def _parent_codes(parents: tuple[str | None, ...]) -> _Parents:
    table: dict[str | None, int] = {None: 0}
    codes = [table.setdefault(p, len(table)) for p in parents]
    return tuple(sys.intern(p) if p is not None else None for p in table), _narrow(codes)


def _narrow(values: list[int] | tuple[int, ...]) -> array:
    """``values`` as the narrowest array type that holds them all."""
    low, high = (min(values), max(values)) if values else (0, 0)
    if low >= 0:
        code = "B" if high < 1 << 8 else "H" if high < 1 << 16 else "I" if high < 1 << 32 else "q"
    else:
        code = "b" if low >= -(1 << 7) and high < 1 << 7 else "i" if low >= -(1 << 31) and high < 1 << 31 else "q"
    return array(code, values)


COMPRESS_FROM = 256  # characters: shorter signature texts are kept as they are


def _joined(texts: list[str]) -> _Sigs:
    """Many strings as one (and where each starts): one object instead of one
    per signature. Kept zlib-compressed from :data:`COMPRESS_FROM`
    characters: signatures are read only to answer ``find_symbol`` and
    similar, while a 13k-file index held 39 MB of them as text; ranking
    reads names and references, never them."""
    offsets = array("I", [0])
    total = 0
    for t in texts:
        total += len(t)
        offsets.append(total)
    text = "".join(texts)
    if len(text) < COMPRESS_FROM:
        return text, offsets
    return zlib.compress(text.encode("utf-8", "surrogatepass"), 6), offsets


def _text_of(joined: _Sigs) -> str:
    text = joined[0]
    return text if isinstance(text, str) else zlib.decompress(text).decode("utf-8", "surrogatepass")


def _split(joined: _Sigs) -> list[str]:
    text, offsets = _text_of(joined), joined[1]
    return [text[offsets[k] : offsets[k + 1]] for k in range(len(offsets) - 1)]


ROW_FIELDS = 7  # name, kind, signature, line, parent, end line, depth (the blob's row, Symbol's fields)


def _pack_rows(rows: list[list[Any]]) -> _Packed | None:
    if not rows:
        return None
    intern = sys.intern
    names, kinds, sigs, lines, parents, ends, depths = zip(*rows, strict=True)
    return (
        tuple(map(intern, names)),
        _kind_codes(kinds),
        _joined(list(sigs)),
        _narrow(lines),
        _parent_codes(parents),
        _narrow(ends),
        _narrow(depths),
    )


def _pack(symbols: list[Symbol]) -> _Packed | None:
    if not symbols:
        return None
    rows = [[s.name, s.kind, s.signature, s.line, s.parent, s.end_line, s.depth] for s in symbols]
    return _pack_rows(rows)


Scanner = Callable[[FileRecord, str], list[Reference]]


class SymbolIndex:
    def __init__(self, scanner: Scanner | None = None) -> None:
        self._files: dict[tuple[str, str], FileRecord] = {}
        # name -> the records defining it, once per definition, in display order: Definition
        # objects are made per query (one per symbol of the whole tree cost ~150 MB on 13k files)
        self._defs: DefinersMap[FileRecord] = DefinersMap()
        self._lock = threading.RLock()
        self._scanner = scanner
        self.truncated = False  # the walk stopped at the file limit
        self.version = 0  # bumped by every change of the records (lets callers skip re-checking)
        # every file of the workspace walked into it (a full refresh or a background fill
        # finished); False while only some files are in (a large tree's first build)
        self.complete = False

    # maintenance (the service calls these) ----------------------------------
    def put(self, record: FileRecord) -> None:
        with self._lock:
            key = (record.root_path, record.rel)
            self._defs.changed(self._files.get(key), record)
            self._files[key] = record
            self.version += 1

    def put_if(self, record: FileRecord, expected: str | None) -> bool:
        """Put ``record`` only if the file's current key is still ``expected``
        (None: not indexed). A background fill read the file after noting that
        key; a different key means a fresher read replaced it meanwhile."""
        with self._lock:
            current = self._files.get((record.root_path, record.rel))
            if (current.key if current is not None else None) != expected:
                return False
            self.put(record)
            return True

    def remove_if(self, root_path: str, rel: str, expected: str | None) -> bool:
        """:meth:`remove` under the same condition as :meth:`put_if`."""
        with self._lock:
            current = self._files.get((root_path, rel))
            if current is None or current.key != expected:
                return False
            self.remove(root_path, rel)
            return True

    def remove(self, root_path: str, rel: str) -> None:
        with self._lock:
            old = self._files.pop((root_path, rel), None)
            if old is not None:
                self._defs.changed(old, None)
                self.version += 1

    def keys_of(self, root_path: str) -> dict[str, str]:
        """rel → cache key of the files indexed under ``root_path``."""
        with self._lock:
            return {rel: rec.key for (rp, rel), rec in self._files.items() if rp == root_path}

    def keys_for(self, root_path: str, rels: list[str]) -> dict[str, str]:
        """rel → cache key of those of ``rels`` indexed under ``root_path``."""
        with self._lock:
            recs = ((rel, self._files.get((root_path, rel))) for rel in rels)
            return {rel: rec.key for rel, rec in recs if rec is not None}

    def retain(self, live: set[tuple[str, str]]) -> None:
        """Forget files that are no longer in the workspace."""
        with self._lock:
            dead = [k for k in self._files if k not in live]
            for k in dead:
                self._defs.changed(self._files.pop(k), None)
            if dead:
                self.version += 1

    def records(self) -> Iterator[FileRecord]:
        with self._lock:
            return iter(list(self._files.values()))

    def __len__(self) -> int:
        return len(self._files)

    # queries -----------------------------------------------------------------
    def _definitions(self) -> dict[str, Definers[FileRecord]]:
        """name → its definer, or definers in display order (once per
        definition): :class:`~tooldeck.codemap.definers.DefinersMap`."""
        with self._lock:
            return self._defs.current(self._files.values(), len(self._files))

    def _definers(self, name: str) -> tuple[FileRecord, ...]:
        with self._lock:  # a definers list is changed in place too: copied under the lock
            return as_tuple(self._definitions().get(name))

    def _named(self, name: str) -> list[Definition]:
        """The definitions of ``name``, in display order then file order."""
        out: list[Definition] = []
        last: FileRecord | None = None
        for rec in self._definers(name):
            if rec is last:  # a file defining the name twice is listed once per definition already
                continue
            last = rec
            out.extend(rec.definitions_of(name))
        return out

    def definitions(self, name: str, kind: str | None = None) -> list[Definition]:
        """Definitions named ``name`` (``Parent.name`` narrows to members of Parent)."""
        parent: str | None = None
        found = self._named(name)
        if not found and "." in name:
            parent, name = name.rsplit(".", 1)
            found = [d for d in self._named(name) if d.parent == parent]
        if kind is not None:
            found = [d for d in found if d.kind == kind]
        return list(found)

    # The map is changed in place by the thread putting records (a background fill's): a caller that
    # walks all of it does so under the index's lock, or it sees the dict change size under it.
    def names(self) -> list[str]:
        with self._lock:
            return list(self._definitions())

    def similar(self, name: str, limit: int = 10) -> list[tuple[str, int]]:
        """Defined names equal ignoring case, or containing ``name``: (name, count)."""
        low = name.lower()
        with self._lock:
            hits = [
                (n, 1 if isinstance(ds, FileRecord) else len(ds))
                for n, ds in self._definitions().items()
                if low in n.lower() or (n.lower() in low and len(n) > 2)
            ]
        hits.sort(key=lambda h: (h[0].lower() != low, len(h[0]), h[0]))
        return hits[:limit]

    def files_defining(self, name: str) -> set[str]:
        found = self._definers(name)
        if found:  # the same set definitions(name) gives, without making its Definition objects
            return {rec.shown for rec in found}
        return {d.path for d in self.definitions(name)}

    def files_defining_up_to(self, name: str, limit: int) -> set[str] | None:
        """:meth:`files_defining`, or None as soon as more than ``limit`` files
        define ``name`` (callers that skip common names need not collect them)."""
        found = self._definers(name)
        if not found:
            files = self.files_defining(name)
            return files if len(files) <= limit else None
        out: set[str] = set()
        for rec in found:
            out.add(rec.shown)
            if len(out) > limit:
                return None
        return out

    def files_referencing(self, name: str) -> set[str]:
        word = name.rsplit(".", 1)[-1]
        return {rec.shown for rec in self.records() if rec.references_word(word)}

    def referencing_records(self, name: str) -> list[FileRecord]:
        word = name.rsplit(".", 1)[-1]
        return sorted((rec for rec in self.records() if rec.references_word(word)), key=lambda r: r.shown)

    def references(self, name: str, limit: int | None = None) -> list[Reference]:
        """Lines that use ``name`` as an identifier (definitions excluded), each
        with the definition that encloses it."""
        if self._scanner is None:
            raise RuntimeError("this index has no scanner; get it from CodemapService.index()")
        word = name.rsplit(".", 1)[-1]
        out: list[Reference] = []
        for rec in self.referencing_records(word):
            out.extend(self._scanner(rec, word))
            if limit is not None and len(out) >= limit:
                break
        return out
