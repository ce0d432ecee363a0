"""apply_patch throughput against a read-and-write-only baseline.

Two workloads, each at 1x, 4x and 16x:

* one big file: a 20,000-line Python file patched by 300 chunks (3 context
  lines each side, half with an ``@@ def`` anchor); 4x = 80,000 lines and
  1,200 chunks, 16x = 320,000 lines and 4,800 chunks;
* many files: 50 files of 400 lines, each patched by 3 chunks; 4x = 200
  files, 16x = 800 files.

tooldeck = the real ``apply_patch`` tool call through a Toolbox (parse,
resolve, read, hash checks, locate, plan, atomic batch write, rendered
summary). Baseline = reading every file the patch touches and writing the same
new bytes back with plain ``open().read()`` / ``open().write()``: the I/O that
cannot be avoided. Goal: ratio <= 3 and time growing linearly with size.

Run: ``/tmp/venv/bin/python bench/patch_bench.py [--quick]``. Each timing is
the best of a few runs on a freshly restored tree under a temp directory.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
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


def best_of(runs: int, setup: Callable[[], None], fn: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(runs):
        setup()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def measure(root: Path, tree: dict[str, str], patch: str, runs: int) -> tuple[float, float]:
    rt = Runtime.for_dirs([root], state_dir=root.parent / "state")
    box = Toolbox(edits.tools(rt), budget_tokens=rt.budget_tokens, count_tokens=rt.count_tokens)

    def tool() -> None:
        res = box.call_sync("apply_patch", patch)
        if res.is_error:
            raise SystemExit(f"patch failed: {res.text[:2000]}")

    setup = lambda: restore(root, tree)  # noqa: E731
    t_tool = best_of(runs, setup, tool)
    new_bytes = {rel: (root / rel).read_bytes() for rel in tree}  # the patched result, written by the baseline

    def baseline() -> None:
        for rel in tree:
            with open(root / rel, "rb") as fh:
                fh.read()
            with open(root / rel, "wb") as fh:
                fh.write(new_bytes[rel])

    t_base = best_of(runs, setup, baseline)
    return t_tool, t_base


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = ap.parse_args()
    runs = 2 if args.quick else 5
    work = Path(tempfile.mkdtemp(prefix="tooldeck-patch-bench-"))
    print(f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} cpus, Python {sys.version.split()[0]}")
    print(f"tree: generated Python files under {work} (best of {runs} runs each, fresh tree per run)")
    header = f"{'workload':<28}{'size':>5}{'files':>7}{'lines':>9}{'chunks':>8}"
    header += f"{'baseline ms':>13}{'tooldeck ms':>13}{'ratio':>7}{'us/chunk':>10}"
    print(header)
    print("-" * len(header))
    cases = (("1 file, 300 chunks", big_file_case), ("50 files, 3 chunks each", many_files_case))
    try:
        for title, make in cases:
            for scale in (1, 4, 16):
                tree, patch, chunks = make(scale)
                root = work / f"{make.__name__}-{scale}" / "root"
                root.mkdir(parents=True)
                r = 1 if scale == 16 and runs > 2 else max(1, runs - (scale // 4))
                t_tool, t_base = measure(root, tree, patch, r)
                lines = sum(t.count("\n") for t in tree.values())
                print(
                    f"{title:<28}{str(scale) + 'x':>5}{len(tree):>7}{lines:>9}{chunks:>8}"
                    f"{t_base * 1e3:>13.1f}{t_tool * 1e3:>13.1f}{t_tool / t_base:>7.1f}"
                    f"{t_tool / chunks * 1e6:>10.0f}"
                )
                shutil.rmtree(root.parent)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
