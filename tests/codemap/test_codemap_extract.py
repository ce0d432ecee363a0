"""Extraction per language: every known definition of each fixture is found
with its kind, line and parent; bodies never appear in a codemap."""

from __future__ import annotations

from pathlib import Path

import pytest

from tooldeck.codemap.extract import MAX_SIGNATURE, extract
from tooldeck.codemap.languages import language_for
from tooldeck.codemap.model import Codemap
from tooldeck.codemap.render import render

FIXTURES = Path(__file__).parent.parent / "fixtures" / "codemap"

# fixture -> ["kind name line [parent]", ...]; each line number is also checked
# against the fixture text below (the named line must contain the name).
EXPECTED: dict[str, list[str]] = {
    "sample.py": [
        "export __all__ 8",
        "constant DEFAULT_PORT 10",
        "type Handler 11",
        "type Pair 12",
        "class Color 15",
        "property RED 16 Color",
        "class Server 20",
        "property timeout 23 Server",
        "method __init__ 26 Server",
        "method address 31 Server",
        "method start 34 Server",
        "class Config 40 Server",
        "function main 44",
        "function fetch 49",
        "class Greeter 53",
        "method greet 54 Greeter",
    ],
    "sample.js": [
        "variable lodash 3",
        "constant MAX_ITEMS 5",
        "class Shape 9",
        "property count 10 Shape",
        "method constructor 13 Shape",
        "method area 18 Shape",
        "method label 22 Shape",
        "method create 26 Shape",
        "function makeShape 31",
        "function loadAll 36",
        "function square 40",
        "function ids 42",
        "export ids 46",
    ],
    "sample.ts": [
        "constant DEFAULT_TIMEOUT 5",
        "interface Repository 7",
        "property id 8 Repository",
        "method find 9 Repository",
        "type Id 13",
        "enum Status 15",
        "module Utils 26",
        "function slug 27 Utils",
        "class Service 32",
        "property items 33 Service",
        "method constructor 36 Service",
        "method validate 46 Service",
        "function createService 49",
        "function handler 53",
        "function helper 57",
    ],
    "sample.tsx": [
        "interface ButtonProps 3",
        "property onClick 5 ButtonProps",
        "type Theme 8",
        "function Button 10",
        "function App 15",
        "class Counter 20",
        "method render 23 Counter",
    ],
    "sample.go": [
        "module server 1",
        "constant DefaultPort 10",
        "constant ModeProd 14",
        "variable ErrClosed 17",
        "type Handler 19",
        "struct Server 21",
        "property Port 23 Server",
        "interface Store 26",
        "method Get 27 Store",
        "function NewServer 31",
        "method Start 37",
        "method Address 42",
    ],
    "sample.rs": [
        "constant MAX_SIZE 4",
        "constant GREETING 5",
        "type Result 7",
        "struct Config 10",
        "property retries 12 Config",
        "enum Shape 15",
        "trait Drawable 20",
        "method draw 21 Drawable",
        "impl Config 27",
        "method new 28 Config",
        "impl Shape 38",
        "module util 44",
        "function helper 45 util",
        "macro square 50",
        "function run 54",
    ],
    "Sample.java": [
        "module com.example.app 1",
        "class Sample 8",
        "constant MAX_USERS 9 Sample",
        "property name 10 Sample",
        "method Sample 12 Sample",
        "method run 18 Sample",
        "method findAll 21 Sample",
        "class Inner 25 Sample",
        "interface Repository 30",
        "method findById 31 Repository",
        "enum Level 35",
        "method isHigh 38 Level",
        "class Point 41",
        "interface Marker 43",
    ],
    "sample.c": [
        "constant MAX_LEN 4",
        "macro SQUARE 5",
        "type size_type 7",
        "struct Point 12",
        "property x 10 Point",
        "struct node 14",
        "property next 15 node",
        "enum color 19",
        "constant default_port 21",
        "variable global_counter 22",
        "function add 24",
        "function copy_string 26",
        "function main 32",
    ],
    "sample.cpp": [
        "module geometry 7",
        "enum Kind 11 geometry",
        "type Points 13 geometry",
        "class Shape 16 geometry",
        "method Shape 18 Shape",
        "method ~Shape 19 Shape",
        "method area 20 Shape",
        "method name 21 Shape",
        "property sides_ 25 Shape",
        "struct Vec2 28 geometry",
        "method length 31 Vec2",
        "function Vec2Length 34 geometry",
        "function length 41",
        "function main 45",
    ],
    "Sample.cs": [
        "module Example.App 5",
        "type Notify 7 Example.App",
        "interface IRepository 9 Example.App",
        "property Count 12 IRepository",
        "enum Status 15 Example.App",
        "struct Point 17 Example.App",
        "class Person 23 Example.App",
        "class UserService 26 Example.App",
        "constant MaxUsers 28 UserService",
        "property Name 31 UserService",
        "method UserService 33 UserService",
        "method SaveAsync 43 UserService",
        "property Changed 45 UserService",
    ],
    "sample.rb": [
        "constant MAX_RETRIES 4",
        "module Billing 6",
        "constant TAX_RATE 7 Billing",
        "class Invoice 9 Billing",
        "property total 11 Invoice",
        "property items 11 Invoice",
        "method initialize 13 Invoice",
        "method build 18 Invoice",
        "method paid? 22 Invoice",
        "method compute! 28 Invoice",
        "function helper 34",
    ],
    "sample.php": [
        "module App\\Models 3",
        "constant VERSION 8",
        "interface Shape 10",
        "method area 12 Shape",
        "trait Loggable 15",
        "enum Suit 23",
        "class User 29",
        "constant ROLE 33 User",
        "property name 34 User",
        "method __construct 37 User",
        "method validate 47 User",
        "function helper 50",
    ],
    "sample.swift": [
        "variable maxRetries 4",
        "type Completion 6",
        "interface Drawable 8",
        "method draw 10 Drawable",
        "enum Direction 13",
        "struct Point 18",
        "property y 20 Point",
        "class Shape 23",
        "property sides 25 Shape",
        "method init 27 Shape",
        "method area 35 Shape",
        "impl Shape 40",
        "method describe 41 Shape",
        "function makeShape 44",
    ],
    "sample.kt": [
        "module com.example.shapes 1",
        "constant MAX_SIDES 6",
        "type Callback 8",
        "interface Shape 10",
        "method area 12 Shape",
        "enum Color 15",
        "class Point 17",
        "class Registry 19",
        "method register 20 Registry",
        "class Circle 23",
        "property scale 25 Circle",
        "method area 27 Circle",
        "method unit 33 companion",
        "function second 37",
        "function load 39",
    ],
    "sample.sh": [
        "variable MAX_RETRIES 7",
        "variable LOG_LEVEL 8",
        "variable DEFAULT_DIR 9",
        "function log 11",
        "function retry 15",
        "function main 23",
    ],
    "sample.scala": [
        "module com.example.shapes 1",
        "trait Shape 6",
        "method area 7 Shape",
        "class Point 11",
        "class Animal 13",
        "class Geometry 15",
        "property Pi 16 Geometry",
        "type Matrix 17 Geometry",
        "method distance 19 Geometry",
        "class Circle 25",
        "method name 31 Circle",
        "enum Color 34",
        "function topLevel 37",
    ],
    "sample.ml": [
        "constant max_size 4",
        "type color 6",
        "type point 8",
        "type Not_ready 10",
        "interface SHAPE 12",
        "module Circle 16",
        "constant pi 17 Circle",
        "function area 19 Circle",
        "function fib 24",
        "function distance 26",
        "class counter 29",
        "method incr 31 counter",
    ],
    "sample.mli": [
        "type t 3",
        "type shape 5",
        "function create 9",
        "module Config 13",
        "function default 14 Config",
        "interface PRINTABLE 17",
    ],
}

