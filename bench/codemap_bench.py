"""Codemaps on a large real tree: tooldeck cold / warm beside bare tree-sitter.

Tree: every ``.py`` file under TREE (default: this virtual environment's
site-packages), ``__pycache__`` left out, at most ``--files``. Each phase runs
in a fresh process so "cold" really is cold (imports aside: query compiling,
worker start-up and the empty cache are all inside the timing):

* baseline: a plain script (no tooldeck) reading each file, parsing it with
  tree-sitter and running the grammar wheel's own ``TAGS_QUERY`` (QueryCursor
  captures), in one process;
* cold: ``CodemapService.codemaps`` on an empty state directory (workers on
  as configured; ``TOOLDECK_CODEMAP_WORKERS=0`` for in-process);
* warm: a new process, same state directory, unchanged tree (stat cache +
  SQLite; nothing read or parsed); also the warm pass inside the cold process;
* tokens: codemap tokens / full-file tokens (``count_tokens``) and a check
  that every top-level ``def``/``class`` (Python's ``ast``) is in its codemap.

Goals: cold >= 500 files/s and <= 1.5x the baseline; warm <= 5 % of cold;
ratio <= 0.15 with no top-level definition lost; cold peak memory <= 500 MB
(parent peak + each worker's peak).

Usage: ``python bench/codemap_bench.py [TREE] [--files 3000]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DEFAULT_TREE = str(Path(sys.prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages")


def list_files(tree: str, limit: int) -> list[str]:
    rels: list[str] = []
    for dirpath, dirs, files in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                rels.append(os.path.relpath(os.path.join(dirpath, f), tree).replace(os.sep, "/"))
    return rels[:limit]


def peak_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


# phases (each in its own process) -------------------------------------------------


def phase_baseline(tree: str, rels: list[str]) -> dict:
    t0 = time.perf_counter()
    import tree_sitter
    import tree_sitter_python

    language = tree_sitter.Language(tree_sitter_python.language())
    parser = tree_sitter.Parser(language)
    query = tree_sitter.Query(language, tree_sitter_python.TAGS_QUERY)
    captures = 0
    for rel in rels:
        with open(os.path.join(tree, rel), "rb") as fh:
            data = fh.read()
        root = parser.parse(data).root_node
        captures += sum(len(v) for v in tree_sitter.QueryCursor(query).captures(root).values())
    return {"seconds": time.perf_counter() - t0, "captures": captures, "peak_mb": peak_mb(resource.RUSAGE_SELF)}


def _service(tree: str, state: str) -> Any:
    from tooldeck.codemap.service import CodemapService
    from tooldeck.runtime import Runtime

    return CodemapService(Runtime.for_dirs([tree], state_dir=state))


def phase_cold(tree: str, rels: list[str], state: str) -> dict:
    import tooldeck.codemap.service  # noqa: F401 - module import is start-up, not the pass
    from tooldeck.codemap import pool
    from tooldeck.codemap.model import Codemap

    t0 = time.perf_counter()
    svc = _service(tree, state)
    out = svc.codemaps(svc.rt.workspace.primary, rels)
    cold = time.perf_counter() - t0
    t1 = time.perf_counter()
    svc.codemaps(svc.rt.workspace.primary, rels)
    warm_same = time.perf_counter() - t1
    workers = pool.worker_count() if pool._pool is not None else 0
    pool.shutdown()
    if workers:
        time.sleep(0.5)  # let the workers exit so RUSAGE_CHILDREN holds their peak
        for _ in range(workers):
            try:
                os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
    return {
        "seconds": cold,
        "warm_same_process": warm_same,
        "parsed": svc.parse_count,
        "mapped": sum(isinstance(r, Codemap) for r in out),
        "workers": workers,
        "peak_mb": peak_mb(resource.RUSAGE_SELF),
        "worker_peak_mb": peak_mb(resource.RUSAGE_CHILDREN),
    }


def phase_warm(tree: str, rels: list[str], state: str) -> dict:
    import tooldeck.codemap.service  # noqa: F401 - module import is start-up, not the pass

    t0 = time.perf_counter()
    svc = _service(tree, state)
    svc.codemaps(svc.rt.workspace.primary, rels)
    return {"seconds": time.perf_counter() - t0, "parsed": svc.parse_count, "read": svc.read_count}


def phase_tokens(tree: str, rels: list[str], state: str) -> dict:
    import ast

    from tooldeck.codemap.model import Codemap
    from tooldeck.workspace.tokens import count_tokens

    svc = _service(tree, state)
    maps = svc.codemaps(svc.rt.workspace.primary, rels)
    full = mapped = 0
    top_defs = missing = 0
    examples: list[str] = []
    for rel, cm in zip(rels, maps, strict=True):
        if not isinstance(cm, Codemap):
            continue
        text = Path(tree, rel).read_text(encoding="utf-8", errors="replace")
        full += count_tokens(text)
        mapped += count_tokens(svc.render(cm))
        try:
            module = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        have = {s.name for s in cm.symbols if s.depth == 0}
        for node in module.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                top_defs += 1
                if node.name not in have:
                    missing += 1
                    if len(examples) < 5:
                        examples.append(f"{rel}:{node.lineno} {node.name}")
    return {
        "full_tokens": full,
        "codemap_tokens": mapped,
        "top_level_defs": top_defs,
        "missing": missing,
        "examples": examples,
        "parsed": svc.parse_count,
    }


PHASES = {"baseline": phase_baseline, "cold": phase_cold, "warm": phase_warm, "tokens": phase_tokens}


def run_phase(name: str, tree: str, listing: str, state: str) -> dict:
    cmd = [sys.executable, __file__, tree, "--phase", name, "--list", listing, "--state", state]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise SystemExit(f"phase {name} failed:\n{res.stderr}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("tree", nargs="?", default=DEFAULT_TREE)
    ap.add_argument("--files", type=int, default=3000)
    ap.add_argument("--phase", choices=sorted(PHASES))
    ap.add_argument("--list")
    ap.add_argument("--state")
    args = ap.parse_args()
    tree = os.path.realpath(args.tree)

    if args.phase:
        rels = Path(args.list).read_text(encoding="utf-8").splitlines()
        fn = PHASES[args.phase]
        result = fn(tree, rels) if args.phase == "baseline" else fn(tree, rels, args.state)
        print(json.dumps(result))
        return

    rels = list_files(tree, args.files)
    size = sum(os.path.getsize(os.path.join(tree, r)) for r in rels)
    with tempfile.TemporaryDirectory(prefix="codemap-bench-") as tmp:
        listing = os.path.join(tmp, "files.txt")
        Path(listing).write_text("\n".join(rels), encoding="utf-8")
        state = os.path.join(tmp, "state")
        for rel in rels:  # warm the OS page cache once, for every phase alike
            Path(tree, rel).read_bytes()
        base = run_phase("baseline", tree, listing, state)
        cold = run_phase("cold", tree, listing, state)
        warm = run_phase("warm", tree, listing, state)
        tok = run_phase("tokens", tree, listing, state)

    n = len(rels)
    peak = cold["peak_mb"] + cold["workers"] * cold["worker_peak_mb"]
    ratio = tok["codemap_tokens"] / max(1, tok["full_tokens"])
    cpu = platform.processor() or platform.machine()
    print(f"tree: {tree} — {n} Python files, {size / 1e6:.1f} MB")
    print(
        f"machine: {os.cpu_count()} CPUs ({cpu}), Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.2f}; workers: {cold['workers'] or 'in-process'}"
    )
    rows = [
        (
            "cold pass (s)",
            f"{base['seconds']:.2f}",
            f"{cold['seconds']:.2f}",
            cold["seconds"] / base["seconds"],
            "<= 1.5",
        ),
        ("files/s", f"{n / base['seconds']:.0f}", f"{n / cold['seconds']:.0f}", None, "≥ 500"),
        (
            "warm pass, new process (s)",
            "",
            f"{warm['seconds']:.3f}",
            warm["seconds"] / cold["seconds"],
            "≤ 0.05× cold",
        ),
        (
            "warm pass, same process (s)",
            "",
            f"{cold['warm_same_process']:.3f}",
            cold["warm_same_process"] / cold["seconds"],
            "",
        ),
        ("codemap / full-file tokens", f"{tok['full_tokens']}", f"{tok['codemap_tokens']}", ratio, "≤ 0.15"),
        ("peak memory, cold (MB)", f"{base['peak_mb']:.0f}", f"{peak:.0f}", None, "≤ 500"),
    ]
    print(f"{'measure':<30}{'baseline':>14}{'tooldeck':>14}{'ratio':>10}   goal")
    for label, b, t, r, goal in rows:
        print(f"{label:<30}{b:>14}{t:>14}{(f'{r:.3f}' if r is not None else ''):>10}   {goal}")
    print(
        f"parsed: cold {cold['parsed']}, warm {warm['parsed']} (files read: {warm['read']}); "
        f"top-level defs (ast): {tok['top_level_defs']}, missing from codemaps: {tok['missing']}"
        + (f" e.g. {tok['examples']}" if tok["examples"] else "")
    )
    print(
        "baseline = fresh process: tree_sitter Parser.parse + QueryCursor(TAGS_QUERY).captures per file; "
        f"peak memory = parent {cold['peak_mb']:.0f} MB + {cold['workers']} worker(s) × {cold['worker_peak_mb']:.0f} MB"
    )


if __name__ == "__main__":
    main()
