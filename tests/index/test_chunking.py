"""Chunkers: Markdown sections at headings, code at definitions, pydoc by ast."""

from __future__ import annotations

from tests.index.indexkit import CODE, DOCS
from tooldeck.codemap.extract import extract
from tooldeck.index.chunk_code import chunk_code
from tooldeck.index.chunk_markdown import MAX_LINES, chunk_markdown
from tooldeck.index.chunk_pydoc import chunk_pydoc


def test_markdown_sections_carry_heading_paths_and_lines() -> None:
    chunks = chunk_markdown("guide/options.md", DOCS["guide/options.md"])
    titles = [c.title for c in chunks]
    assert titles == ["Options", "Options > Required options", "Options > Default values"]
    req = chunks[1]
    lines = DOCS["guide/options.md"].splitlines()
    assert lines[req.start_line - 1] == "## Required options"
    assert "refuses to run" in req.text and "default is used" not in req.text


def test_markdown_heading_inside_code_fence_is_not_a_heading() -> None:
    chunks = chunk_markdown("guide/colors.md", DOCS["guide/colors.md"])
    assert len(chunks) == 1 and "# not a heading" in chunks[0].text


def test_long_section_is_cut_and_keeps_its_title() -> None:
    body = "\n\n".join(f"Paragraph {i} about long sections." for i in range(200))
    chunks = chunk_markdown("long.md", f"# Long\n\n{body}\n")
    assert len(chunks) > 3
    assert all(c.title == "Long" and c.end_line - c.start_line < MAX_LINES for c in chunks)
    covered = "\n".join(c.text for c in chunks)
    assert "Paragraph 0 " in covered and "Paragraph 199 " in covered


def test_rst_underlined_headings() -> None:
    text = "Title\n=====\n\nIntro text.\n\nSection A\n---------\n\nBody of A.\n"
    chunks = chunk_markdown("doc.rst", text)
    assert [c.title for c in chunks] == ["Title", "Title > Section A"]


def test_code_chunks_align_to_definitions_with_symbol_and_lines() -> None:
    text = CODE["pkg/server.py"]
    chunks = chunk_code("pkg/server.py", text, extract("python", text.encode()).symbols)
    by_symbol = {c.symbol: c for c in chunks}
    assert {"Server", "Server.__init__", "Server.address", "Server.shutdown", "parse_port", None} <= set(by_symbol)
    lines = text.splitlines()
    shutdown = by_symbol["Server.shutdown"]
    assert lines[shutdown.start_line - 1].strip().startswith("def shutdown")
    assert "self.sock.close()" in lines[shutdown.end_line - 1]
    prop = by_symbol["Server.address"]
    assert lines[prop.start_line - 1].strip() == "@property"  # the decorator goes with its definition
    module = by_symbol[None]
    assert "import socket" in module.text and module.kind == "module"


def test_code_chunks_for_another_grammar() -> None:
    text = CODE["web/app.js"]
    chunks = chunk_code("web/app.js", text, extract("javascript", text.encode()).symbols)
    symbols = {c.symbol for c in chunks}
    assert "renderTable" in symbols and "Cart.addItem" in symbols


def test_pydoc_chunks_signatures_and_docstrings() -> None:
    chunks = chunk_pydoc("pkg/server.py", CODE["pkg/server.py"])
    by = {c.symbol: c for c in chunks}
    assert by["pkg.server"].kind == "module"
    assert by["pkg.server.parse_port"].text.startswith("def parse_port(text: str) -> int")
    assert "refusing values over 65535" in by["pkg.server.parse_port"].text
    assert by["pkg.server.Server.shutdown"].kind == "method"
    assert chunk_pydoc("bad.py", "def (:\n") == []
