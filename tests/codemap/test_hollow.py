"""Hollowed Python parses: the codemap is the one the whole file gives.

The reference in each test is the same extraction with hollowing turned off
(``hollow.python`` answering None, so the real text is parsed), never a
hand-written expectation of what hollowing should produce.
"""

from __future__ import annotations

import random
import sysconfig
from pathlib import Path

import pytest

from tooldeck.codemap import extract, grammars, hollow, lexer


def both_ways(src: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    """(codemap rows with hollowing, codemap rows from the whole text)."""
    fast = extract.extract_rows("python", src)
    with monkeypatch.context() as m:
        m.setattr(hollow, "python", lambda _src, _pieces: None)
        whole = extract.extract_rows("python", src)
    return fast, whole


def hollowed(src: bytes) -> bytes | None:
    return hollow.python(src, lexer.pieces("python", src))


TRICKY = {
    "docstring and trailing comments": b'''def f(a,
      b: int = 1) -> int:  # note
    """Doc."""
    x = a + b
    # trailing, at the block's indentation
    return x
  # a comment less indented than the body
# one at column 0


class A:
    """Class doc."""

    def m(self):
        # leading comment
        return 1
        # trailing comment in the method

    """ a class-level string after a method, at the method's indentation
    """

    attr: int = 3

    async def n(self, cb=lambda: 1, d={1:
            2}):
        import os
        from json import (
            dumps,
            loads,
        )
        if os:
            import sys
        return dumps
''',
    "one-line bodies, nesting, decorators": b"""import functools

def one(): return 1
class B: pass

@functools.cache
def outer(x):
    def inner(y):
        class Local:
            def hidden(self): ...
        return y
    return inner(x)

def cont(a):
    total = a + \\
        1
    return total \\
        + 2
""",
    "strings that hold code": b'''TEMPLATE = """
def not_a_function():
    pass
"""

def f():
    s = """
def also_not():
x
"""
    return s

def g():
    return """
    text
    """
''',
}


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_tricky_sources_give_the_whole_files_codemap(name: str, monkeypatch: pytest.MonkeyPatch):
    src = TRICKY[name]
    assert hollowed(src) is not None  # the fast path is taken, not skipped
    fast, whole = both_ways(src, monkeypatch)
    assert fast == whole


@pytest.mark.parametrize("tail", [b"", b"def last(): return 0\n", b"x = undefined\n"])
@pytest.mark.parametrize("name", sorted(TRICKY))
def test_every_offset_and_line_break_stays(name: str, tail: bytes):
    src = TRICKY[name] + tail
    out = hollowed(src)
    assert out is not None and len(out) == len(src)
    assert [i for i, c in enumerate(out) if c == 10] == [i for i, c in enumerate(src) if c == 10]
    assert out.endswith(tail)


def test_what_a_hollowed_file_keeps():
    src = TRICKY["docstring and trailing comments"]
    out = hollowed(src)
    assert out is not None
    assert b"x = a + b" not in out and b"return dumps" not in out  # bodies are gone
    assert b"from json import (" in out and b"import os" in out  # first-level imports stay
    assert b"import sys" not in out  # a nested one is implementation: not listed before either


def test_a_body_the_rule_cuts_short_falls_back_to_the_whole_text(monkeypatch: pytest.MonkeyPatch):
    # a dedented line inside brackets ends the body early for the indentation rule
    src = b"def f():\n    x = (1 +\n2)\n    return x\n\ndef g(a):\n    return a\n"
    out = hollowed(src)
    assert out is not None and grammars.parse("python", out).root_node.has_error
    fast, whole = both_ways(src, monkeypatch)
    assert fast == whole
    assert [row[0] for row in fast[1]][:1] == ["f"]


@pytest.mark.parametrize(
    "src",
    [b"def f():\r\n    return 1\r\n", b"def f():\n\treturn 1\n", b"x = 1\n", b""],
    ids=["crlf", "tab-indent", "no-def", "empty"],
)
def test_shapes_it_does_not_handle_are_parsed_whole(src: bytes, monkeypatch: pytest.MonkeyPatch):
    assert hollowed(src) is None
    fast, whole = both_ways(src, monkeypatch)
    assert fast == whole


def test_skipped_blank_lines_leave_every_node_where_it_was():
    src = TRICKY["docstring and trailing comments"] + TRICKY["one-line bodies, nesting, decorators"]
    out = hollowed(src)
    assert out is not None
    ranges = hollow.ranges(out)
    assert len(ranges) > 1  # some blank runs are skipped

    def nodes(tree: object) -> list[tuple[object, ...]]:
        found, stack = [], [tree.root_node]  # type: ignore[attr-defined]
        while stack:
            n = stack.pop()
            found.append((n.type, n.start_byte, n.end_byte, n.start_point, n.end_point))
            stack.extend(n.children)
        return found

    assert nodes(grammars.parse("python", out, ranges)) == nodes(grammars.parse("python", out))
    assert grammars.parser("python").parse(b"x = 1\n").root_node.end_byte == 6  # ranges were reset


def test_real_files_give_the_whole_files_codemap(monkeypatch: pytest.MonkeyPatch):
    """A sample of the standard library and this environment's packages."""
    roots = [Path(sysconfig.get_paths()["stdlib"]), Path(sysconfig.get_paths()["purelib"])]
    files = sorted(p for root in roots for p in root.glob("*/*.py"))
    sample = random.Random(14).sample(files, min(150, len(files)))
    taken = 0
    for path in sample:
        src = path.read_bytes()
        out = hollowed(src)
        if out is not None:
            assert len(out) == len(src) and out.count(b"\n") == src.count(b"\n"), path
            taken += not grammars.parse("python", out, hollow.ranges(out)).root_node.has_error
        fast, whole = both_ways(src, monkeypatch)
        assert fast == whole, path
    assert taken > len(sample) // 2  # the hollowed parse is the one used, not the fallback


def test_an_unterminated_quote_keeps_the_code_only_text_aligned():
    src = b"def f():\n    x = it's\n    return x\n\ndef g():\n    return 1\n"
    cut = lexer.pieces("python", src)
    assert len(lexer.code_only(cut)) == len(src)
    out = hollow.python(src, cut)
    assert out is None or (len(out) == len(src) and out.count(b"\n") == src.count(b"\n"))


def test_mangled_sources_keep_every_offset_and_never_raise():
    """Random edits of the tricky sources (broken brackets, stray quotes,
    tabs): the hollowed text keeps the file's length and lines, and the
    extraction answers."""
    rng = random.Random(14)
    for _ in range(300):
        b = bytearray(rng.choice(list(TRICKY.values())))
        for _ in range(rng.randint(1, 6)):
            i = rng.randrange(len(b))
            if rng.random() < 0.5:
                del b[i]
            else:
                b.insert(i, rng.choice(b"{}()[]:\n \t\"'#\\x"))
        src = bytes(b)
        out = hollowed(src)
        assert out is None or (len(out) == len(src) and out.count(b"\n") == src.count(b"\n")), src
        extract.extract_rows("python", src)


def test_a_python_string_the_lexer_misreads_never_hides_the_next_function(monkeypatch: pytest.MonkeyPatch):
    src = b'def a():\n    return 1\n\n\ndef b():\n    return 2\n'
    # what a misread string would do: the code-only text blanks the next def
    real = lexer.code_only

    def misread(cut: lexer.Pieces) -> bytes:
        code = real(cut)
        at = code.index(b"def b")
        return code[:at] + b" " * len(b"def b():") + code[at + len(b"def b():") :]

    monkeypatch.setattr(lexer, "code_only", misread)
    rows = extract.extract_rows("python", src)[1]
    assert [row[0] for row in rows] == ["a", "b"]
