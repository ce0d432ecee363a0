"""Soak: ``tooldeck serve --http`` under a steady mix of calls and the
churn of clients that drop connections, for minutes (issue 30).

* steady mix: ``--sessions`` clients looping read_file, file_search,
  get_code_structure, context_builder and apply_patch (add a file, check it
  on disk, delete it, check it is gone); every call's latency is recorded;
* churn: ``--churners`` clients that cancel calls 20–350 ms in
  (``notifications/cancelled``, the stream dropped), reset raw connections
  after ``tools/call`` and open sessions they never close.

Printed: open files, threads and RSS of the server process and of its worker
processes at idle (after 20 s of the steady mix, then 5 s idle), at the end
of the load and 30 s after it; p50/p95 latency of the steady calls per
minute (per 15 s with ``--minutes`` under 3); errors; and the issue's
goals with pass/fail: 30 s after the churn open files ≤ idle + 10, threads
≤ idle + 4, server RSS ≤ idle × 1.15 + 20 MB; p50 of the last minute within
10 % of the first; 0 errors.

Usage: ``python bench/serve_soak.py [--minutes 6] [--sessions 4] [--churners 2] [--files 1500]``
(``--minutes 1`` for a short run; ``--session-idle S`` is passed to the server).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import serve_probe as probe

AFTER_S = 30.0


class Recorder:
    def __init__(self, start: float, bucket: float) -> None:
        self.start, self.bucket = start, bucket
        self.lat: dict[int, list[float]] = {}
        self.errors: list[str] = []
        self.calls = self.cancelled = self.resets = self.abandoned = 0
        self.lock = threading.Lock()

    def took(self, t0: float, seconds: float) -> None:
        with self.lock:
            self.calls += 1
            self.lat.setdefault(int((t0 - self.start) // self.bucket), []).append(seconds)

    def error(self, what: str) -> None:
        with self.lock:
            self.errors.append(what)


def _is_error(reply: dict) -> bool:
    return "error" in reply or bool(reply.get("result", {}).get("isError"))


def steady(url: str, root: Path, files: int, k: int, rec: Recorder, until: float) -> None:
    s = probe.Session(url)
    n = 0
    while time.monotonic() < until:
        n += 1
        name = f"soak/s{k}_{n}.txt"
        i = (n * 7 + k) % files
        calls = [
            ("read_file", {"path": f"pkg{i % 30}/mod{i % 7}/file{i}.py"}),
            ("file_search", {"pattern": f"compute_{n % 50}", "max_results": 20}),
            ("get_code_structure", {"paths": [f"pkg{(n + k) % 30}/mod{n % 7}"]}),
            ("apply_patch", {"input": f"*** Begin Patch\n*** Add File: {name}\n+soak {k} {n}\n*** End Patch\n"}),
            ("apply_patch", {"input": f"*** Begin Patch\n*** Delete File: {name}\n*** End Patch\n"}),
        ]
        if n % 5 == 0:
            calls.insert(0, ("context_builder", {"instructions": f"session lookup compute_{n % 50} handler"}))
        for tool, arguments in calls:
            t0 = time.monotonic()
            try:
                reply = s.call(tool, arguments)
            except Exception as exc:  # counted, the soak goes on
                rec.error(f"{tool}: {type(exc).__name__}: {exc}")
                continue
            rec.took(t0, time.monotonic() - t0)
            if _is_error(reply):
                rec.error(f"{tool}: {str(reply)[:200]}")
            elif tool == "apply_patch" and "Add File" in arguments["input"] and not (root / name).is_file():
                rec.error(f"apply_patch: {name} missing after add")
            elif tool == "apply_patch" and "Delete File" in arguments["input"] and (root / name).exists():
                rec.error(f"apply_patch: {name} still there after delete")
    s.close()


def churn(url: str, port: int, k: int, rec: Recorder, until: float) -> None:
    rnd = random.Random(k)
    while time.monotonic() < until:
        try:
            s = probe.Session(url)
            for i in range(5):
                after = rnd.uniform(0.02, 0.35)
                task = {"instructions": f"handler {k} {i} {rnd.random():.4f} request session"}
                s.call_cancelled("context_builder", task, after)
                probe.reset_call(port, s.sid, "file_search", {"pattern": f"compute_{rnd.randrange(50)}"}, after, 90 + i)
                with rec.lock:
                    rec.cancelled += 1
                    rec.resets += 1
            s.client.close()  # never DELETEd: the session is left to expire
            with rec.lock:
                rec.abandoned += 1
        except Exception as exc:  # a churner that fails is reported, not fatal
            rec.error(f"churn: {type(exc).__name__}: {exc}")


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000 if xs else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--minutes", type=float, default=6.0)
    ap.add_argument("--sessions", type=int, default=4)
    ap.add_argument("--churners", type=int, default=2)
    ap.add_argument("--files", type=int, default=1500)
    ap.add_argument("--session-idle", type=float, default=None, help="passed to serve (its default: 300 s)")
    args = ap.parse_args()
    extra = ["--session-idle", str(args.session_idle)] if args.session_idle else []
    bucket = 60.0 if args.minutes >= 3 else 15.0
    with tempfile.TemporaryDirectory() as tmp:
        root, state = Path(tmp, "root"), Path(tmp, "state")
        root.mkdir()
        state.mkdir()
        probe.make_workspace(root, args.files)
        (root / "soak").mkdir()
        with probe.served(root, state, *extra) as server:
            warm = probe.Session(server.url)
            # idle = after one round of the steady mix (20 s): the caches any use fills are counted there
            steady(server.url, root, args.files, 99, Recorder(time.monotonic(), bucket), time.monotonic() + 20)
            time.sleep(5)
            idle = probe.counts(server.pid)
            start = time.monotonic()
            until = start + args.minutes * 60
            rec = Recorder(start, bucket)
            threads = [
                threading.Thread(target=steady, args=(server.url, root, args.files, k, rec, until))
                for k in range(args.sessions)
            ]
            threads += [
                threading.Thread(target=churn, args=(server.url, server.port, k, rec, until))
                for k in range(args.churners)
            ]
            peak = idle
            for t in threads:
                t.start()
            while any(t.is_alive() for t in threads):
                time.sleep(2)
                now = probe.counts(server.pid)
                if now.fds + now.threads > peak.fds + peak.threads:
                    peak = now
            loaded = probe.counts(server.pid)
            time.sleep(AFTER_S)
            after = probe.counts(server.pid)
            warm.close()
    _report(args, bucket, rec, idle, peak, loaded, after)


def _report(
    args: argparse.Namespace, bucket: float, rec: Recorder, idle: probe.Counts, peak: probe.Counts,
    loaded: probe.Counts, after: probe.Counts,
) -> None:  # fmt: skip
    print(
        f"serve soak: {args.minutes:g} min, {args.sessions} steady sessions + {args.churners} churners, "
        f"{args.files} files; {rec.calls} steady calls, {rec.cancelled} cancelled, {rec.resets} reset, "
        f"{rec.abandoned} sessions abandoned, {len(rec.errors)} errors"
    )
    print(f"{'':<22}{'open files':>11}{'threads':>9}{'RSS MB':>8}{'workers MB':>12}{'workers':>9}")
    for label, c in (("idle", idle), ("peak under load", peak), ("end of load", loaded), ("30 s after", after)):
        print(f"{label:<22}" + "".join(f"{v:>{w}}" for v, w in zip(c.row(), (11, 9, 8, 12, 9), strict=True)))
    print(f"\n{'steady latency':<22}{'calls':>7}{'p50 ms':>9}{'p95 ms':>9}")
    buckets = sorted(rec.lat)
    for b in buckets:
        xs = rec.lat[b]
        when = f"{b * bucket / 60:.2f}–{(b + 1) * bucket / 60:.2f} min"
        print(f"{when:<22}{len(xs):>7}{_pct(xs, 0.5):>9.1f}{_pct(xs, 0.95):>9.1f}")
    first = statistics.median(rec.lat[buckets[0]]) if buckets else float("nan")
    full = [b for b in buckets if b < int(args.minutes * 60 / bucket)]  # a call started at the very end spills over
    last = statistics.median(rec.lat[full[-1]]) if full else float("nan")
    goals = [
        ("open files 30 s after ≤ idle + 10", after.fds <= idle.fds + 10, f"{after.fds} vs {idle.fds}"),
        ("threads 30 s after ≤ idle + 4", after.threads <= idle.threads + 4, f"{after.threads} vs {idle.threads}"),
        (
            "server RSS 30 s after ≤ idle × 1.15 + 20 MB",
            after.rss_mb <= idle.rss_mb * 1.15 + 20,
            f"{after.rss_mb:.0f} vs {idle.rss_mb * 1.15 + 20:.0f} MB",
        ),
        ("p50 last minute within 10 % of first", last <= first * 1.10, f"{last * 1000:.1f} vs {first * 1000:.1f} ms"),
        ("0 errors", not rec.errors, str(len(rec.errors))),
    ]
    print(f"\n{'goal':<46}{'result':>8}  measured")
    for what, ok, measured in goals:
        print(f"{what:<46}{'pass' if ok else 'FAIL':>8}  {measured}")
    for e in rec.errors[:10]:
        print("error:", e)


if __name__ == "__main__":
    main()
