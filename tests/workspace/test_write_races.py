"""No lost update: 20 writers of one file, each changing its own line.

Threads of one server (``Toolbox.call_many``) and separate ``tooldeck call``
processes mix apply_edits, apply_patch, find_and_replace and append_to_file.
Every call that reports success must be in the final file, and every call
that does not must say ``conflict`` (nothing else, nothing silent).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tooldeck.core.toolbox import Toolbox, ToolCall

WRITERS = 20
KINDS = ("apply_edits", "apply_patch", "find_and_replace", "append_to_file")


def seed(path: Path) -> None:
    lines: list[str] = []
    for i in range(WRITERS):
        lines.append(f"m{i:02d} = 0")
        lines += ["filler"] * 4
    path.write_text("\n".join(lines) + "\n")


def call_for(i: int) -> tuple[str, str]:
    kind = KINDS[i % len(KINDS)]
    marker = f"m{i:02d} = 0"
    if kind == "apply_edits":
        return kind, json.dumps({"path": "f.txt", "search": marker, "replace": f"m{i:02d} = edits"})
    if kind == "apply_patch":
        patch = f"*** Begin Patch\n*** Update File: f.txt\n@@\n-{marker}\n+m{i:02d} = patch\n*** End Patch\n"
        return kind, json.dumps({"input": patch})
    if kind == "find_and_replace":
        return kind, json.dumps({"path": "f.txt", "find": marker, "replace": f"m{i:02d} = far"})
    return kind, json.dumps({"path": "f.txt", "content": f"appended {i:02d}"})


def expected_line(i: int) -> str:
    kind = KINDS[i % len(KINDS)]
    return {
        "apply_edits": f"m{i:02d} = edits",
        "apply_patch": f"m{i:02d} = patch",
        "find_and_replace": f"m{i:02d} = far",
    }.get(kind, f"appended {i:02d}")


def check(final: str, outcomes: dict[int, str | None], writers: int = WRITERS) -> None:
    """``outcomes``: writer -> None (success) or its error code."""
    lines = final.splitlines()
    landed = [i for i, err in outcomes.items() if err is None]
    missing = [i for i in landed if expected_line(i) not in lines]
    assert not missing, f"reported success but lost: {[expected_line(i) for i in missing]}"
    others = {i: err for i, err in outcomes.items() if err not in (None, "conflict")}
    assert not others, f"errors other than conflict: {others}"
    assert len(outcomes) == writers
    assert len(landed) >= writers // 2, f"only {len(landed)} of {writers} writers landed"


def test_parallel_threads_never_lose_a_reported_success(box: Toolbox, root: Path, state_dir: Path) -> None:
    seed(root / "f.txt")
    calls = [ToolCall(*call_for(i)) for i in range(WRITERS)]
    results = asyncio.run(box.call_many(calls, parallel=True))
    outcomes = {i: (r.error.code if r.is_error and r.error else None) for i, r in enumerate(results)}
    check((root / "f.txt").read_text(), outcomes)
    assert [p.name for p in root.iterdir()] == ["f.txt"]  # no temp file left


def run_processes(root: Path, state_dir: Path, writers: int) -> None:
    seed(root / "f.txt")
    env = {**os.environ, "TOOLDECK_STATE_DIR": str(state_dir)}
    procs = []
    for i in range(writers):
        name, args = call_for(i)
        argv = [sys.executable, "-m", "tooldeck", "call", "--root", str(root), name, args]
        procs.append(subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outcomes: dict[int, str | None] = {}
    for i, p in enumerate(procs):
        out, err = p.communicate(timeout=600)
        if p.returncode == 0:
            outcomes[i] = None
        else:
            outcomes[i] = "conflict" if err.startswith("error [conflict]") else f"rc={p.returncode}: {err[:300]}"
    check((root / "f.txt").read_text(), outcomes, writers)
    assert [p.name for p in root.iterdir()] == ["f.txt"]
    journal = state_dir / "journal"
    assert not journal.exists() or not any(journal.iterdir())  # every process cleaned up before exiting


def test_parallel_processes_never_lose_a_reported_success(root: Path, state_dir: Path) -> None:
    # each `tooldeck call` costs ~1 s of CPU to start: 6 here, all 20 in the soak variant
    run_processes(root, state_dir, 6)


@pytest.mark.slow
def test_twenty_parallel_processes_never_lose_a_reported_success(root: Path, state_dir: Path) -> None:
    run_processes(root, state_dir, WRITERS)
