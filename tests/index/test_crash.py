"""A build killed mid-way (SIGKILL of the building process) leaves the old
index complete and searchable; the next build clears the debris."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.index.indexkit import DOCS, write_tree
from tooldeck.index.service import IndexService
from tooldeck.runtime import Runtime

BUILDER = textwrap.dedent(
    """
    import sys, time
    from tooldeck.index import layout
    from tooldeck.index.service import IndexService
    from tooldeck.runtime import Runtime

    root, state, pause = sys.argv[1], sys.argv[2], sys.argv[3] == "pause"
    if pause:  # stop for good once the new generation is written, just before it is published
        real = layout.Layout.publish
        def publish(self, name, build):
            print("WRITTEN", build, flush=True)
            time.sleep(120)
            return real(self, name, build)
        layout.Layout.publish = publish
    svc = IndexService(Runtime.for_dirs([root], state_dir=state))
    print("START", flush=True)
    svc.build_markdown("docs", "docs")
    print("DONE", flush=True)
    """
)


def spawn(root: Path, state: Path, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", BUILDER, str(root), str(state), mode],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


@pytest.fixture
def built(root: Path, state_dir: Path) -> IndexService:
    write_tree(root / "docs", DOCS)
    svc = IndexService(Runtime.for_dirs([root], state_dir=state_dir))
    svc.build_markdown("docs", "docs")
    return svc


def assert_old_index_works(svc: IndexService) -> None:
    fresh = IndexService(svc.rt, svc.embedder)
    hits = fresh.search("docs", "mark an option as required", 3)
    assert hits and hits[0].chunk.path == "guide/options.md"


def test_kill_before_publish_keeps_the_old_generation(built: IndexService, root: Path, state_dir: Path) -> None:
    live_before = built.layout.current("docs")
    for i in range(40):
        write_tree(root / "docs" / "extra", {f"p{i}.md": f"# Extra {i}\n\nNew page {i}.\n"})
    proc = spawn(root, state_dir, "pause")
    try:
        assert proc.stdout is not None
        line = ""
        deadline = time.monotonic() + 60
        while not line.startswith("WRITTEN") and time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line, "builder exited early"
        debris = Path(line.split(" ", 1)[1].strip())
        assert (debris / "manifest.json").exists()  # a complete new generation, not yet published
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert built.layout.current("docs") == live_before
    assert_old_index_works(built)
    report = built.build_markdown("docs", "docs")
    assert report.files == 43 and report.files_changed == 40
    assert not debris.exists() and not list(built.layout.dir("docs").glob("build-*"))
    assert_old_index_works(built)


def test_kills_at_random_moments_never_break_the_index(built: IndexService, root: Path, state_dir: Path) -> None:
    rng = random.Random(13)
    for round_ in range(3):
        for i in range(120):
            write_tree(root / "docs" / "bulk", {f"b{i}.md": f"# Bulk {i}\n\nRound {round_} text {i}.\n"})
        proc = spawn(root, state_dir, "run")
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("START")
        time.sleep(rng.uniform(0.0, 0.6))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert built.layout.current("docs") is not None
        assert_old_index_works(built)
    assert built.build_markdown("docs", "docs").files == 123
