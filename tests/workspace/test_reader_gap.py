"""A file being rewritten never vanishes for a reader.

A reader process polls ``read_file`` while this process rewrites the file
300 times through multi-file ``apply_patch`` batches (the batch path is the
one that used to move the target aside before renaming the new content in).
Every read must find the file: the old content or the new, never not_found.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tooldeck.core.toolbox import Toolbox

READER = textwrap.dedent(
    """
    import json, os, sys
    from tooldeck.catalog import build_toolbox
    from tooldeck.runtime import Runtime
    root, state, stop = sys.argv[1:4]
    box = build_toolbox(Runtime.for_dirs([root], state_dir=state))
    counts = {"ok": 0}
    print("ready", flush=True)
    while not os.path.exists(stop):
        res = box.call_sync("read_file", {"path": "a.txt"})
        key = res.error.code if res.is_error and res.error else "ok"
        counts[key] = counts.get(key, 0) + 1
    print(json.dumps(counts), flush=True)
    """
)


def patch_for(n: int) -> str:
    body = ["*** Begin Patch"]
    for name in ("a.txt", "b.txt"):
        body += [f"*** Update File: {name}", "@@", f"-round {n}", f"+round {n + 1}"]
    return "\n".join([*body, "*** End Patch"]) + "\n"


def rewrite_while_reading(box: Toolbox, root: Path, state_dir: Path, rounds: int) -> dict[str, int]:
    for name in ("a.txt", "b.txt"):
        (root / name).write_text("head\nround 0\ntail\n")
    stop = root.parent / "stop"
    env = {**os.environ, "TOOLDECK_STATE_DIR": str(state_dir)}
    argv = [sys.executable, "-c", READER, str(root), str(state_dir), str(stop)]
    reader = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdout is not None and reader.stdout.readline().strip() == "ready"
        for n in range(rounds):
            res = box.call_sync("apply_patch", patch_for(n))
            assert not res.is_error, res.text
    finally:
        stop.write_text("")
        out, _ = reader.communicate(timeout=60)
    assert (root / "a.txt").read_text() == f"head\nround {rounds}\ntail\n"
    return json.loads(out.strip().splitlines()[-1])


def test_a_reader_never_misses_a_file_during_300_rewrites(box: Toolbox, root: Path, state_dir: Path) -> None:
    counts = rewrite_while_reading(box, root, state_dir, 300)
    assert counts.get("not_found", 0) == 0, counts
    assert set(counts) == {"ok"} and counts["ok"] > 0, counts


@pytest.mark.slow
def test_a_reader_never_misses_a_file_during_3000_rewrites(box: Toolbox, root: Path, state_dir: Path) -> None:
    counts = rewrite_while_reading(box, root, state_dir, 3000)
    assert set(counts) == {"ok"}, counts