IMPORTS: dict[str, list[str]] = {
    "sample.py": ["os", "collections.abc.Iterator", ".models.{User, Group}"],
    "sample.js": ["fs", "node:path", "lodash"],
    "sample.ts": ["fs/promises", "./config", "path"],
    "sample.tsx": ["react"],
    "sample.go": ["fmt", "net/http", "os"],
    "sample.rs": ["std::collections::HashMap"],
    "Sample.java": ["java.util.List", "java.util.concurrent.*"],
    "sample.c": ["stdio.h", "config.h"],
    "sample.cpp": ["string", "widget.hpp"],
    "Sample.cs": ["System", "System.Collections.Generic"],
    "sample.rb": ["json", "models/user"],
    "sample.php": ["App\\Contracts\\Repository"],
    "sample.swift": ["Foundation", "UIKit"],
    "sample.kt": ["kotlin.math.PI", "java.util.*"],
    "sample.sh": ["./lib/common.sh"],
    "sample.scala": ["scala.collection.mutable"],
    "sample.ml": ["Printf", "Core.Std"],
    "sample.mli": ["Types"],
}

BODY_MARKERS = ("BODY-ONLY", "hidden_body_marker", "hiddenBodyMarker", "inner_helper", "innerHelper")


def _codemap(name: str) -> tuple[Codemap, str]:
    path = FIXTURES / name
    language = language_for(name)
    assert language is not None, name
    payload = extract(language, path.read_bytes())
    cm = Codemap(name, language, payload.imports, payload.symbols, payload.references, "", payload.lines)
    return cm, path.read_text(encoding="utf-8")


