"""The symbol index's name → definers map, kept up to date a record at a time.

Until issue 35 the index dropped this map at every change and rebuilt it
from every record at the next query. That was right for a settled index,
but a large tree's background fill puts records all the time, and a build
made meanwhile (a user's second question) rebuilt the map several times:
on a 12,800-file tree 36 rebuilds in 5 builds took 3.4 s of the builds'
4.2 s of CPU, where parsing their files took 0.1 s.

Now the changes are queued and applied a few hundred at a time by the thread
making them (the fill's, off the request path), the rest at the next query:
a record's names are inserted in display order (``bisect`` by its shown
path), a replaced or removed record's names are taken out. The map is built
whole only at its first query, or when more records changed since the last
than half of those indexed, and either way it is the same map.

Most names have one definer; it is kept bare, not in a list (a list per name
of a 13k-file tree cost ~15 MB). A file defining a name twice is listed once
per definition, as its symbols are.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Iterable
from typing import Generic, Protocol, TypeVar


class Record(Protocol):
    """What the map reads of an index record (:class:`~tooldeck.codemap.index.FileRecord`)."""

    @property
    def shown(self) -> str: ...

    @property
    def names(self) -> tuple[str, ...]: ...


R = TypeVar("R", bound=Record)
Definers = R | list[R]

APPLY_EVERY = 256  # queued changes applied at once by the thread that makes them


def _shown(rec: Record) -> str:
    return rec.shown


class DefinersMap(Generic[R]):
    """name → its definer, or definers in display order. Not thread-safe:
    the index calls it under its own lock, and the dict :meth:`current`
    returns is changed in place by later changes: read it under that lock."""

    def __init__(self) -> None:
        self._map: dict[str, Definers[R]] | None = None
        self._changes: list[tuple[R | None, R | None]] = []  # (old, new) since the map

    def changed(self, old: R | None, new: R | None) -> None:
        """A record replaced (``old`` → ``new``), added (no ``old``) or
        removed (no ``new``). Applied :data:`APPLY_EVERY` at a time by the
        thread making the changes (a background fill's, mostly), so a
        query finds few left to apply."""
        if self._map is not None and old is not new:
            self._changes.append((old, new))
            if len(self._changes) >= APPLY_EVERY:
                self._apply()

    def current(self, records: Iterable[R], count: int) -> dict[str, Definers[R]]:
        """The map for ``records`` (``count`` of them): the queued changes
        applied, or rebuilt when that is cheaper."""
        if self._map is None or len(self._changes) * 2 > count:
            self._map = _built(records)
            self._changes.clear()
        else:
            self._apply()
        return self._map

    def _apply(self) -> None:
        for old, new in self._changes:
            if old is not None:
                self._take_out(old)
            if new is not None:
                self._put_in(new)
        self._changes.clear()

    def _put_in(self, rec: R) -> None:
        m = self._map
        assert m is not None
        for name in rec.names:
            found = m.get(name)
            if found is None:
                m[name] = rec
            elif isinstance(found, list):
                insort(found, rec, key=_shown)
            else:
                pair = [found]
                insort(pair, rec, key=_shown)
                m[name] = pair

    def _take_out(self, rec: R) -> None:
        m = self._map
        assert m is not None
        for name in set(rec.names):
            found = m.get(name)
            if found is rec:
                del m[name]
            elif isinstance(found, list):
                kept = [r for r in found if r is not rec]
                if not kept:
                    del m[name]
                elif len(kept) != len(found):
                    m[name] = kept if len(kept) > 1 else kept[0]


def _built(records: Iterable[R]) -> dict[str, Definers[R]]:
    lists: dict[str, list[R]] = {}
    for rec in sorted(records, key=_shown):
        for name in rec.names:
            lists.setdefault(name, []).append(rec)
    return {name: recs[0] if len(recs) == 1 else recs for name, recs in lists.items()}


def as_tuple(found: Definers[R] | None) -> tuple[R, ...]:
    if found is None:
        return ()
    return tuple(found) if isinstance(found, list) else (found,)
