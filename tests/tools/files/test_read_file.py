"""read_file: both dialects, the exact header, truncation, binary refusal, roots."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tooldeck.catalog import ALIASES, build_toolbox, canonical_name
from tooldeck.runtime import Runtime
from tooldeck.tools.files.read import INLINE_BYTES, MAX_BYTES
from tooldeck.workspace.content import content_hash
from tooldeck.workspace.roots import Workspace, make_root

HEADER = re.compile(
    r"^(?P<path>.+):(?P<start>\d+)-(?P<end>\d+) \[total_lines=(?P<total>\d+)\] \[hash=(?P<hash>[0-9a-f]{16})\]$"
)


def numbered(root: Path, name: str = "ten.txt", n: int = 10) -> Path:
    p = root / name
    p.write_text("".join(f"line {i}\n" for i in range(1, n + 1)))
    return p


def parse(text: str) -> tuple[dict[str, str], list[str]]:
    head, _, body = text.partition("\n")
    m = HEADER.match(head)
    assert m is not None, head
    return m.groupdict(), body.split("\n") if body else []


def test_ochat_dialect_offset_and_line_count(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    p = numbered(root)
    head, body = parse(call.ok("read_file", {"file": "ten.txt", "offset": 2, "line_count": 3}))
    assert head == {"path": "ten.txt", "start": "3", "end": "5", "total": "10", "hash": content_hash(p.read_bytes())}
    assert body == ["line 3", "line 4", "line 5"]


def test_repoprompt_dialect_start_line_limit_and_tail(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    numbered(root)
    head, body = parse(call.ok("read_file", {"path": "ten.txt", "start_line": 4, "limit": 2}))
    assert (head["start"], head["end"], body) == ("4", "5", ["line 4", "line 5"])
    head, body = parse(call.ok("read_file", {"path": "ten.txt", "start_line": -3}))
    assert (head["start"], head["end"], body) == ("8", "10", ["line 8", "line 9", "line 10"])
    head, body = parse(call.ok("read_file", {"path": "ten.txt", "start_line": -50}))
    assert head["start"] == "1" and len(body) == 10


def test_whole_file_and_edge_shapes(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    numbered(root)
    head, body = parse(call.ok("read_file", {"file": "ten.txt"}))
    assert (head["start"], head["end"], len(body)) == ("1", "10", 10)
    (root / "empty.txt").write_text("")
    head, body = parse(call.ok("read_file", {"file": "empty.txt"}))
    assert (head["total"], body) == ("0", [])
    (root / "nonl.txt").write_text("a\nb")
    head, body = parse(call.ok("read_file", {"path": "nonl.txt"}))
    assert (head["total"], body) == ("2", ["a", "b"])
    (root / "crlf.txt").write_bytes(b"a\r\nb\r\n")
    assert parse(call.ok("read_file", {"path": "crlf.txt"}))[1] == ["a\r", "b\r"]


def test_dialect_mistakes_are_invalid_arguments(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    numbered(root)
    for args, field in [
        ({}, "file"),
        ({"file": "ten.txt", "path": "other.txt"}, "path"),
        ({"file": "ten.txt", "offset": 1, "start_line": 2}, "start_line"),
        ({"file": "ten.txt", "start_line": 0}, "start_line"),
        ({"file": "ten.txt", "offset": -1}, "offset"),
        ({"file": "ten.txt", "line_count": 2, "limit": 3}, "limit"),
        ({"file": "ten.txt", "offset": 10}, "offset"),
        ({"file": "ten.txt", "start_line": 11}, "start_line"),
        ({"file": "ten.txt", "bogus": 1}, "bogus"),
        ({"file": 12}, "file"),
    ]:
        res = call.err("read_file", args, code="invalid_arguments")
        assert f"`{field}`" in res.text or field in res.text, (args, res.text)
    assert call.ok("read_file", {"file": "ten.txt", "path": "ten.txt"})  # the same file twice is fine


def test_truncation_at_the_seed_byte_limit(tmp_path: Path, root: Path, state_dir: Path) -> None:
    line = "x" * 99  # 100 bytes with the newline
    n = MAX_BYTES // 100 + 500
    (root / "big.txt").write_text((line + "\n") * n)
    rt = Runtime.for_dirs([root], state_dir=state_dir, budget_tokens=10_000_000)  # see the tool's own cut
    text = build_toolbox(rt).call_sync("read_file", '{"file": "big.txt"}').text
    head, rest = text.split("\n", 1)
    body, sep, note = rest.rpartition("\n---\n")
    assert sep and note.startswith("[File truncated:")
    shown = body.split("\n")
    assert len((body + "\n").encode()) <= MAX_BYTES and len(shown) == MAX_BYTES // 100
    assert note == f"[File truncated: {n - len(shown)} more lines not shown]"
    assert HEADER.match(head) and f":1-{len(shown)} [total_lines={n}]" in head


def test_default_budget_pages_a_big_read(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    (root / "big.txt").write_text("".join(f"row {i} " + "word " * 20 + "\n" for i in range(5000)))
    first = call.ok("read_file", {"file": "big.txt"})
    cursor = re.search(r'"cursor": "(p:[0-9a-f]+)"', first)
    assert cursor is not None and "row 0 " in first
    second = call.ok("read_file", {"cursor": cursor.group(1)})
    assert "row 0 " not in second and "row" in second


def test_binary_and_non_files_are_refused(root: Path, call) -> None:  # type: ignore[no-untyped-def]
    (root / "nul.bin").write_bytes(b"abc\x00def")
    (root / "latin1.txt").write_bytes(b"caf\xe9\n")
    (root / "sub").mkdir()
    call.err("read_file", {"file": "nul.bin"}, code="binary_file")
    call.err("read_file", {"file": "latin1.txt"}, code="binary_file")
    call.err("read_file", {"file": "sub"}, code="not_a_file")
    call.err("read_file", {"file": "missing.txt"}, code="not_found")


def test_big_file_takes_the_worker_thread_path(root: Path, call, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tooldeck.tools.files import read as read_module

    handed: list[str] = []  # a spy: it records the hand-off and delegates to the real worker path
    real = read_module.run_blocking

    async def spy(fn, *args):  # type: ignore[no-untyped-def]
        handed.append(getattr(fn, "__name__", "?"))
        return await real(fn, *args)

    monkeypatch.setattr(read_module, "run_blocking", spy)
    (root / "small.txt").write_text("a\nb\n")
    assert parse(call.ok("read_file", {"file": "small.txt"}))[1] == ["a", "b"]
    assert handed == []  # small: read on the event loop
    (root / "mid.txt").write_text("y" * 59 + "\n" + "z" * (INLINE_BYTES * 2) + "\n")
    head, body = parse(call.ok("read_file", {"file": "mid.txt", "line_count": 1}))
    assert body == ["y" * 59] and head["total"] == "2"
    assert len(handed) == 1  # big: handed to a worker thread


@pytest.fixture
def multi(tmp_path: Path, state_dir: Path) -> tuple[Runtime, Path, Path]:
    src, docs = tmp_path / "src", tmp_path / "docs"
    src.mkdir()
    docs.mkdir()
    (src / "a.py").write_text("print('a')\n")
    (docs / "guide.md").write_text("# Guide\n")
    ws = Workspace([make_root(src, "source", "Implementation files"), make_root(docs, "docs", "Project documentation")])
    return Runtime(ws, state_dir=state_dir), src, docs


def test_roots_in_description_and_enum(multi) -> None:  # type: ignore[no-untyped-def]
    rt, src, docs = multi
    t = build_toolbox(rt).get("read_file")
    assert t is not None
    assert t.parameters["properties"]["root"]["enum"] == ["source", "docs"]
    for needle in ("source", str(src.resolve()), "Implementation files", "docs", str(docs.resolve())):
        assert needle in t.description, needle
    assert t.annotations.read_only and t.annotations.idempotent and not t.annotations.destructive


def test_named_root_reads(multi) -> None:  # type: ignore[no-untyped-def]
    rt, _src, docs = multi
    box = build_toolbox(rt)
    res = box.call_sync("read_file", json.dumps({"root": "docs", "file": "guide.md"}))
    assert not res.is_error and "# Guide" in res.text
    assert res.text.startswith(str(docs.resolve() / "guide.md") + ":1-1")  # outside the first root: absolute
    res = box.call_sync("read_file", json.dumps({"file": "guide.md"}))  # found in the root where it exists
    assert "# Guide" in res.text
    res = box.call_sync("read_file", json.dumps({"root": "nope", "file": "guide.md"}))
    assert res.error is not None and res.error.code == "invalid_arguments"


def test_declaration_aliases() -> None:
    assert ALIASES == {"read_dir": "read_directory", "get_contents": "read_file"}
    assert canonical_name("get_contents") == "read_file" and canonical_name("read_dir") == "read_directory"
    assert canonical_name("read_file") == "read_file"
