"""apply_patch throughput against a read-and-write-only baseline.

Two workloads, each at 1x, 4x and 16x:

* one big file: a 20,000-line Python file patched by 300 chunks (3 context
  lines each side, half with an ``@@ def`` anchor); 4x = 80,000 lines and
  1,200 chunks, 16x = 320,000 lines and 4,800 chunks;
* many files: 50 files of 400 lines, each patched by 3 chunks; 4x = 200
  files, 16x = 800 files.

tooldeck = the real ``apply_patch`` tool call through a Toolbox (parse,
resolve, read, hash checks, locate, plan, atomic batch write under the
per-file locks with the journal, rendered summary), awaited on one event
loop that lives across calls, as in a server. Its time ends with the reply;
the cleanup the write leaves for later (backups unlinked, journal removed)
is timed on its own, after the reply, as "cleanup ms". Two baselines:

* read+write: reading every file the patch touches and writing the same new
  bytes back with plain ``open().read()`` / ``open().write()``: the I/O that
  cannot be avoided;
* minimal applier: the same work done minimally — parse the chunks, seek each
  one's old lines in order, splice in the new lines, write via temp file +
  ``os.replace`` — so the ratio to it is tooldeck's own overhead (goal <= 1.3).

Durability is the same on every side: no file's data is fsynced (tooldeck
promises atomicity against other processes and kills, not against power
loss; see workspace/atomic.py). The one fsync tooldeck does is its journal's
intent for a batch of several files (crash recovery, which the baselines do
not offer); a single-file patch fsyncs nothing.

Each contender runs in a process of its own, started fresh for each size and
warmed up by one untimed run: the memory allocator's and the garbage
collector's state of one contender (a threshold another's big buffers
raised, a collection another's objects made due) never lands on another's
clock. Every size runs the same number of repetitions (``--runs``, default
21), the three contenders interleaved run by run so a shared machine's load
weighs on each alike; each run on a freshly restored tree under a temp
directory, the CPU time being the contender's own process's. The contenders
share that one tree (each restores it before its run; only one runs at a
time): creating a file can cost 0.02 to 1.2 ms depending on the moment, so
trees of their own gave one contender cheaper temp files than another by
chance. The table gives min and median milliseconds, ratios from medians.

What a create costs depends on the filesystem, so the header names it and a
probe times 200 creates in the tree's folder before and after the runs. On
ext4 *without a journal* (this project's VM's root disk) the kernel's inode
allocator skips every inode freed in the last 60 to 300 seconds, reading the
inode table for each (``find_inode_bit`` -> ``recently_deleted``; 34% of
perf samples in a 16x run): each run's freed inodes (tooldeck's backups
after the reply, the minimal applier's replaced files) make the next runs'
creates slower, about 0.03 ms per create at the start and 0.5-0.8 ms after a
few runs. Ext4 with a journal (mkfs's default) does not do that scan.
``bench/scratch_ext4.sh`` runs the bench on a fresh default ext4 image
(root and a loop device needed), as ``bench/run_all.sh`` does after the
run on the temp directory.

Run: ``python bench/patch_bench.py [--runs 21] [--scales 1,4,16] [--case big|many] [--dir DIR]``; each row
prints wall and CPU milliseconds as min/median/max.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import multiprocessing
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

from goals import report  # bench/ is on sys.path when a script of it runs

from tooldeck.core.toolbox import Toolbox
from tooldeck.runtime import Runtime
from tooldeck.tools import edits
from tooldeck.workspace import journal
from tooldeck.workspace.watch import mount_of

FUNC = '''def func_{i}(a, b):
    """Docstring {i}."""
    # step {i}
    total = a + b
    if total > {i}:
        return total - {i}
    for k in range(3):
        total += k
    return total

'''
LINES_PER_FUNC = 10


def source(funcs: int, offset: int = 0) -> str:
    return "".join(FUNC.format(i=offset + i) for i in range(funcs))


def chunk(i: int, anchor: bool) -> list[str]:
    """Change ``return total - i`` in func_i, with 3 context lines each side."""
    head = [f"@@ def func_{i}(a, b):"] if anchor else ["@@"]
    return [
        *head,
        f"     # step {i}",
        "     total = a + b",
        f"     if total > {i}:",
        f"-        return total - {i}",
        f"+        return total - {i} - 1",
        "     for k in range(3):",
        "         total += k",
        "     return total",
    ]


def big_file_case(scale: int) -> tuple[dict[str, str], str, int]:
    funcs = 2000 * scale
    chunks = 300 * scale
    step = funcs // chunks
    body = ["*** Update File: big.py"]
    for c in range(chunks):
        body += chunk(c * step, anchor=c % 2 == 0)
    return {"big.py": source(funcs)}, "\n".join(["*** Begin Patch", *body, "*** End Patch"]) + "\n", chunks


def many_files_case(scale: int) -> tuple[dict[str, str], str, int]:
    files = 50 * scale
    funcs = 40  # 400 lines per file
    tree: dict[str, str] = {}
    body: list[str] = []
    for f in range(files):
        name = f"pkg{f % 10}/mod_{f}.py"
        tree[name] = source(funcs, offset=f * 1000)
        body.append(f"*** Update File: {name}")
        for c in (3, 17, 31):
            body += chunk(f * 1000 + c, anchor=c == 17)
    return tree, "\n".join(["*** Begin Patch", *body, "*** End Patch"]) + "\n", files * 3


def restore(root: Path, tree: dict[str, str]) -> None:
    for rel, text in tree.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


@dataclass
class Series:
    """One contender's runs: wall and CPU seconds to the reply, and (for
    tooldeck) wall and CPU seconds of the cleanup deferred past the reply."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    after: list[float] = field(default_factory=list)
    after_cpu: list[float] = field(default_factory=list)

    def run(self, setup: Callable[[], None], fn: Callable[[], object], after: Callable[[], object] | None) -> None:
        setup()
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        self.wall.append(time.perf_counter() - t0)
        self.cpu.append(time.process_time() - c0)
        if after is not None:
            t1, c1 = time.perf_counter(), time.process_time()
            after()
            self.after.append(time.perf_counter() - t1)
            self.after_cpu.append(time.process_time() - c1)


