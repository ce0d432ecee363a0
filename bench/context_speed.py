"""context_builder speed on a large tree of DISTINCT files: the cold first build
(empty state directory: walk, symbol index, codemaps all from scratch), then
warm builds of 15 distinct tasks (index and codemap cache built, as in a
running server), with wall and CPU time (this process, finished children and
live codemap workers), the RSS after the builds (this process + live workers)
and the peak.

    python bench/context_speed.py [--tree DIR] [--files 14000] [--budget 30000] [--reps 1]

Without --tree, a tree is assembled under the temp directory from this venv's
site-packages plus the mixed corpus of bench/setup_corpora.sh (Go, Rust, Java,
TypeScript, JavaScript), every file's content distinct (deduplicated by
SHA-1), paths kept, until --files files (14,000 copied: ~12,900 admitted by
the ignore rules, the issue's >= 12,000). After the builds, ten
``manage_selection`` adds go through the real tool path (goal p50 <= 50 ms). Goals (issues 14, 35): cold
<= 12 s, warm p50 <= 0.5 s wall and CPU, builds during the fills (``--during`` of them, back to back after
the first) p50 <= 0.5 s, printed beside the warm builds after the fills stage by stage, RSS after indexing and
the builds (server + workers) <= 300 MB. ``--held-out``: the tree of ``heldout_tree.py`` (site-packages +
stdlib, 8,000 files) with that tree's own tasks. ``--gap S``: S seconds before each build during the fills
(a user reading the answer first; back to back is the worst case); with it only the builds during the
fills get goal lines (run_all.sh runs both: back to back, and 2 s apart).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
import shutil
import statistics
import sys
import sysconfig
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from goals import report
from heldout_tree import TASKS as HELDOUT_TASKS
from heldout_tree import build_heldout, copy_distinct

HERE = Path(__file__).resolve().parent
CORPORA = Path(os.environ.get("TOOLDECK_BENCH_CORPORA", HERE / ".corpora"))
SOURCES = {
    "site-packages": Path(sysconfig.get_paths()["purelib"]),
    "go": Path("/usr/share/go-1.19/src"),
    "rust": Path("/usr/share/cargo/registry"),
    "java": CORPORA / "java",
    "npm": CORPORA / "npm" / "node_modules",
}
KEEP = (".py", ".go", ".rs", ".java", ".ts", ".js", ".md", ".rst", ".toml", ".txt")
SKIP_DIRS = {"__pycache__", ".git", "testdata", ".bin"}

TASKS = [
    "fix the retry logic in the HTTP connection pool when max_retries is exceeded",
    "QueryCursor captures return nodes in the wrong order for nested patterns",
    "model_validator with mode before should see extra fields when extra is forbid",
    "the Console prints markdown tables without borders when the terminal is narrow",
    "streamable HTTP session manager leaks sessions after the idle timeout",
    "pytest fixture teardown order is wrong when a parametrized fixture fails in setup",
    "TLS handshake in crypto/tls should reject a server certificate with an expired intermediate",
    "net/http Server Shutdown does not wait for hijacked connections to close",
    "tokio runtime blocking pool threads are not joined when the runtime is dropped",
    "regex crate: a case-insensitive character class with Unicode ranges matches too much",
    "serde derive: deny_unknown_fields is ignored on a flattened struct",
    "ConcurrentHashMap computeIfAbsent deadlocks when the mapping function updates the map",
    "rxjs switchMap does not unsubscribe the inner observable when the outer completes",
    "zod discriminatedUnion error message should name the expected discriminator values",
    "jinja2 template loader caches a stale template after the file changes on disk",
]


def build_tree(target: Path, want: int) -> Path:
    """Copy files of distinct content from the sources, round-robin, until ``want``."""
    return copy_distinct(SOURCES, target, want, KEEP, lambda d: d in SKIP_DIRS, max_bytes=500_000, exact=False)


def children() -> list[int]:
    """Live child processes (codemap workers; rg runs are waited for)."""
    out: list[int] = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children") as f:
                out.extend(int(p) for p in f.read().split())
        except OSError:
            continue
    return out


def _proc(pid: int) -> tuple[float, float]:
    """(CPU seconds, RSS MB) of a live process, from /proc."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        with open(f"/proc/{pid}/status") as f:
            rss = next((int(ln.split()[1]) / 1024 for ln in f if ln.startswith("VmRSS:")), 0.0)
        return cpu, rss
    except (OSError, ValueError, IndexError):
        return 0.0, 0.0


