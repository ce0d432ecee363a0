"""Peak memory of ``apply_edits`` on a big file, against plain Python.

Goal (issue 8, item 15): one search/replace in a 200 MB file stays under 3x
the file size in peak RSS. Each measurement runs in a fresh child process and
reads the child's own peak (``ru_maxrss``), so nothing of the parent counts:

* idle = the child after importing tooldeck and building the tool (the floor);
* baseline = plain Python doing the same job: read the bytes, decode, replace
  once, encode, write a temp file and rename it over the target;
* tooldeck = the real ``apply_edits`` call through a Toolbox (read, hash,
  match, compare-and-swap under the file lock, atomic write).

Run: ``.venv/bin/python bench/large_edit_bench.py [--mb 200]``. Prints the
machine, the file and one row per measurement.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from goals import report  # bench/ is on sys.path when a script of it runs

LINE = "line {i:09d} of a large generated text file, long enough to look like code\n"


def make_file(path: Path, mb: int) -> int:
    """A text file of about ``mb`` MB with one unique marker line in the middle."""
    per = len(LINE.format(i=0))
    lines = mb * 2**20 // per
    with open(path, "w", encoding="utf-8") as fh:
        chunk: list[str] = []
        for i in range(lines):
            chunk.append("MARKER = 1\n" if i == lines // 2 else LINE.format(i=i))
            if len(chunk) == 10_000:
                fh.write("".join(chunk))
                chunk.clear()
        fh.write("".join(chunk))
    return path.stat().st_size


def child(mode: str, root: str, state: str, old: str, new: str) -> None:
    """Runs in the measured process: do one job, print peak RSS in KiB and seconds."""
    from tooldeck.core.toolbox import Toolbox
    from tooldeck.runtime import Runtime
    from tooldeck.tools import edits

    box = Toolbox(edits.tools(Runtime.for_dirs([root], state_dir=state)))
    target = os.path.join(root, "big.txt")
    t0 = time.perf_counter()
    if mode == "tooldeck":
        res = box.call_sync("apply_edits", {"path": "big.txt", "search": old, "replace": new})
        if res.is_error:
            raise SystemExit(res.text)
    elif mode == "baseline":
        with open(target, "rb") as fh:
            data = fh.read()
        text = data.decode("utf-8")
        del data
        changed = text.replace(old, new, 1)
        del text
        out = changed.encode("utf-8")
        del changed
        with open(target + ".tmp", "wb") as fh:
            fh.write(out)
        os.replace(target + ".tmp", target)
    elapsed = time.perf_counter() - t0
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, f"{elapsed:.3f}")


def measure(mode: str, root: Path, state: Path, src: str | None, old: str, new: str) -> tuple[int, float]:
    """(peak RSS in bytes, seconds) of one child run; ``src`` overrides the code under test."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    argv = [sys.executable, __file__, "--child", mode, str(root), str(state), old, new]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{mode} failed: {(proc.stdout + proc.stderr)[-2000:]}")
    out = proc.stdout.split()
    return int(out[0]) * 1024, float(out[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=200, help="file size in MB (default 200)")
    ap.add_argument("--src", help="PYTHONPATH of another tooldeck checkout to measure (e.g. main's src)")
    ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    work = Path(tempfile.mkdtemp(prefix="tooldeck-large-bench-"))
    try:
        root, state = work / "root", work / "state"
        root.mkdir()
        state.mkdir()
        size = make_file(root / "big.txt", args.mb)
        py = sys.version.split()[0]
        print(f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} cpus, Python {py}")
        print(f"file: {size / 2**20:.0f} MB, one search/replace in the middle (code: {args.src or 'this checkout'})")
        header = f"{'run':<10}{'peak RSS MB':>13}{'x file':>8}{'seconds':>9}"
        print(header)
        print("-" * len(header))
        runs = (("idle", "", ""), ("tooldeck", "MARKER = 1", "MARKER = 2"), ("baseline", "MARKER = 2", "MARKER = 1"))
        peaks: dict[str, int] = {}
        for mode, old, new in runs:
            peak, secs = measure(mode, root, state, args.src, old, new)
            peaks[mode] = peak
            print(f"{mode:<10}{peak / 2**20:>13.0f}{peak / size:>8.2f}{secs:>9.2f}")
        ratio = peaks["tooldeck"] / size  # the goal in this docstring: under 3x the file size
        report("large_edit_bench", f"apply_edits peak RSS / file size ({size / 2**20:.0f} MB)", ratio, "<", 3)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