def parse_patch(patch: str) -> list[tuple[str, list[tuple[list[str], list[str]]]]]:
    """(file, [(old lines, new lines) per chunk]) in patch order."""
    files: list[tuple[str, list[tuple[list[str], list[str]]]]] = []
    for line in patch.splitlines():
        if line.startswith("*** Update File: "):
            files.append((line[len("*** Update File: ") :], []))
        elif line.startswith("@@"):
            files[-1][1].append(([], []))
        elif files and files[-1][1] and line[:1] in (" ", "-", "+"):
            old, new = files[-1][1][-1]
            if line[0] != "+":
                old.append(line[1:])
            if line[0] != "-":
                new.append(line[1:])
    return files


def minimal_apply(root: Path, patch: str) -> None:
    """The same edit done minimally: seek each chunk after the previous one, splice, temp + rename."""
    for rel, chunks in parse_patch(patch):
        path = root / rel
        text = path.read_text()
        out: list[str] = []
        pos = 0
        for old, new in chunks:
            want = "\n".join(old) + "\n"
            at = text.find(want, pos)
            while at > 0 and text[at - 1] != "\n":  # a match must start a line
                at = text.find(want, at + 1)
            if at < 0:
                raise SystemExit(f"minimal applier: chunk not found in {rel}")
            out.append(text[pos:at])
            out.append("\n".join(new) + "\n")
            pos = at + len(want)
        out.append(text[pos:])
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text("".join(out))
        os.replace(tmp, path)


CASES: dict[str, Callable[[int], tuple[dict[str, str], str, int]]] = {}  # key -> workload maker (filled below)


def _contender(conn: Connection, who: str, key: str, scale: int, root: Path) -> None:
    """One contender's process: set up, warm up, then time one run per request."""
    tree, patch, _chunks = CASES[key](scale)
    root.mkdir(parents=True, exist_ok=True)
    setup = lambda: restore(root, tree)  # noqa: E731
    result = lambda: hashlib.sha256(b"".join((root / rel).read_bytes() for rel in sorted(tree))).hexdigest()  # noqa: E731
    after: Callable[[], object] | None = None
    if who == "tdk":
        rt = Runtime.for_dirs([root], state_dir=root.parent / f"state-{who}")
        box = Toolbox(edits.tools(rt), budget_tokens=rt.budget_tokens, count_tokens=rt.count_tokens)
        loop = asyncio.new_event_loop()  # one loop across calls, as a server has

        def run() -> None:
            res = loop.run_until_complete(box.call("apply_patch", patch))
            if res.is_error:
                raise SystemExit(f"patch failed: {res.text[:2000]}")

        def cleanup() -> None:
            if not journal.flush():
                raise SystemExit("the deferred cleanup did not finish")

        after = cleanup
    elif who == "min":

        def run() -> None:
            minimal_apply(root, patch)

    else:  # read+write: the bytes the patch makes, written back over the read file
        setup()
        minimal_apply(root, patch)
        new_bytes = {rel: (root / rel).read_bytes() for rel in tree}

        def run() -> None:
            for rel in tree:
                with open(root / rel, "rb") as fh:
                    fh.read()
                with open(root / rel, "wb") as fh:
                    fh.write(new_bytes[rel])

    series = Series()
    setup()
    run()  # warm-up: the first call builds lazy state (token counter, the allocator's thresholds...)
    if after is not None:
        after()
    conn.send(result())
    while conn.recv() == "run":
        series.run(setup, run, after)
        conn.send((series.wall[-1], series.cpu[-1], series.after[-1:], series.after_cpu[-1:]))
    conn.close()