def cpu_seconds() -> float:
    """This process + its finished children + its live children (the codemap
    workers run for seconds and may still be alive: they count too)."""
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime + sum(_proc(p)[0] for p in children())


def settle(timeout: float = 5.0) -> None:
    """Wait for released workers to exit (their CPU then moves to RUSAGE_CHILDREN)."""
    from tooldeck.codemap import pool

    end = time.monotonic() + timeout
    while pool._pool is None and children() and time.monotonic() < end:
        time.sleep(0.05)


def rss_mb() -> tuple[float, float, int]:
    """(this process's RSS, live children's RSS summed, live children) now, MB."""
    with open("/proc/self/status") as f:
        own = next(int(ln.split()[1]) / 1024 for ln in f if ln.startswith("VmRSS:"))
    kids = children()
    return own, sum(_proc(p)[1] for p in kids), len(kids)


def spread(xs: list[float]) -> str:
    return f"{min(xs):.2f}/{statistics.median(xs):.2f}/{max(xs):.2f}"


def selection_changes(rt: object, paths: list[str], n: int = 10) -> tuple[list[float], list[float]]:
    """Time ``manage_selection`` adds through the real tool path (catalog call:
    validation, the selection saved to SQLite, automatic codemaps recomputed
    from the reference index, the token breakdown of the reply), one file
    added per call to a selection of the last build's files."""
    from tooldeck.catalog import build_toolbox

    box = build_toolbox(rt)  # type: ignore[arg-type]
    base, extra = paths[:4], paths[4 : 4 + n]
    res = box.call_sync("manage_selection", json.dumps({"op": "set", "paths": base, "auto_codemaps": True}))
    assert not res.is_error, res.text
    wall: list[float] = []
    cpu: list[float] = []
    for p in extra:
        t, c = time.perf_counter(), cpu_seconds()
        res = box.call_sync("manage_selection", json.dumps({"op": "add", "paths": [p]}))
        wall.append(time.perf_counter() - t)
        cpu.append(cpu_seconds() - c)
        assert not res.is_error, res.text
    return wall, cpu


# RSS after the builds on the 13,966-file bench tree before issue 35's changes (commit b31a06e,
# 2026-12-05, this machine): the "before" column
RSS_BEFORE = {"after the builds (self + workers)": 329.0, "self peak": 548.0}


def rss_table(at: dict[str, float], after: float, peak: float) -> None:
    """Resident memory (self + live workers) by stage, beside the figure before issue 35 and the goal."""
    print(f"{'RSS MB':<40}{'before (b31a06e)':>18}{'now':>18}{'goal':>10}")
    for stage, mb in at.items():
        print(f"{'  ' + stage:<40}{'':>18}{mb:>18.0f}")
    rows = [("after the builds (self + workers)", after, "<= 300"), ("self peak", peak, "<= 400")]
    for stage, mb, goal in rows:
        print(f"{'  ' + stage:<40}{RSS_BEFORE[stage]:>18.0f}{mb:>18.0f}{goal:>10}")


