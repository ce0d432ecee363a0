"""Index records keep symbols packed: what they give back is what went in."""

from __future__ import annotations

from tooldeck.codemap.index import FileRecord, SymbolIndex
from tooldeck.codemap.model import Symbol

SYMS = [
    Symbol("Server", "class", "class Server:", 3, None, 40, 0),
    Symbol("start", "method", "def start(self) -> None", 5, "Server", 9, 1),
    Symbol("start", "function", "def start()", 50, None, 52, 0),
    Symbol("PORT", "constant", "PORT = 80", 1, None, 1, 0),
]


def test_symbols_round_trip_and_names_are_interned():
    rec = FileRecord("/r", "r", "a.py", "a.py", "python", "k", list(SYMS), " x ")
    assert rec.symbols == SYMS
    assert rec.names == ("Server", "start", "start", "PORT")
    other = FileRecord(
        "/r", "r", "b.py", "b.py", "python", "k2", [Symbol("".join(["Ser", "ver"]), "class", "c", 1)], ""
    )
    assert other.names[0] is rec.names[0]
    assert FileRecord("/r", "r", "c.py", "c.py", "python", "k3", [], "").symbols == []


def test_definitions_and_files_defining_agree():
    idx = SymbolIndex()
    idx.put(FileRecord("/r", "r", "b.py", "b.py", "python", "k1", list(SYMS), ""))
    idx.put(FileRecord("/r", "r", "a.py", "a.py", "python", "k2", [Symbol("start", "function", "def start(x)", 7)], ""))
    defs = idx.definitions("start")
    assert [(d.path, d.line, d.kind, d.parent) for d in defs] == [
        ("a.py", 7, "function", None),
        ("b.py", 5, "method", "Server"),
        ("b.py", 50, "function", None),
    ]
    assert idx.files_defining("start") == {"a.py", "b.py"}
    assert [d.line for d in idx.definitions("Server.start")] == [5]
    assert idx.files_defining("Server.start") == {"b.py"}
    assert idx.files_defining("missing") == set()
    assert dict(idx.similar("start")) == {"start": 3}


def test_long_signature_texts_are_kept_compressed_and_come_back_whole():
    syms = [
        Symbol(f"f{k}", "function", f"def f{k}(naïve: str = 'é\udcff', *rest: int) -> dict[str, list[int]]", k + 1)
        for k in range(40)
    ]
    rec = FileRecord("/r", "r", "long.py", "long.py", "python", "k", list(syms), "")
    assert isinstance(rec._packed[2][0], bytes)  # compressed: past COMPRESS_FROM characters
    assert rec.symbols == syms
    idx = SymbolIndex()
    idx.put(rec)
    assert [d.signature for d in idx.definitions("f7")] == [syms[7].signature]
