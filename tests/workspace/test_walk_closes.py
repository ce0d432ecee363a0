"""The walk closes every folder it opened however it ends: finished,
abandoned by its consumer mid-tree, or stopped by a cancelled call's check
(issue 30: a cancelled call must leave no descriptor behind)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tooldeck.core.errors import ToolError
from tooldeck.core.invocation import Invocation
from tooldeck.workspace.ignore import IgnoreRules
from tooldeck.workspace.walk import walk


def _fds(root: Path) -> list[str]:
    """The descriptors this process holds on ``root`` or below. Only these: a
    worker's other threads (servers and runs of earlier tests) open and close
    descriptors of their own meanwhile, so a count of all of them moved by 2
    once in a full run without any folder of the walk left open."""
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed since the listing (the listing's own descriptor too)
            continue
        if target == str(root) or target.startswith(f"{root}/"):
            held.append(target)
    return sorted(held)


def _tree(root: Path) -> None:
    for a in range(4):
        for b in range(4):
            d = root / f"a{a}" / f"b{b}" / "c"
            d.mkdir(parents=True)
            (d / "f.txt").write_text("x\n")


def test_an_abandoned_walk_closes_its_folders(tmp_path: Path) -> None:
    _tree(tmp_path)
    before = _fds(tmp_path)
    for stop_at in (1, 3, 7, 20):
        it = walk(IgnoreRules(str(tmp_path)))
        for _ in range(stop_at):
            next(it)
        it.close()  # the consumer breaks out mid-tree
    assert _fds(tmp_path) == before == []


def test_a_cancelled_walk_stops_and_closes_its_folders(tmp_path: Path) -> None:
    _tree(tmp_path)
    inv = Invocation.silent()
    before = _fds(tmp_path)
    seen = 0
    with pytest.raises(ToolError, match="cancelled"):
        for entry in walk(IgnoreRules(str(tmp_path)), stop=inv.check_cancelled):
            seen += 1
            if entry.rel == "a1":
                inv.cancel()
    assert seen < 40  # stopped at the next folder, not at the end of the tree
    assert _fds(tmp_path) == before == []
