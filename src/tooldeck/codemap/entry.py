"""Cache entries: the stored form of a payload, and codemaps read from it lazily.

A blob is JSON: ``{"i": imports, "s": [[name, kind, signature, line, parent,
end_line, depth], ...], "r": "sorted space-separated references", "n": lines}``,
or ``{"x": reason}`` for a file that has no codemap (binary, minified...).

Warm passes touch thousands of entries whose content nobody reads (the next
page of a listing, an index refresh of unchanged files), so an :class:`Entry`
fetches its blob from the store and decodes it only when an attribute is
read, and a :class:`LazyCodemap` reads its entry only when its content is.
Entries are shared through the service's memory cache: treat what they return
as read-only.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from tooldeck.codemap.blob import encode_rows as encode_rows
from tooldeck.codemap.blob import encode_skip as encode_skip
from tooldeck.codemap.model import Codemap, Payload, Symbol

log = logging.getLogger("tooldeck.codemap")
_UNSET: Any = object()
Decoded = tuple[list[str], list[Symbol], str, int]
_EMPTY: Decoded = ([], [], "", 0)


def encode(payload: Payload) -> str:
    symbols = [[s.name, s.kind, s.signature, s.line, s.parent, s.end_line, s.depth] for s in payload.symbols]
    return encode_rows(payload.imports, symbols, payload.refs, payload.lines)


class Entry:
    """One cache blob, fetched (``loader``) and decoded on first use."""

    __slots__ = ("_decoded", "_loader", "_skip", "data", "key")

    def __init__(
        self,
        key: str,
        *,
        data: str | None = None,
        skip: str | None = _UNSET,
        loader: Callable[[str], str | None] | None = None,
    ) -> None:
        self.key = key
        self.data = data
        self._skip = skip
        self._loader = loader
        self._decoded: Decoded | None = None

    def _text(self) -> str:
        if self.data is None:
            text = self._loader(self.key) if self._loader is not None else None
            if text is None:  # removed meanwhile (another tooldeck version pruned it): parsed again next pass
                log.warning("codemap cache entry %s vanished; showing it empty this once", self.key)
                text = '{"i":[],"s":[],"r":"","n":0}'
            self.data = text
        return self.data

    @property
    def skip(self) -> str | None:
        """Why this file has no codemap (binary, minified...), or None."""
        if self._skip is _UNSET:
            text = self._text()
            self._skip = str(json.loads(text)["x"]) if text.startswith('{"x"') else None
        return self._skip  # type: ignore[no-any-return]

    def _decode(self) -> Decoded:
        if self._decoded is None:
            raw: dict[str, Any] = json.loads(self._text())
            if "x" in raw:
                self._decoded = _EMPTY
                self._skip = str(raw["x"])
            else:
                self._decoded = (raw["i"], [Symbol(*row) for row in raw["s"]], raw["r"], raw["n"])
                self._skip = None
            self.data = None  # decoded: the text would be a second copy (reloaded by the loader if ever needed)
        return self._decoded

    def index_fields(self) -> tuple[list[list[Any]], str]:
        """(symbol rows, references) for the symbol index, without making
        :class:`Symbol` objects: a tree's first index decodes every blob once,
        and half a million Symbols cost ~2 s of CPU only to be packed again."""
        if self._decoded is not None:
            _imports, syms, refs, _lines = self._decoded
            return [[s.name, s.kind, s.signature, s.line, s.parent, s.end_line, s.depth] for s in syms], refs
        raw: dict[str, Any] = json.loads(self._text())
        if "x" in raw:
            return [], ""
        return raw["s"], raw["r"]

    @property
    def imports(self) -> list[str]:
        return self._decode()[0]

    @property
    def symbols(self) -> list[Symbol]:
        return self._decode()[1]

    @property
    def refs(self) -> str:
        """The references as one sorted, space-separated string."""
        return self._decode()[2]

    @property
    def lines(self) -> int:
        return self._decode()[3]


class LazyCodemap(Codemap):
    """A :class:`Codemap` whose content comes from its cache entry when first read."""

    def __init__(self, path: str, language: str, content_hash: str, root: str, entry: Entry) -> None:
        self.path = path
        self.language = language
        self.content_hash = content_hash
        self.root = root
        self._entry = entry
        self._own: dict[str, Any] = {}

    def _get(self, name: str) -> Any:
        value = self._own.get(name)
        if value is None:
            e = self._entry
            if name == "imports":
                value = list(e.imports)
            elif name == "symbols":
                value = list(e.symbols)
            else:
                value = set(e.refs.split()) if e.refs else set()
            self._own[name] = value
        return value

    @property  # type: ignore[override]
    def imports(self) -> list[str]:
        return self._get("imports")  # type: ignore[no-any-return]

    @imports.setter
    def imports(self, value: list[str]) -> None:
        self._own["imports"] = value

    @property  # type: ignore[override]
    def symbols(self) -> list[Symbol]:
        return self._get("symbols")  # type: ignore[no-any-return]

    @symbols.setter
    def symbols(self, value: list[Symbol]) -> None:
        self._own["symbols"] = value

    @property  # type: ignore[override]
    def references(self) -> set[str]:
        return self._get("references")  # type: ignore[no-any-return]

    @references.setter
    def references(self, value: set[str]) -> None:
        self._own["references"] = value

    @property  # type: ignore[override]
    def lines(self) -> int:
        return self._entry.lines

    @lines.setter
    def lines(self, value: int) -> None:  # pragma: no cover - dataclass compatibility
        raise AttributeError("lines is read from the cache entry")