def test_every_language_has_a_fixture():
    languages = {language_for(name) for name in EXPECTED}
    assert languages >= {
        "python",
        "javascript",
        "typescript",
        "tsx",
        "go",
        "rust",
        "java",
        "c",
        "cpp",
        "csharp",
        "ruby",
        "php",
        "swift",
        "kotlin",
        "bash",
        "scala",
        "ocaml",
    }


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_known_definitions_with_kind_line_and_parent(name: str):
    cm, source = _codemap(name)
    lines = source.splitlines()
    found = {(s.kind, s.name, s.line, s.parent) for s in cm.symbols}
    for spec in EXPECTED[name]:
        kind, sym, line, *parent = spec.split(" ")
        # the expectation itself is checked against the fixture text
        assert sym.split(".")[-1].split("\\")[-1].lstrip("~") in lines[int(line) - 1], (name, spec)
        assert (kind, sym, int(line), parent[0] if parent else None) in found, (
            f"{name}: {spec} not in {sorted(found, key=lambda f: f[2])}"
        )


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_imports(name: str):
    cm, _ = _codemap(name)
    for imp in IMPORTS[name]:
        assert imp in cm.imports, (name, cm.imports)


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if not n.endswith(".mli")))  # .mli: no bodies
def test_no_body_text_in_a_codemap(name: str):
    cm, source = _codemap(name)
    assert any(marker in source for marker in BODY_MARKERS), "fixture must contain a body marker"
    text = render(cm)
    for marker in BODY_MARKERS:
        assert marker not in text, f"{name}: body text {marker!r} leaked into\n{text}"
    assert all(s.name not in ("inner_helper", "innerHelper", "hidden_body_marker") for s in cm.symbols)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_line_of_the_render_points_at_its_definition(name: str):
    cm, source = _codemap(name)
    lines = source.splitlines()
    for sym in cm.symbols:
        assert 1 <= sym.line <= len(lines)
        assert sym.line <= max(sym.end_line, sym.line)
        assert "\n" not in sym.signature and len(sym.signature) <= 240


