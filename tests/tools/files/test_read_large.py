"""read_file of big files streams (issue 8 item 15): the output is exactly the
one the whole-file renderer gives, and the peak memory stays near what is
shown, not a multiple of the file size."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tooldeck.tools.files.read_args import ReadArgs
from tooldeck.tools.files.read_large import STREAM_BYTES
from tooldeck.tools.files.read_window import render
from tooldeck.workspace.content import content_hash


def _read(call, args: dict) -> str:  # type: ignore[no-untyped-def]
    """The tool's own output, unpaged (the budget would cut both sides alike)."""
    res = call.box.call_sync("read_file", json.dumps(args), budget_tokens=10**8)
    assert not res.is_error, res.text[:300]
    return res.text


def _big(path: Path, *, tail_newline: bool = True, huge_at: int | None = None) -> bytes:
    parts: list[str] = []
    size = 0
    i = 0
    while size < STREAM_BYTES + 200_000:
        line = f"line {i} é ünïcode {'x' * (i % 97)}" + ("\r" if i % 13 == 0 else "")
        if huge_at is not None and i == huge_at:
            line = "ß" * 300_000
        parts.append(line)
        size += len(line) + 1
        i += 1
    data = ("\n".join(parts) + ("\n" if tail_newline else "")).encode()
    path.write_bytes(data)
    return data


ARGS = [
    {},
    {"offset": 1000, "line_count": 50},
    {"start_line": -5},
    {"start_line": -100_000},
    {"start_line": 30_000},
    {"offset": 3, "limit": 0},
]


@pytest.mark.parametrize("tail_newline", [True, False])
@pytest.mark.parametrize("args", ARGS, ids=lambda a: json.dumps(a))
def test_streamed_output_equals_the_whole_file_render(call, root: Path, args: dict, tail_newline: bool) -> None:  # type: ignore[no-untyped-def]
    data = _big(root / "big.txt", tail_newline=tail_newline)
    expected = render("big.txt", data.decode(), content_hash(data), ReadArgs(path="big.txt", **args))
    assert _read(call, {"path": "big.txt", **args}) == expected


def test_streamed_huge_line_is_cut_like_the_renderer(call, root: Path) -> None:  # type: ignore[no-untyped-def]
    data = _big(root / "big.txt", huge_at=10)
    for args in ({"offset": 10}, {"offset": 5}, {}):
        expected = render("big.txt", data.decode(), content_hash(data), ReadArgs(path="big.txt", **args))
        assert _read(call, {"path": "big.txt", **args}) == expected


def test_streamed_errors_match(call, root: Path) -> None:  # type: ignore[no-untyped-def]
    data = _big(root / "big.txt")
    total = data.count(b"\n")
    res = call.err("read_file", {"path": "big.txt", "offset": total + 5}, code="invalid_arguments")
    assert f"total_lines={total}" in res.text
    (root / "bad.txt").write_bytes(data + b"\xff tail\n")
    call.err("read_file", {"path": "bad.txt"}, code="binary_file")
    (root / "nul.bin").write_bytes(b"\x00" + data)
    call.err("read_file", {"path": "nul.bin"}, code="binary_file")


def _peak_rss_mb(root: Path, size_mb: int) -> float:
    script = textwrap.dedent(
        f"""
        import resource, sys
        from tooldeck.catalog import build_toolbox
        from tooldeck.runtime import Runtime
        line = ("y" * 99 + "\\n").encode()
        with open({str(root / "huge.txt")!r}, "wb") as fh:
            for _ in range({size_mb} * 10_000):
                fh.write(line)
        with open({str(root / "small.txt")!r}, "wb") as fh:
            fh.write(line * 5000)  # 500 KB: warms the tokenizer and the pager up
        box = build_toolbox(Runtime.for_dirs([{str(root)!r}], state_dir={str(root.parent / "st")!r}))
        box.call_sync("read_file", '{{"path": "small.txt"}}')
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        res = box.call_sync("read_file", '{{"path": "huge.txt"}}')
        assert not res.is_error, res.text[:300]
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(base / 1024, peak / 1024)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=os.environ)
    assert out.returncode == 0, out.stderr[-2000:]
    base, peak = (float(x) for x in out.stdout.split())
    return peak - base


@pytest.mark.timeout(120)
def test_reading_a_big_file_does_not_hold_it(root: Path) -> None:
    grown = _peak_rss_mb(root, 40)  # 40 MB file
    assert grown < 20, f"read_file of a 40 MB file grew the peak RSS by {grown:.0f} MB"
    assert resource.RLIMIT_AS is not None


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_reading_a_200mb_file_stays_small(root: Path) -> None:
    grown = _peak_rss_mb(root, 200)
    assert grown < 40, f"read_file of a 200 MB file grew the peak RSS by {grown:.0f} MB"