def tree_options() -> argparse.ArgumentParser:
    """``--tree DIR`` or ``--files N`` (a tree assembled here): this script's and term_counts.py's."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree")
    ap.add_argument("--files", type=int, default=None, help="files copied (default 14,000; 8,000 held out)")
    ap.add_argument(
        "--held-out",
        action="store_true",
        help="site-packages + stdlib only (bench/heldout_tree.py) and that tree's own 15 tasks",
    )
    return ap


def tree_of(args: argparse.Namespace) -> tuple[Path, Path | None]:
    """The tree to measure, and the temp folder to remove after (None: the caller's ``--tree``)."""
    if args.tree:
        return Path(args.tree), None
    made = Path(tempfile.mkdtemp(prefix="tdk-context-tree-"))
    if args.held_out:
        return build_heldout(made / "tree", args.files or 8000), made
    return build_tree(made / "tree", args.files or 14_000), made


def tasks_of(args: argparse.Namespace) -> list[str]:
    return HELDOUT_TASKS if args.held_out else TASKS


STAGES = ("walk", "retrieve", "index", "rank", "measure", "fit", "apply")


class Builds:
    """Wall and CPU time of a series of builds, per build and per stage, and what each selected."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.stages: dict[str, list[float]] = {}
        self.stage_cpu: dict[str, list[float]] = {}
        self.selected: dict[str, list[str]] = {}
        self.term_index_ready: list[bool] = []  # builds during the fills: counted from the term index, not rg
        self.digest = hashlib.sha1()  # every choice (path, mode, tokens, ranges, reason), omitted ones too

    def add(self, task: str, wall: float, cpu: float, res: object) -> None:
        self.wall.append(wall)
        self.cpu.append(cpu)
        for k, v in res.timings.items():  # type: ignore[attr-defined]
            self.stages.setdefault(k, []).append(v)
        for k, v in res.cpu.items():  # type: ignore[attr-defined]
            self.stage_cpu.setdefault(k, []).append(v)
        self.selected[task] = [c.candidate.key for c in res.selected]  # type: ignore[attr-defined]
        for c in res.choices:  # type: ignore[attr-defined]
            self.digest.update(repr((task, c.candidate.key, c.mode, c.tokens, c.ranges, c.why)).encode())

    def p50(self, stage: str | None = None) -> tuple[float, float]:
        if stage is None:
            return statistics.median(self.wall), statistics.median(self.cpu)
        wall, cpu = self.stages.get(stage), self.stage_cpu.get(stage)
        return (statistics.median(wall) if wall else float("nan")), (statistics.median(cpu) if cpu else float("nan"))


def fills_running(rt: object, builder: object) -> bool:
    """The symbol-index fill (or the graph built at its end) or the term-index fill still running."""
    from tooldeck.codemap.service import codemap_service

    fill = codemap_service(rt).filling  # type: ignore[arg-type]
    return (fill is not None and not fill.finished) or not builder.terms.ready_for(rt.workspace)  # type: ignore[attr-defined]


def builds_during_fills(rt: object, builder: object, tasks: list[str], budget: int, gap: float = 0.0) -> Builds:
    """Builds made back to back right after the first one, while the background fills run
    (a user's next questions): the ones that started before the fills ended. CPU: the building
    thread's own plus the processes it waited for (ripgrep); the fill's niced workers and
    threads are not the build's."""
    out = Builds()
    for task in tasks:
        time.sleep(gap)  # --gap: the user reads the answer first; the fills run meanwhile
        if not fills_running(rt, builder):
            break
        out.term_index_ready.append(builder.terms.ready_for(rt.workspace))  # type: ignore[attr-defined]
        t, c, ch = time.perf_counter(), time.thread_time(), _reaped()
        res = builder.build(task, budget, apply=True)  # type: ignore[attr-defined]
        out.add(task, time.perf_counter() - t, time.thread_time() - c + _reaped() - ch, res)
    return out


def _reaped() -> float:
    """CPU of finished children and of the helpers the launcher ran (rg runs there when bubblewrap
    is present: not this process's children, so not in RUSAGE_CHILDREN; before 2026-12-06 the
    builds during the fills were measured without it)."""
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return c.ru_utime + c.ru_stime + _launched()


def _launched() -> float:
    try:
        from tooldeck.confine import helpers  # lazy: the code measured may be another checkout's
    except ImportError:
        return 0.0
    return helpers.launched_cpu_seconds() if hasattr(helpers, "launched_cpu_seconds") else 0.0


def overlap(during: Builds, after: Builds) -> tuple[float, float]:
    """Mean Jaccard of the files selected during and after the fills for the same tasks, and
    the share of the after-fills top 5 that the build during the fills selected too."""
    common = [t for t in during.selected if t in after.selected]
    if not common:
        return float("nan"), float("nan")
    jac, top = [], []
    for t in common:
        d, a = set(during.selected[t]), after.selected[t]
        jac.append(len(d & set(a)) / max(1, len(d | set(a))))
        top.append(len(set(a[:5]) & d) / max(1, len(a[:5])))
    return statistics.mean(jac), statistics.mean(top)


def print_builds(during: Builds, after: Builds, goal: float = 0.5) -> None:
    """The p50 of the builds during the fills beside those after them and the goal, as ratios."""
    print(
        f"{'p50 wall / CPU s':<28}{f'during the fills ({len(during.wall)})':>24}"
        f"{f'after the fills ({len(after.wall)})':>24}"
        f"{'goal':>8}{'during/after':>16}{'during/goal':>16}"
    )
    rows = [("build", None)] + [(f"  stage: {k}", k) for k in STAGES]
    for label, stage in rows:
        (dw, dc), (aw, ac) = (during.p50(stage) if during.wall else (float("nan"),) * 2), after.p50(stage)
        ratio = f"{dw / aw:.2f} / {dc / ac:.2f}" if aw and ac else ""
        to_goal = f"{dw / goal:.2f} / {dc / goal:.2f}" if stage is None else ""
        print(
            f"{label:<28}{f'{dw:.3f} / {dc:.3f}':>24}{f'{aw:.3f} / {ac:.3f}':>24}"
            f"{(f'<= {goal}' if stage is None else ''):>8}{ratio:>16}{to_goal:>16}"
        )
    if during.wall:
        print(f"{'  min / max':<28}{spread(during.wall) + ' wall':>24}{spread(after.wall) + ' wall':>24}")
    jac, top = overlap(during, after)
    print(
        f"  selection, same tasks during vs after the fills: Jaccard {jac:.2f}, "
        f"after-fills top 5 also selected {top:.2f}"
    )
    if during.term_index_ready:
        print(
            f"  builds during the fills counted from the term index (no rg): "
            f"{sum(during.term_index_ready)} of {len(during.term_index_ready)}"
        )
    print(f"  choices of the builds after the fills: sha1 {after.digest.hexdigest()[:12]}")
    print(
        "  (stage CPU: the building thread's own; build CPU during the fills adds the ripgrep it waited for,"
        " also when the launcher ran it)"
    )


def main() -> None:
    ap = tree_options()
    ap.add_argument("--budget", type=int, default=30_000)
    ap.add_argument("--reps", type=int, default=1, help="passes over the 15 tasks")
    ap.add_argument("--during", type=int, default=5, help="builds right after the first one, while the fills run")
    ap.add_argument(
        "--gap", type=float, default=0.0, help="seconds before each build during the fills (default 0: back to back)"
    )
    ap.add_argument(
        "--arenas", type=int, default=1, help="glibc malloc arenas (serve's 1; 0: glibc's default, one per thread)"
    )
    args = ap.parse_args()
    tree, made = tree_of(args)
    state = tempfile.mkdtemp(prefix="tdk-speed-state-")
    from tooldeck.mcp.lifecycle import limit_malloc_arenas

    # as `tooldeck serve` does (launch.run_serve, before any thread): 1 glibc arena, so the RSS measured
    # is a server's; fewer arenas keep less freed heap per thread (2: ~15 MB more after the builds)
    limited = args.arenas > 0 and limit_malloc_arenas(args.arenas)
    arenas = f"glibc arenas: {args.arenas if limited else 'default (or MALLOC_ARENA_MAX)'}"
    from tooldeck.codemap import pool
    from tooldeck.codemap.service import codemap_service
    from tooldeck.context.builder import ContextBuilder
    from tooldeck.runtime import Runtime
    from tooldeck.workspace.walk import walk_files

    try:
        rt = Runtime.for_dirs([str(tree)], state_dir=state).start()  # as a server does before any call
        rss_at = {"at start (before indexing)": sum(rss_mb()[:2])}
        files = sum(1 for _ in walk_files(rt.workspace.rules(rt.workspace.primary)))
        builder = ContextBuilder(rt)
        t, c = time.perf_counter(), cpu_seconds()
        tasks = tasks_of(args)
        first = builder.build(tasks[0], args.budget, apply=False)
        cold = time.perf_counter() - t
        cold_cpu = cpu_seconds() - c  # live workers included (the background fill's have barely started)
        load_before = os.getloadavg()[0]
        # a user's next questions come seconds after the first: builds while the fills run
        during = builds_during_fills(rt, builder, tasks[1 : 1 + args.during], args.budget, args.gap)
        # a large tree's first build indexes only its top candidates and fills the rest of the symbol
        # index (and the term index) in the background: wait for both, so the warm builds below run on
        # the complete indexes
        t, c = time.perf_counter(), cpu_seconds()
        fill = codemap_service(rt).filling
        if fill is not None:
            fill.wait()
        builder.terms.wait()
        fill_wall = time.perf_counter() - t
        settle()
        rss_at["after the fills"] = sum(rss_mb()[:2])
        fill_cpu = cpu_seconds() - c
        after = Builds()
        for _ in range(args.reps):
            for task in tasks:
                t, c = time.perf_counter(), cpu_seconds()
                res = builder.build(task, args.budget, apply=True)
                after.add(task, time.perf_counter() - t, cpu_seconds() - c, res)
        warm, warm_cpu = after.wall, after.cpu
        sel_wall, sel_cpu = selection_changes(rt, [c.candidate.key for c in res.selected])
        own_now, kids_now, kids = rss_mb()  # after indexing and the builds, workers (if any) included
        if pool._pool is not None:
            pool._pool.shutdown(wait=True)
            pool._pool = None
        self_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"context_speed — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; machine: {platform.node()}, "
            f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
            f"load average {load_before:.2f} at the first build, {os.getloadavg()[0]:.2f} now "
            f"({Path('/proc/loadavg').read_text().strip()})"
        )
        kind = " (held out: site-packages + stdlib)" if args.held_out else " (site-packages + mixed corpus)"
        print(
            f"tree: {files:,} admitted files of distinct content"
            f"{kind if made else f' at {tree}'}; budget {args.budget:,} tokens"
        )
        print(f"{'measure':<40}{'wall s':>18}{'CPU s':>18}{'goal':>10}")
        print(f"{'cold first build (empty state)':<40}{cold:>18.2f}{cold_cpu:>18.2f}{'<= 12':>10}")
        print(f"{'  then the background index fills':<40}{fill_wall:>18.2f}{fill_cpu:>18.2f}{'':>10}")
        print(
            f"{f'warm builds, {len(warm)} (min/p50/max)':<40}{spread(warm):>18}{spread(warm_cpu):>18}{'p50 <= 0.5':>12}"
        )
        print_builds(during, after)
        print(
            f"{f'selection change, {len(sel_wall)} (min/p50/max) ms':<40}"
            f"{spread([x * 1000 for x in sel_wall]):>18}{spread([x * 1000 for x in sel_cpu]):>18}{'p50 <= 50':>10}"
        )
        rss_table(rss_at, own_now + kids_now, self_mb)
        # children's ru_maxrss counts the parent's image they were forked from: not a worker's own peak
        print(
            f"now: self {own_now:.0f} MB + {kids} live child process(es) {kids_now:.0f} MB; "
            f"self peak {self_mb:.0f} MB; "
            f"first build selected {len(first.selected)} files; {arenas}"
        )
        tag = "held-out tree: " if args.held_out else ""
        if args.gap:  # the other lines come from the back-to-back run (run_all.sh runs both)
            if during.wall:
                d_wall, d_cpu = during.p50()
                apart = f"{tag}builds during the fills, {args.gap:g} s apart, p50"
                report("context_speed", f"{apart}, wall s", d_wall, "<=", 0.5)
                report("context_speed", f"{apart}, CPU s", d_cpu, "<=", 0.5)
            return
        report("context_speed", f"{tag}warm build p50, wall s", statistics.median(warm), "<=", 0.5)
        report("context_speed", f"{tag}warm build p50, CPU s", statistics.median(warm_cpu), "<=", 0.5)
        if during.wall:
            d_wall, d_cpu = during.p50()
            report("context_speed", f"{tag}builds during the fills p50, wall s", d_wall, "<=", 0.5)
            report("context_speed", f"{tag}builds during the fills p50, CPU s", d_cpu, "<=", 0.5)
        report("context_speed", f"{tag}cold first build, wall s", cold, "<=", 12)
        report("context_speed", f"{tag}selection change p50, ms", statistics.median(sel_wall) * 1000, "<=", 50, 1)
        report("context_speed", f"{tag}RSS after the builds, MB", own_now + kids_now, "<=", 300, 0)
        report("context_speed", f"{tag}RSS peak (self), MB", self_mb, "<=", 400, 0)
    finally:
        shutil.rmtree(state, ignore_errors=True)
        if made:
            shutil.rmtree(made, ignore_errors=True)


if __name__ == "__main__":
    main()