def test_references_exclude_comments_and_strings():
    cm, _ = _codemap("sample.py")
    assert {"Base", "DEFAULT_PORT", "Server", "Iterator"} <= cm.references
    assert "BODY" not in cm.references  # only inside a string
    assert "small" not in cm.references  # only inside the module docstring


def test_signatures_read_like_the_source():
    cm, _ = _codemap("sample.py")
    by_name = {s.name: s for s in cm.symbols}
    # a method's self is left out (the indentation says it is a method)
    assert by_name["__init__"].signature == "def __init__(host: str, port: int = DEFAULT_PORT) -> None"
    assert by_name["address"].signature == "@property def address() -> str"
    assert by_name["DEFAULT_PORT"].signature == "DEFAULT_PORT = 8080"
    assert by_name["timeout"].signature == "timeout: float"
    go, _ = _codemap("sample.go")
    assert {s.name: s.signature for s in go.symbols}["Start"] == "func (s *Server) Start() error"
    c, _ = _codemap("sample.c")
    assert {s.name: s.signature for s in c.symbols}["Point"] == "typedef struct point {…} Point"


def test_long_values_are_cut_on_the_first_line():
    payload = extract("python", b"TABLE = {\n    'a': 1,\n    'b': 2,\n}\nNAME = '" + b"x" * 300 + b"'\n")
    sigs = {s.name: s.signature for s in payload.symbols}
    assert sigs["TABLE"] == "TABLE = {…"
    assert len(sigs["NAME"]) <= 100 and sigs["NAME"].endswith("…")


def test_broken_source_still_yields_what_parses():
    payload = extract("python", b"def ok(a):\n    return a\n\ndef broken(:\n    pass\n\nclass After:\n    pass\n")
    names = {s.name for s in payload.symbols}
    assert "ok" in names and "After" in names


def test_empty_file():
    payload = extract("python", b"")
    assert payload.symbols == [] and payload.imports == [] and payload.lines == 0


def test_private_members_and_dunders_fold_into_one_line_each():
    src = (
        b"class Store:\n"
        b"    __slots__ = ('_items',)\n"
        b"    _cache: dict = {}\n"
        b"    def __init__(self, items: list) -> None:\n        self._items = items\n"
        b"    def __repr__(self) -> str:\n        return 'Store'\n"
        b"    def _load(self, key: str) -> bytes:\n        return b''\n"
        b"    def get(self, key: str) -> bytes:\n        return self._load(key)\n"
        b"    def __eq__(self, other: object) -> bool:\n        return False\n"
        b"    def __iter__(self):\n        return iter(self._items)\n"
        b"    def __len__(self) -> int:\n        return 0\n"
        b"def _module_helper() -> None:\n    pass\n"
    )
    payload = extract("python", src)
    cm = Codemap("store.py", "python", payload.imports, payload.symbols, payload.references, "", payload.lines)
    # private names are counted on the first line; protocol dunders listed by bare name,
    # the ones nearly every class has (__repr__, __eq__, __slots__) left out
    assert render(cm).splitlines() == [
        "store.py  (+3 private)",
        "1 class Store",
        "4\t__init__(items:list)->None",
        "10\tget(key:str)->bytes",
        "\tdunder: iter len",
    ]
    # folding is only a rendering choice: every member stays a symbol
    assert {s.name for s in cm.symbols} >= {"__slots__", "_cache", "_load", "__repr__", "__eq__", "_module_helper"}


