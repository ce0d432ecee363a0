"""apply_patch throughput against a read-and-write-only baseline.

Two workloads, each at 1x, 4x and 16x:

* one big file: a 20,000-line Python file patched by 300 chunks (3 context
  lines each side, half with an ``@@ def`` anchor); 4x = 80,000 lines and
  1,200 chunks, 16x = 320,000 lines and 4,800 chunks;
* many files: 50 files of 400 lines, each patched by 3 chunks; 4x = 200
  files, 16x = 800 files.

tooldeck = the real ``apply_patch`` tool call through a Toolbox (parse,
resolve, read, hash checks, locate, plan, atomic batch write, rendered
summary). Two baselines:

* read+write: reading every file the patch touches and writing the same new
  bytes back with plain ``open().read()`` / ``open().write()``: the I/O that
  cannot be avoided;
* minimal applier: the same work done minimally — parse the chunks, seek each
  one's old lines in order, splice in the new lines, write via temp file +
  ``os.replace`` — so the ratio to it is tooldeck's own overhead (goal <= 1.3).

Every scale runs the same number of repetitions (``--runs``, default 5);
the table gives min and median milliseconds, ratios from medians, each run on
a freshly restored tree under a temp directory.

Run: ``python bench/patch_bench.py [--runs 5]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from tooldeck.core.toolbox import Toolbox
from tooldeck.runtime import Runtime
from tooldeck.tools import edits

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


CPU: dict[int, list[float]] = {}  # id(list of wall times) -> CPU times of the same runs


def timed(runs: int, setup: Callable[[], None], fn: Callable[[], object]) -> list[float]:
    """Wall times of ``runs`` runs; their CPU times (this process) go to CPU[id(result)]."""
    out: list[float] = []
    cpu: list[float] = []
    for _ in range(runs):
        setup()
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        out.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    CPU[id(out)] = cpu
    return out


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


def measure(root: Path, tree: dict[str, str], patch: str, runs: int) -> tuple[list[float], list[float], list[float]]:
    rt = Runtime.for_dirs([root], state_dir=root.parent / "state")
    box = Toolbox(edits.tools(rt), budget_tokens=rt.budget_tokens, count_tokens=rt.count_tokens)

    def tool() -> None:
        res = box.call_sync("apply_patch", patch)
        if res.is_error:
            raise SystemExit(f"patch failed: {res.text[:2000]}")

    setup = lambda: restore(root, tree)  # noqa: E731
    t_tool = timed(runs, setup, tool)
    new_bytes = {rel: (root / rel).read_bytes() for rel in tree}  # the patched result, written by the baseline
    t_min = timed(runs, setup, lambda: minimal_apply(root, patch))
    if {rel: (root / rel).read_bytes() for rel in tree} != new_bytes:
        raise SystemExit("the minimal applier's result differs from apply_patch's")

    def baseline() -> None:
        for rel in tree:
            with open(root / rel, "rb") as fh:
                fh.read()
            with open(root / rel, "wb") as fh:
                fh.write(new_bytes[rel])

    t_base = timed(runs, setup, baseline)
    return t_tool, t_base, t_min


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="repetitions at every scale")
    args = ap.parse_args()
    runs = args.runs
    work = Path(tempfile.mkdtemp(prefix="tooldeck-patch-bench-"))
    print(
        f"patch_bench — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; machine: {platform.node()} {platform.machine()}, "
        f"{os.cpu_count()} cpus, Python {sys.version.split()[0]}; load average {os.getloadavg()[0]:.2f}"
    )
    print(f"tree: generated Python files in a temp directory; {runs} runs at every scale, fresh tree per run")
    print("ms = min/median wall; ratios from medians: vs read+write (I/O floor) and vs the minimal same-work applier;")
    print("CPU ms = median process CPU time (the machine may be shared: CPU is the steadier figure)")
    header = f"{'workload':<26}{'size':>5}{'files':>6}{'lines':>8}{'chunks':>7}"
    header += f"{'read+write ms':>16}{'minimal ms':>16}{'tooldeck ms':>16}{'vs r+w':>8}{'vs min':>8}"
    header += f"{'min CPU ms':>12}{'tdk CPU ms':>12}{'CPU vs min':>11}"
    print(header)
    print("-" * len(header))
    cases = (("1 file, 300 chunks", big_file_case), ("50 files, 3 chunks each", many_files_case))
    try:
        for title, make in cases:
            for scale in (1, 4, 16):
                tree, patch, chunks = make(scale)
                root = work / f"{make.__name__}-{scale}" / "root"
                root.mkdir(parents=True)
                t_tool, t_base, t_min = measure(root, tree, patch, runs)
                lines = sum(t.count("\n") for t in tree.values())
                cpu_tool, cpu_min = statistics.median(CPU[id(t_tool)]), statistics.median(CPU[id(t_min)])
                med = {k: statistics.median(v) for k, v in (("tool", t_tool), ("base", t_base), ("min", t_min))}
                print(
                    f"{title:<26}{str(scale) + 'x':>5}{len(tree):>6}{lines:>8}{chunks:>7}"
                    f"{ms(t_base):>16}{ms(t_min):>16}{ms(t_tool):>16}"
                    f"{med['tool'] / med['base']:>8.1f}{med['tool'] / med['min']:>8.2f}"
                    f"{cpu_min * 1e3:>12.1f}{cpu_tool * 1e3:>12.1f}{cpu_tool / cpu_min:>11.2f}"
                )
                shutil.rmtree(root.parent)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def ms(xs: list[float]) -> str:
    return f"{min(xs) * 1e3:.1f}/{statistics.median(xs) * 1e3:.1f}"


if __name__ == "__main__":
    main()
