"""context_builder speed on a large tree: p50 of warm builds (the symbol index
and codemap cache already built, as in a running server), plus the cold first
build, on a tree of ≥ 10,000 admitted files.

    python bench/context_speed.py [--tree DIR] [--budget 30000] [--reps 3]

Without --tree, a tree is assembled under /tmp from this venv's site-packages
(copied as many times as needed to pass 10,000 files after ignore rules).
Goal (issue 5): p50 under 2 s on a 10,000-file repository.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sysconfig
import tempfile
import time

from tooldeck.context.builder import ContextBuilder
from tooldeck.runtime import Runtime
from tooldeck.workspace.walk import walk_files

TASKS = [
    "fix the retry logic in the HTTP connection pool when max_retries is exceeded",
    "QueryCursor captures return nodes in the wrong order for nested patterns",
    "model_validator with mode before should see extra fields when extra is forbid",
    "the Console prints markdown tables without borders when the terminal is narrow",
    "streamable HTTP session manager leaks sessions after the idle timeout",
]


def build_tree(target: str, want: int = 10_500) -> str:
    site = sysconfig.get_paths()["purelib"]
    os.makedirs(target, exist_ok=True)
    copies = 0
    while True:
        rt = Runtime.for_dirs([target], state_dir=os.path.join(tempfile.gettempdir(), "tdk-speed-probe"))
        count = sum(1 for _ in walk_files(rt.workspace.rules(rt.workspace.primary)))
        if count >= want:
            return target
        shutil.copytree(
            site,
            os.path.join(target, f"copy{copies}"),
            symlinks=True,
            ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc"),
        )
        copies += 1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree")
    ap.add_argument("--budget", type=int, default=30_000)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    tree = args.tree or build_tree(os.path.join(tempfile.gettempdir(), "tdk-context-tree"))
    state = tempfile.mkdtemp(prefix="tdk-speed-state-")
    try:
        rt = Runtime.for_dirs([tree], state_dir=state)
        files = sum(1 for _ in walk_files(rt.workspace.rules(rt.workspace.primary)))
        builder = ContextBuilder(rt)
        t = time.perf_counter()
        first = builder.build(TASKS[0], args.budget, apply=False)
        cold = time.perf_counter() - t
        warm: list[float] = []
        stages: dict[str, list[float]] = {}
        for _ in range(args.reps):
            for task in TASKS:
                t = time.perf_counter()
                res = builder.build(task, args.budget, apply=True)
                warm.append(time.perf_counter() - t)
                for k, v in res.timings.items():
                    stages.setdefault(k, []).append(v)
        p50 = statistics.median(warm)
        print(f"context_builder speed — tree {tree}: {files:,} admitted files; budget {args.budget:,}")
        print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
        print(f"{'measure':<36}{'seconds':>10}")
        print(f"{'cold first build (index from scratch)':<36}{cold:>10.2f}")
        print(f"{'warm build p50 (' + str(len(warm)) + ' builds)':<36}{p50:>10.2f}")
        print(f"{'warm build max':<36}{max(warm):>10.2f}")
        for k in ("walk", "index", "retrieve", "rank", "measure", "fit"):
            if k in stages:
                print(f"{'  stage p50: ' + k:<36}{statistics.median(stages[k]):>10.3f}")
        print(
            f"goal p50 < 2 s: {'met' if p50 < 2 else 'NOT met'} (ratio to goal {p50 / 2:.2f}); "
            f"first build selected {len(first.selected)} files"
        )
    finally:
        shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    main()
