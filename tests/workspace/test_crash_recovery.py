"""kill -9 in the middle of a big patch leaves no trace once the next
tooldeck process has started.

A process applying a many-file patch (every file updated, one added or
deleted) is SIGKILLed at random points of its run, 20 times. After each kill
a fresh tooldeck process starts (its Runtime recovers interrupted writes) and
lists the root. Every time: all files of the batch on one side (all old or
all new), no temp or backup file anywhere in the root, an empty journal, and
no listing showing anything of tooldeck's own.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

CHILD = str(Path(__file__).with_name("crash_child.py"))


def make_tree(root: Path, files: int) -> list[str]:
    names = [f"pkg{j % 10}/f{j}.txt" for j in range(files)]
    for name in names:
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("".join(f"line {k}\n" for k in range(20)) + "value = A\n" + "end\n")
    return names


def write_patches(where: Path, names: list[str]) -> dict[str, Path]:
    """A→B updates every file and adds extra.txt; B→A undoes both."""
    out = {}
    for old, new in (("A", "B"), ("B", "A")):
        body = ["*** Begin Patch"]
        for name in names:
            body += [f"*** Update File: {name}", "@@", " line 19", f"-value = {old}", f"+value = {new}", " end"]
        body += ["*** Add File: extra.txt", "+extra"] if new == "B" else ["*** Delete File: extra.txt"]
        path = where / f"patch-{old}{new}.txt"
        path.write_text("\n".join([*body, "*** End Patch"]) + "\n")
        out[old] = path
    return out


def side(root: Path, names: list[str]) -> str:
    """"A" or "B" when every file of the batch is on that side, else a description."""
    values = {(root / n).read_text().splitlines()[20] if (root / n).exists() else "<missing>" for n in names}
    extra = (root / "extra.txt").exists()
    if values == {"value = A"} and not extra:
        return "A"
    if values == {"value = B"} and extra:
        return "B"
    return f"mixed: {sorted(values)[:4]} extra={extra}"


def leftovers(root: Path, state_dir: Path) -> list[str]:
    found = [str(Path(d, f)) for d, _, fs in os.walk(root) for f in fs if f.startswith(".tooldeck-tmp-")]
    journal = state_dir / "journal"
    if journal.exists():
        found += [str(p) for p in journal.iterdir()]
    return found


class Zygote:
    def __init__(self, root: Path, state_dir: Path) -> None:
        env = {**os.environ, "TOOLDECK_STATE_DIR": str(state_dir)}
        argv = [sys.executable, CHILD, str(root), str(state_dir)]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def ask(self, line: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline().strip()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def kill_and_check(root: Path, state_dir: Path, files: int, kills: int) -> list[str]:
    names = make_tree(root, files)
    patches = write_patches(root.parent, names)
    rng = random.Random(files)
    z = Zygote(root, state_dir)
    outcomes: list[str] = []
    try:
        full = float("inf")  # undisturbed runs tell how long a patch takes (the first one warms up)
        for start in ("A", "B"):
            t0 = time.monotonic()
            pid = z.ask(f"patch {patches[start]}")
            assert z.ask(f"wait {pid}") == "0"
            full = min(full, time.monotonic() - t0)
            assert side(root, names) != start
        for k in range(kills):
            before = side(root, names)
            pid = z.ask(f"patch {patches[before]}")
            # half the kills anywhere in the run, half in its second half (the writes)
            delay = rng.uniform(0, full) if k % 2 == 0 else rng.uniform(full * 0.5, full * 1.05)
            time.sleep(delay)
            os.kill(int(pid), signal.SIGKILL)
            z.ask(f"wait {pid}")
            listings = json.loads(z.ask("check"))
            recovered = listings.pop("pending")
            now = side(root, names)
            assert now in ("A", "B"), f"kill {k} after {delay:.3f}s of {full:.3f}s: {now}"
            assert not leftovers(root, state_dir), f"kill {k}: left {leftovers(root, state_dir)[:5]}"
            for what, text in listings.items():
                assert "tooldeck-tmp" not in text, f"kill {k}: {what} lists a temp file"
            assert "f0.txt" in listings["dir"] and ("extra.txt" in listings["top"]) == (now == "B")
            if recovered:
                outcomes.append("rolled back" if now == before else "finished")
            else:
                outcomes.append("untouched" if now == before else "completed")
    finally:
        z.close()
    return outcomes


def test_sigkill_during_a_many_file_patch_leaves_one_side_and_no_debris(root: Path, state_dir: Path) -> None:
    outcomes = kill_and_check(root, state_dir, files=100, kills=20)
    assert len(outcomes) == 20
    # some kills must have hit a write in progress, or the test proved nothing
    assert {"rolled back", "finished"} & set(outcomes), outcomes


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_sigkill_during_a_3000_file_patch_leaves_one_side_and_no_debris(root: Path, state_dir: Path) -> None:
    outcomes = kill_and_check(root, state_dir, files=3000, kills=20)
    assert len(outcomes) == 20 and {"rolled back", "finished"} & set(outcomes), outcomes
