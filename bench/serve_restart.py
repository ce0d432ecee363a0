"""What a restart of ``tooldeck serve --http`` costs, on a workspace whose
caches (codemaps, symbol index, term index, context graph) a first server
filled: the server's CPU seconds from spawn until it listens, until the
first ``context_builder`` (and ``get_code_structure``) is answered, and its
RSS then; the first (cold) server beside the restarted (warm) one, same
work both sides. Usage: ``python bench/serve_restart.py [--files 3000] [--restarts 3]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import serve_probe as probe


def one(root: Path, state: Path) -> dict[str, float]:
    t0 = time.perf_counter()
    server = probe.spawn(root, state)
    try:
        out = {"listen_s": time.perf_counter() - t0, "listen_cpu": probe.cpu_seconds(server.pid)}
        s = probe.Session(server.url)
        t1 = time.perf_counter()
        s.call("context_builder", {"instructions": "session lookup handler compute request"})
        out["build_s"] = time.perf_counter() - t1
        s.call("get_code_structure", {"paths": ["pkg1"]})
        out["first_calls_cpu"] = probe.cpu_seconds(server.pid)
        out["rss_mb"] = probe.counts(server.pid).rss_mb
        s.close()
        return out
    finally:
        probe.stop(server)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--files", type=int, default=3000)
    ap.add_argument("--restarts", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root, state = Path(tmp, "root"), Path(tmp, "state")
        root.mkdir()
        state.mkdir()
        probe.make_workspace(root, args.files)
        cold = one(root, state)
        time.sleep(3)  # the first server's background fills are done or dropped
        one(root, state)  # caches written by a server that lived through its fills
        warm = [one(root, state) for _ in range(args.restarts)]
    print(f"serve restart, {args.files} files, median of {args.restarts} restarts")
    print(f"{'measure':<34}{'first start':>14}{'restart':>12}{'ratio':>8}")
    for key, label in (
        ("listen_s", "spawn → listening (s)"),
        ("listen_cpu", "server CPU to listening (s)"),
        ("build_s", "first context_builder (s)"),
        ("first_calls_cpu", "server CPU after first calls (s)"),
        ("rss_mb", "server RSS after first calls (MB)"),
    ):
        w = statistics.median(r[key] for r in warm)
        ratio = w / cold[key] if cold[key] else float("nan")
        print(f"{label:<34}{cold[key]:>14.2f}{w:>12.2f}{ratio:>8.2f}")


if __name__ == "__main__":
    main()
