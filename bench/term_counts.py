"""Term counts from the index against a ripgrep pass: same numbers, and how much faster.

The context builder's content signal needs, for a task's words, how often
each occurs in every file (whole word, ASCII case-insensitive, capped per
word). A warm build reads them from the term index (``context/term_index.py``,
SQLite FTS5); until the index is filled, a ripgrep pass counts them. This
script fills the index for context_speed's tree, then for each of its 15
tasks counts both ways and reports the time of each and the (file, task)
entries whose counts differ (expected: none).

    python bench/term_counts.py [--tree DIR] [--files 14000] [--held-out] [--detail]
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import context_speed as cs  # the same tree and tasks
from goals import report


def main() -> None:
    ap = cs.tree_options()
    ap.add_argument("--detail", action="store_true", help="print the first differing counts of each task")
    args = ap.parse_args()
    tree, made = cs.tree_of(args)
    state = Path(tempfile.mkdtemp(prefix="tdk-terms-state-"))
    from tooldeck.context.query import parse_query
    from tooldeck.context.retrieve import content_terms, start_content
    from tooldeck.context.term_index import TermIndex
    from tooldeck.context.universe import Universe
    from tooldeck.runtime import Runtime
    from tooldeck.state.terms import DB_NAME

    try:
        ws = Runtime.for_dirs([str(tree)], state_dir=state).workspace
        uni, index = Universe(), TermIndex(state)
        walked = uni.walk(ws)
        t, c = time.perf_counter(), time.process_time()
        index.refresh(ws, walked)
        index.wait()
        fill_wall, fill_cpu = time.perf_counter() - t, time.process_time() - c
        walked = uni.walk(ws)
        assert index.refresh(ws, walked), "the index did not fill"
        print(f"term_counts — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} CPUs")
        print(
            f"tree: {len(walked.files):,} files; index fill {fill_wall:.2f} s wall / {fill_cpu:.2f} s CPU; "
            f"database {(state / DB_NAME).stat().st_size / 1e6:.0f} MB"
        )
        print(f"{'task':<6}{'ripgrep ms':>12}{'index ms':>10}{'ratio':>8}{'files':>8}{'differ':>8}")
        rg_ms, ix_ms, total, differ = [], [], 0, 0
        for i, task in enumerate(cs.tasks_of(args)):
            query = parse_query(task)
            t0 = time.perf_counter()
            rg = {rel: n for _r, s in start_content(ws, query) for rel, n in s.result().items()}
            t1 = time.perf_counter()
            found = index.counts(ws, walked.files, content_terms(query))
            ix = {rel: n for _r, s in found for rel, n in s.result().items()}
            t2 = time.perf_counter()
            keys = rg.keys() | ix.keys()
            bad = sum(rg.get(k) != ix.get(k) for k in keys)
            if bad and args.detail:
                for k in sorted(k for k in keys if rg.get(k) != ix.get(k))[:5]:
                    print(f"  differs: {k}: ripgrep {dict(rg.get(k) or {})} index {dict(ix.get(k) or {})}")
            rg_ms.append((t1 - t0) * 1000)
            ix_ms.append((t2 - t1) * 1000)
            total, differ = total + len(keys), differ + bad
            print(f"{i + 1:<6}{rg_ms[-1]:>12.0f}{ix_ms[-1]:>10.0f}{ix_ms[-1] / rg_ms[-1]:>8.2f}{len(keys):>8}{bad:>8}")
        rg_ms.sort()
        ix_ms.sort()
        mid = len(rg_ms) // 2
        print(
            f"median: ripgrep {rg_ms[mid]:.0f} ms, index {ix_ms[mid]:.0f} ms ({ix_ms[mid] / rg_ms[mid]:.2f}x); "
            f"{differ} of {total:,} (file, task) counts differ"
        )
        tag = "held-out tree: " if args.held_out else ""
        report("term_counts", f"{tag}index / ripgrep, median", ix_ms[mid] / rg_ms[mid], "<=", 0.5)
        if not args.held_out:  # held out: a task's split word (Path.glob) overlaps its words (path, glob), and
            # rg counts an overlapping match once, the index (as the definition in docs/context_builder.md) each word
            report("term_counts", "(file, task) counts that differ from ripgrep", differ, "<=", 0, 0)
        index.close()
    finally:
        shutil.rmtree(state, ignore_errors=True)
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)


if __name__ == "__main__":
    main()
