"""apply_edits on a big file holds it about twice, never ten times: peak RSS
of a child process doing one search/replace, minus the same child idle."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CHILD = textwrap.dedent(
    """
    import resource, sys
    from tooldeck.core.toolbox import Toolbox
    from tooldeck.runtime import Runtime
    from tooldeck.tools import edits
    root, state, run = sys.argv[1:4]
    box = Toolbox(edits.tools(Runtime.for_dirs([root], state_dir=state)))
    if run == "1":
        res = box.call_sync("apply_edits", {"path": "big.txt", "search": "MARKER = 1", "replace": "MARKER = 2"})
        assert not res.is_error, res.text
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    """
)


def make_file(path: Path, mb: int) -> int:
    line = "line {:09d} of a large generated text file, long enough to look like code\n"
    lines = mb * 2**20 // len(line.format(0))
    with open(path, "w", encoding="utf-8") as fh:
        for start in range(0, lines, 10_000):
            block = (
                line.format(i) if i != lines // 2 else "MARKER = 1\n" for i in range(start, min(lines, start + 10_000))
            )
            fh.write("".join(block))
    return path.stat().st_size


def peak(root: Path, state_dir: Path, run: bool) -> int:
    argv = [sys.executable, "-c", CHILD, str(root), str(state_dir), "1" if run else "0"]
    return int(subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip())


def test_apply_edits_on_a_16_mb_file_holds_it_about_twice(root: Path, state_dir: Path) -> None:
    size = make_file(root / "big.txt", 16)
    extra = peak(root, state_dir, True) - peak(root, state_dir, False)
    assert "MARKER = 2\n" in (root / "big.txt").read_text()
    assert extra < 3 * size, f"apply_edits used {extra / size:.1f}x the file size"


@pytest.mark.slow
def test_apply_edits_on_a_200_mb_file_stays_under_three_times_its_size(root: Path, state_dir: Path) -> None:
    size = make_file(root / "big.txt", 200)
    assert peak(root, state_dir, True) < 3 * size
