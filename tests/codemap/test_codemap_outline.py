"""The fast paths of extraction: the outline-only query (no walk of function
bodies) must still find every definition a reader needs, and the regex lexer
must blank exactly what the grammars call comments and strings."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from tooldeck.codemap import grammars, lexer
from tooldeck.codemap.extract import _references, extract
from tooldeck.codemap.languages import language_for

FIXTURES = Path(__file__).parent.parent / "fixtures" / "codemap"


def _names(src: bytes, language: str = "python") -> dict[str, tuple[int, str | None]]:
    return {s.name: (s.line, s.parent) for s in extract(language, src).symbols}


def test_nested_classes_keep_their_members_at_any_depth():
    src = (
        b"class A:\n"
        b"    class B:\n"
        b"        class C:\n"
        b"            class D:\n"
        b"                @staticmethod\n"
        b"                def deepest() -> int:\n"
        b"                    return 1\n"
        b"        def in_b(self) -> None:\n"
        b"            pass\n"
    )
    names = _names(src)
    assert names["deepest"] == (6, "D") and names["D"] == (4, "C") and names["in_b"] == (8, "B")


def test_definitions_in_module_and_class_level_blocks_are_found():
    src = (
        b"import sys\n"
        b"if sys.version_info >= (3, 11):\n"
        b"    def modern() -> None: ...\n"
        b"else:\n"
        b"    @decorate\n"
        b"    def legacy() -> None: ...\n"
        b"try:\n"
        b"    import fast\n"
        b"except ImportError:\n"
        b"    if True:\n"
        b"        @decorate\n"
        b"        def fallback() -> None: ...\n"
        b"class K:\n"
        b"    if sys.platform == 'win32':\n"
        b"        def on_windows(self) -> None: ...\n"
        b"    else:\n"
        b"        @property\n"
        b"        def elsewhere(self) -> int: ...\n"
    )
    names = _names(src)
    assert names["modern"] == (3, None) and names["legacy"] == (6, None)
    assert names["fallback"] == (12, None)
    assert names["on_windows"] == (15, "K") and names["elsewhere"] == (18, "K")
    assert "fast" in extract("python", src).imports


def test_nothing_from_function_bodies():
    src = (
        b"def outer(x):\n"
        b"    class Local:\n"
        b"        def method(self): ...\n"
        b"    if x:\n"
        b"        def inner(): ...\n"
        b"    return Local\n"
        b"class C:\n"
        b"    def m(self):\n"
        b"        class InMethod:\n"
        b"            pass\n"
    )
    assert set(_names(src)) == {"outer", "C", "m"}


def test_go_and_rust_containers():
    rust = (
        b"mod outer {\n    mod inner {\n        impl Thing {\n"
        b"            pub fn go(&self) -> u8 { 1 }\n        }\n    }\n}\n"
    )
    names = _names(rust, "rust")
    assert names["go"][0] == 4 and names["inner"][1] == "outer"


@pytest.mark.parametrize(
    ("language", "src", "kept", "blanked"),
    [
        ("python", b"x = f'{hidden}' + rb\"raw\" # note\nuse(y)\n", {"x", "use", "y"}, {"hidden", "raw", "note", "rb"}),
        ("python", b'"""doc\nstring"""\nclass K: pass\n', {"class", "K", "pass"}, {"doc", "string"}),
        ("go", b"var r = 'x' // c\nvar s = `raw`\n", {"var", "r", "x", "s"}, {"c", "raw"}),
        (
            "rust",
            b'let c = b\'q\'; let s = r#"raw"#; /* block */ let t = b"bytes";\n',
            {"let", "c", "q", "s", "t"},
            {"raw", "block", "bytes", "b", "r"},
        ),
        (
            "java",
            b'String s = """\ntext\n"""; char c = \'"\'; int after = 1;\n',
            {"String", "s", "c", "after"},
            {"text"},
        ),
        (
            "javascript",
            b"const re = /it's/g; const t = `a ${b} c`; keep()\n",
            {"const", "re", "it", "s", "keep"},
            {"a", "b", "c"},
        ),
    ],
)
def test_lexer_blanks_comments_and_strings(language: str, src: bytes, kept: set[str], blanked: set[str]):
    words = set(_references(lexer.blank(language, src), []).split())
    assert kept <= words
    assert not (blanked & words)


def _lexed_fixtures() -> list[str]:
    """The fixtures whose language has a lexer (the others use the tree query: nothing to compare)."""
    names = sorted(p.name for p in FIXTURES.iterdir())
    assert all(language_for(n) is not None for n in names)
    return [n for n in names if lexer.has_lexer(language_for(n))]  # type: ignore[arg-type]


@pytest.mark.parametrize("name", _lexed_fixtures())
def test_lexer_matches_the_tree_walk_on_the_fixtures(name: str):
    language = language_for(name)
    assert language is not None and lexer.has_lexer(language)
    data = (FIXTURES / name).read_bytes()
    tree = grammars.parse(language, data)
    skips = [(n.start_byte, n.end_byte) for n in grammars.skip_captures(language, tree.root_node)]
    assert _references(lexer.blank(language, data), []) == _references(data, skips)


def _plain_python_words(data: bytes) -> str:
    """The words of ``data`` blanked with the plain (unmarked) Python expression."""
    out = re.compile(lexer._PATTERNS["python"]).sub(b"\x01", data)
    if b"\x01" in out:
        out = lexer._PY_PREFIX_REVERSED.sub(b"\x01", out[::-1])[::-1]
    return _references(out, [])


def test_marked_python_lexer_finds_the_words_the_plain_one_does():
    """The fast path (a mark before every quote and `#`) must blank exactly
    what the plain expression blanks: escapes, quotes of the other kind,
    unterminated and triple-quoted literals, prefixes; generated inputs too."""
    cases = [
        b"x = 'it\\'s' # c\ny = \"a\\\"b\" + z\n",
        b"s = '''a ' b \"\"\" c''' ; t = \"\"\"q \\\"\"\" \"\"\" after\n",
        b"u = rb'\\\\' + f\"{v}\" + 'open\nw = 1  # tail ' \" \n",
        b"x = '#not' # '''not a string\nkeep = 1\n",
        b"\x02 = 'odd' keep\n",  # a file holding the mark itself: the plain expression
    ]
    rnd = random.Random(14)
    alphabet = [b"a", b"b", b"#", b'"', b"'", b"\\", b"\n", b" ", b"r", b"f", b'"""', b"'''", b"x1"]
    cases += [b"".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 24))) for _ in range(20_000)]
    for data in cases:
        assert _references(lexer.blank("python", data), []) == _plain_python_words(data), data
