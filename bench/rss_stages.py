"""Where the server's memory goes over a large tree: this process's RSS,
sampled every 10 ms through the flow of ``context_speed.py`` (the cold first
build, a build during the background fills, the fills, warm builds), with
the RSS at each stage's start and end and the peak inside it. The stages
inside the fills are marked by wrapping the functions that run them: the
term-index fill, the symbol-index fill, and at its end the reference
graph's build (its edges apart) and the graph file's write.

    python bench/rss_stages.py [--tree DIR | --files N | --held-out] [--arenas 1] [--warm 6]

A diagnostic for memory work (issue 35), not a goal row: the sampling
thread costs a little CPU, so timings are ``context_speed.py``'s.
"""

from __future__ import annotations

import functools
import resource
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from context_speed import tasks_of, tree_of, tree_options


def rss() -> float:
    with open("/proc/self/status") as f:
        return next(int(ln.split()[1]) / 1024 for ln in f if ln.startswith("VmRSS:"))


class Timeline:
    """Stage marks (time, label, RSS) and the peak since the last mark, from a sampling thread."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.marks: list[tuple[float, str, float, float]] = []
        self._peak = 0.0
        self._lock = threading.Lock()
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self) -> None:
        while True:
            mb = rss()
            with self._lock:
                self._peak = max(self._peak, mb)
            time.sleep(0.01)

    def mark(self, label: str) -> None:
        now = rss()
        with self._lock:
            peak, self._peak = max(self._peak, now), now
        self.marks.append((time.monotonic() - self.t0, label, now, peak))

    def wrap(self, owner: Any, name: str, label: str) -> None:
        """Mark the start and end of every call of ``owner.name``."""
        orig: Callable[..., Any] = getattr(owner, name)

        @functools.wraps(orig)
        def marked(*args: Any, **kwargs: Any) -> Any:
            self.mark(f"{label} >")
            try:
                return orig(*args, **kwargs)
            finally:
                self.mark(f"{label} <")

        setattr(owner, name, marked)


def main() -> None:
    ap = tree_options()
    ap.add_argument("--arenas", type=int, default=1, help="glibc malloc arenas (serve's 1; 0: glibc's default)")
    ap.add_argument("--warm", type=int, default=6, help="warm builds after the fills")
    args = ap.parse_args()
    tree, made = tree_of(args)
    state = tempfile.mkdtemp(prefix="tdk-rss-stages-")
    from tooldeck.mcp.lifecycle import limit_malloc_arenas

    if args.arenas > 0:
        limit_malloc_arenas(args.arenas)
    from tooldeck.codemap.fill import IndexFill
    from tooldeck.codemap.service import codemap_service
    from tooldeck.context import graph_store, rank
    from tooldeck.context.builder import ContextBuilder
    from tooldeck.context.term_index import TermIndex
    from tooldeck.runtime import Runtime

    line = Timeline()
    line.wrap(TermIndex, "_fill", "term-index fill")
    line.wrap(IndexFill, "_fill", "symbol-index fill")
    line.wrap(rank, "build_graph", "graph build")
    line.wrap(rank, "_edges", "  its edges")
    line.wrap(graph_store, "save", "graph file write")
    try:
        rt = Runtime.for_dirs([str(tree)], state_dir=state).start()
        builder = ContextBuilder(rt)
        tasks = tasks_of(args)
        line.mark("start")
        builder.build(tasks[0], 30_000, apply=False)
        line.mark("cold first build done")
        builder.build(tasks[1], 30_000, apply=True)
        line.mark("a build during the fills done")
        fill = codemap_service(rt).filling
        if fill is not None:
            fill.wait()
        builder.terms.wait()
        line.mark("fills waited for")
        for task in tasks[2 : 2 + args.warm]:
            builder.build(task, 30_000, apply=True)
        line.mark(f"{args.warm} warm builds done")
        time.sleep(0.05)
        print(f"{'s':>7} {'RSS MB':>7} {'peak since last':>16}  stage (>: starts, <: ends)")
        for t, label, now, peak in line.marks:
            print(f"{t:7.2f} {now:7.0f} {peak:16.0f}  {label}")
        print(f"self peak (ru_maxrss) {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    finally:
        shutil.rmtree(state, ignore_errors=True)
        if made:
            shutil.rmtree(made, ignore_errors=True)


if __name__ == "__main__":
    main()