def measure(work: Path, key: str, scale: int, runs: int) -> tuple[Series, Series, Series]:
    """tooldeck, read+write and the minimal applier, each in its own process,
    interleaved run by run (a shared machine's load then weighs on all three alike)."""
    ctx = multiprocessing.get_context("spawn")
    procs: dict[str, tuple[BaseProcess, Connection]] = {}
    out = {who: Series() for who in ("tdk", "r+w", "min")}
    digests: dict[str, str] = {}
    try:
        for who in out:  # one at a time: they share the tree, and each sets it up and warms up on it
            mine, theirs = ctx.Pipe()
            proc = ctx.Process(target=_contender, args=(theirs, who, key, scale, work / "root"), daemon=True)
            proc.start()
            procs[who] = (proc, mine)
            digests[who] = mine.recv()
        if digests["tdk"] != digests["min"]:
            raise SystemExit("the minimal applier's result differs from apply_patch's")
        for _ in range(runs):
            for who, (_proc, conn) in procs.items():
                conn.send("run")
                wall, cpu, after, after_cpu = conn.recv()
                out[who].wall.append(wall)
                out[who].cpu.append(cpu)
                out[who].after += after
                out[who].after_cpu += after_cpu
    finally:
        for proc, conn in procs.values():
            try:
                conn.send("stop")
            except OSError:
                pass
            proc.join(30)
            if proc.is_alive():
                proc.kill()
    return out["tdk"], out["r+w"], out["min"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--runs",
        type=int,
        default=21,
        help="repetitions at every scale (a 1x run is ~7-9 ms: over 11 runs its median moved 1.04-1.63)",
    )
    ap.add_argument("--scales", default="1,4,16", help="comma-separated scales (default 1,4,16)")
    ap.add_argument("--case", choices=("big", "many", "both"), default="both", help="which workload")
    ap.add_argument("--dir", default=None, help="folder to hold the temp tree (default: the system temp dir)")
    args = ap.parse_args()
    runs = args.runs
    scales = [int(x) for x in args.scales.split(",")]
    work = Path(tempfile.mkdtemp(prefix="tooldeck-patch-bench-", dir=args.dir))
    print(
        f"patch_bench — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; machine: {platform.node()} {platform.machine()}, "
        f"{os.cpu_count()} cpus, Python {sys.version.split()[0]}; load average {os.getloadavg()[0]:.2f}"
    )
    print(f"tree under {work.parent}: {filesystem_of(work)}; file create probe {create_probe(work):.3f} ms at start")
    print(f"tree: generated Python files in a temp directory; {runs} runs at every scale, interleaved, fresh tree;")
    print("each contender in its own process (own allocator and GC state); no side fsyncs file data")
    print("each row: wall ms and CPU ms (process time) as min/median/max for read+write (r+w, the I/O floor), the")
    print("minimal same-work applier (min), tooldeck to its reply (tdk) and the cleanup it defers past the reply")
    print("(backups unlinked, journal removed: cln, not in tdk); ratios of tdk to r+w and to min, from medians")
    print("(and, for CPU vs min, from minimums: the steadier figure on a shared machine)")
    header = f"{'workload':<24}{'size':>5}{'files':>6}{'chunks':>7} {'':<4}"
    header += f"{'r+w':>21}{'min':>21}{'tdk':>21}{'cln':>21}{'tdk/r+w':>9}{'tdk/min':>9}{'(mins)':>8}"
    print(header)
    print("-" * len(header))
    cases = (("1 file, 300 chunks", big_file_case, "big"), ("50 files, 3 chunks each", many_files_case, "many"))
    walls: dict[tuple[str, int], tuple[float, float, float]] = {}  # (case, scale) -> wall medians tdk, r+w, min
    try:
        for title, make, key in cases:
            if args.case not in (key, "both"):
                continue
            for scale in scales:
                tree, _patch, chunks = make(scale)
                here = work / f"{key}-{scale}"
                tool, base, mini = measure(here, key, scale, runs)
                mini_wall = statistics.median(mini.wall)
                walls[key, scale] = (statistics.median(tool.wall), statistics.median(base.wall), mini_wall)
                head = f"{title:<24}{str(scale) + 'x':>5}{len(tree):>6}{chunks:>7} "
                for label, pick in (("wall", lambda x: x.wall), ("CPU", lambda x: x.cpu)):
                    t, r, m = pick(tool), pick(base), pick(mini)
                    after = tool.after if label == "wall" else tool.after_cpu
                    mins = f"{min(t) / min(m):>8.2f}" if label == "CPU" else f"{'':>8}"
                    lead = head if label == "wall" else ""
                    print(
                        f"{lead:<43}{label:<4}{ms(r):>21}{ms(m):>21}{ms(t):>21}{ms(after):>21}"
                        f"{statistics.median(t) / statistics.median(r):>9.2f}"
                        f"{statistics.median(t) / statistics.median(m):>9.2f}{mins}"
                    )
                shutil.rmtree(here)
        print(f"file create probe {create_probe(work):.3f} ms at end ({PROBE_FILES} new 12 KB files in one folder)")
        goal_lines(walls, filesystem_of(work))
    finally:
        shutil.rmtree(work, ignore_errors=True)


