"""Warm context_builder builds on a git checkout (co-change history in play).

context_speed.py measures copied trees, which have no history: the co-change
lift (context/cochange.py) never runs there. This measures a real checkout:
a clone of REPO at its newest commit, one cold build, then warm builds of the
messages of its newest qualifying commits as tasks; wall and this thread's
CPU per build, p50, with the machine load printed.

    python bench/context_repo_speed.py REPO [--builds 15]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from context_eval import sample_commits

from tooldeck.context.builder import ContextBuilder
from tooldeck.runtime import Runtime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("--builds", type=int, default=15)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="tdk-repo-speed-")
    try:
        wt = os.path.join(work, "tree")
        subprocess.run(["git", "clone", "-q", args.repo, wt], check=True)
        tasks = [c.message for c in sample_commits(wt, args.builds)]
        b = ContextBuilder(Runtime.for_dirs([wt], state_dir=os.path.join(work, "state")))
        load0 = os.getloadavg()[0]
        t, c = time.perf_counter(), time.thread_time()
        b.build(tasks[0], 30_000, apply=False)
        cold = (time.perf_counter() - t, time.thread_time() - c)
        walls, cpus, ranks = [], [], []
        for task in tasks:
            t, c = time.perf_counter(), time.thread_time()
            r = b.build(task, 30_000, apply=False)
            walls.append(time.perf_counter() - t)
            cpus.append(time.thread_time() - c)
            ranks.append(r.cpu.get("rank", 0.0))
        print(
            f"{os.path.basename(args.repo.rstrip('/'))}: {len(tasks)} warm builds, load {load0:.1f} -> "
            f"{os.getloadavg()[0]:.1f}; cold {cold[0]:.2f} s wall / {cold[1]:.2f} s CPU; warm p50 "
            f"{statistics.median(walls):.3f} s wall / {statistics.median(cpus):.3f} s CPU "
            f"(rank stage {statistics.median(ranks):.3f} s CPU)"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
