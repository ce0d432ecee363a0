"""A cancelled context_builder stops early (issue 30): its check is called
during the walk and between stages; a build cancelled mid-walk raises
``cancelled``, leaves the selection alone, holds no folder open, and the
next build is complete (the half walk is not trusted)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tooldeck.context.builder import ContextBuilder
from tooldeck.core.errors import ToolError
from tooldeck.core.invocation import Invocation
from tooldeck.runtime import Runtime


def _tree(root: Path) -> None:
    for d in range(12):
        folder = root / f"pkg{d}"
        folder.mkdir()
        for f in range(5):
            (folder / f"invoice_{d}_{f}.py").write_text(f"def invoice_total_{d}_{f}(cart):\n    return cart\n")


def test_a_build_cancelled_mid_walk_stops_and_the_next_one_is_whole(runtime: Runtime, root: Path) -> None:
    _tree(root)
    first = ContextBuilder(runtime)
    first.build("invoice", 20000, apply=False)  # starts what lives on (helper launcher, stores)
    # its term index fill reads the tree (each read opens the root) in the background: done before the
    # count below, not caught between two reads by the wait on the open folders (a flake under load)
    first.terms.wait()
    builder = ContextBuilder(runtime)
    inv = Invocation.silent()
    checks = 0

    def check() -> None:
        nonlocal checks
        checks += 1
        if checks == 4:  # a few folders into the walk
            inv.cancel()
        inv.check_cancelled()

    def held_in_tree() -> list[str]:
        out = []
        for fd in os.listdir("/proc/self/fd"):
            try:
                target = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                continue
            if target == str(root) or target.startswith(f"{root}/") or "inotify" in target:
                out.append(target)
        return out

    # the first build's background fills walk the tree on their own threads: wait until they are done
    deadline = time.monotonic() + 30
    while any(not t.endswith("inotify]") and "inotify" not in t for t in held_in_tree()):
        assert time.monotonic() < deadline, held_in_tree()
        time.sleep(0.05)
    before = held_in_tree()
    with pytest.raises(ToolError, match="cancelled"):
        builder.build("invoice total for a cart", 20000, check=check)
    assert checks == 4
    assert held_in_tree() == before  # the walk closed its folders, and its new watch
    res = builder.build("invoice total for a cart", 20000, apply=False)
    assert builder.universe.walk(runtime.workspace).changed == []  # the second walk was a full one, now trusted
    assert len(res.choices) == 60


def test_a_build_checks_between_stages(runtime: Runtime, root: Path) -> None:
    _tree(root)
    calls = 0

    def check() -> None:
        nonlocal calls
        calls += 1

    ContextBuilder(runtime).build("invoice total for a cart", 20000, apply=False, check=check)
    assert calls >= 12 + 4  # a folder each, and the stages