PROBE_FILES = 200


def goal_lines(walls: dict[tuple[str, int], tuple[float, float, float]], fs: str) -> None:
    """The goals, from wall medians: the big file <= 1.3x the minimal applier (this
    docstring, README); the 800-file patch <= 3x read+write (README, docs/edits.md).
    Both are stated for a default, journaled ext4 (``bench/scratch_ext4.sh``): on ext4
    without a journal a create's cost follows the inodes the runs before freed (the
    module docstring; tooldeck's write creates its journal entry and a temp file, the
    minimal applier a temp file) and on tmpfs read+write does no disk I/O, so only
    there are they goal lines; elsewhere the ratios are printed, not judged."""
    judged = fs.startswith("ext4 ") and fs.endswith(", journal")
    for (key, scale), (tdk, rw, mini) in walls.items():
        if key == "big":
            what, value, limit = f"1 file, {300 * scale:,} chunks: wall / minimal applier", tdk / mini, 1.3
        elif scale == 16:
            what, value, limit = "800 files: wall / read+write", tdk / rw, 3.0
        else:
            continue
        if judged:
            report("patch_bench", f"{what} ({fs})", value, "<=", limit)
        else:
            print(f"{what}: {value:.2f}, not judged on {fs} (goal <= {limit:g} on a journaled ext4)")


def create_probe(work: Path) -> float:
    """Milliseconds per file to create, write and close 200 new 12 KB files
    in a fresh folder under ``work`` (what every atomic write pays once)."""
    folder = Path(tempfile.mkdtemp(prefix="probe-", dir=work))
    data = b"x" * 12_000
    t0 = time.perf_counter()
    for i in range(PROBE_FILES):
        fd = os.open(folder / f"f{i}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, data)
        os.close(fd)
    took = time.perf_counter() - t0
    shutil.rmtree(folder)
    return took / PROBE_FILES * 1e3


def filesystem_of(path: Path) -> str:
    """``ext4 on /dev/vda, no journal``: the type and source of the mount
    holding ``path`` and, for ext4, whether it has a journal (a
    /proc/fs/jbd2 entry for its device)."""
    mount = mount_of(os.path.realpath(path))
    if mount is None:
        return "filesystem unknown"
    text = f"{mount.fstype} on {mount.source}"
    if mount.fstype == "ext4":
        dev = os.path.basename(mount.source)
        try:
            journaled = any(name.startswith(dev + "-") for name in os.listdir("/proc/fs/jbd2"))
        except OSError:
            journaled = False
        text += ", journal" if journaled else ", no journal"
    return text


CASES.update(big=big_file_case, many=many_files_case)


def ms(xs: list[float]) -> str:
    return f"{min(xs) * 1e3:.1f}/{statistics.median(xs) * 1e3:.1f}/{max(xs) * 1e3:.1f}"


if __name__ == "__main__":
    main()