def test_many_decorators_never_crowd_out_the_name():
    """A dozen long decorators once filled the 160-character signature cut and
    the ``def`` line (the name) was lost; the prefix is now cut on its own."""
    decorators = b"".join(b"@pytest.mark.parametrize_some_long_decorator_%d('arg')\n" % i for i in range(12))
    src = decorators + b"def test_the_thing(alpha: int, beta: str = 'x') -> None:\n    pass\n"
    sym = next(s for s in extract("python", src).symbols if s.name == "test_the_thing")
    assert "def test_the_thing(alpha: int, beta: str = 'x') -> None" in sym.signature
    assert sym.line == 13
    assert sym.signature.startswith("@pytest.mark.parametrize_some")
    assert len(sym.signature) < 160
    # and with a signature long enough to be cut itself: the def line and the name stay
    params = ", ".join(f"parameter_{i}: dict[str, list[int]] | None = None" for i in range(8))
    src = decorators + f"def test_another_thing({params}) -> None:\n    pass\n".encode()
    payload = extract("python", src)
    cm = Codemap("t.py", "python", payload.imports, payload.symbols, payload.references, "", payload.lines)
    line = render(cm).splitlines()[1]
    assert line.startswith("13 @pytest.mark.parametrize_some") and "test_another_thing(parameter_0:" in line
    assert line.endswith("parameter_7:dict[str,list[int]]|None=None)->None")


def test_a_long_signature_is_kept_whole():
    """Long type annotations are the signature: a 600-character header is kept
    (the bench checks every public definition's whole signature)."""
    args = ", ".join(f"argument_{i}: int = {i}" for i in range(20))
    src = f"def f_{'x' * 180}({args}) -> None:\n    pass\n".encode()
    sym = extract("python", src).symbols[0]
    assert sym.name == "f_" + "x" * 180
    assert sym.signature == f"def f_{'x' * 180}({args}) -> None"


def test_a_pathological_signature_is_cut_after_the_name():
    args = ", ".join(f"argument_{i}: int = {i}" for i in range(MAX_SIGNATURE // 20))
    src = f"def f_{'x' * 180}({args}):\n    pass\n".encode()
    sym = extract("python", src).symbols[0]
    assert sym.name in sym.signature and sym.signature.endswith("…") and len(sym.signature) <= MAX_SIGNATURE


def test_a_private_class_folds_with_its_members_and_public_ones_stay():
    src = (
        b"import os\n"
        b"class _Impl:\n    def run(self) -> None:\n        pass\n"
        b"_CACHE = {}\n"
        b"class Public:\n    def go(self, n: int) -> int:\n        return n\n"
    )
    payload = extract("python", src)
    cm = Codemap("m.py", "python", payload.imports, payload.symbols, payload.references, "", payload.lines)
    # _Impl and _CACHE are counted; _Impl.run is not (a private class's members are not listed)
    assert render(cm).splitlines() == [
        "m.py  (+2 private)",
        "6 class Public",
        "7\tgo(n:int)->int",
    ]


def test_imports_stay_in_the_payload_not_in_the_text():
    src = "".join(f"import mod{i}\n" for i in range(30)).encode() + b"def f() -> None:\n    pass\n"
    payload = extract("python", src)
    cm = Codemap("m.py", "python", payload.imports, payload.symbols, payload.references, "", payload.lines)
    assert payload.imports[:2] == ["mod0", "mod1"] and len(payload.imports) == 30
    assert render(cm).splitlines() == ["m.py", "31 f()->None"]


def test_a_one_element_tuple_default_keeps_its_comma():
    src = b"def make(\n    name,\n    bases=(object,),\n    body=None,\n):\n    pass\n"
    sym = extract("python", src).symbols[0]
    assert sym.signature == "def make(name, bases=(object,), body=None)"


def test_a_class_field_shows_its_type_and_a_function_value_its_parameters():
    src = (
        b"class A {\n  private onClick = (e: MouseEvent) => {\n    return 1;\n  };\n"
        b"  count = 3;\n  pair = (1, 2);\n  name: string = 'x';\n}\n"
    )
    p = extract("typescript", src)
    shown = render(Codemap("a.ts", "typescript", p.imports, p.symbols, p.references, "", p.lines))
    assert shown.splitlines() == [
        "a.ts",
        "1 class A",
        "2\tprivate onClick=(e:MouseEvent)=>{…",
        "5\tcount",
        "6\tpair",
        "7\tname:string",
    ]
