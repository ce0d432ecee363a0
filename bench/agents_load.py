"""Agent load: N concurrent agent sessions in one `tooldeck serve` (stdio) and the
latency of a `read_file` meanwhile, beside the same `read_file` on the idle server.

The model is the scripted OpenAI-compatible server of the test suite on
127.0.0.1 (each session: one tool call, then an answer, with small model
delays). Reported: read_file p50/p95 idle and under load (ratio), the time
until every session completed, and a check that every transcript has exactly
its entries (none lost, none duplicated).
Usage: ``python bench/agents_load.py [--sessions 20] [--calls 200]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from goals import report  # bench/ is on sys.path when a script of it runs
from mcp import ClientSession, StdioServerParameters, stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.openai_server import Reply, ScriptedOpenAI, last_user_text

DEVNULL = open(os.devnull, "w")  # noqa: SIM115 - the server's stderr stays out of the table


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))] * 1000


async def timed_reads(s: ClientSession, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        res = await s.call_tool("read_file", {"file": "probe.txt"})
        out.append(time.perf_counter() - t0)
        assert not res.is_error
    return out


async def run(args: argparse.Namespace, root: Path, state: Path, model: ScriptedOpenAI) -> int:
    """Print the table; return how many sessions' transcripts are wrong."""
    env = {**os.environ, "OPENAI_BASE_URL": model.url, "OPENAI_API_KEY": "bench", "TOOLDECK_MODEL": "scripted",
           "TOOLDECK_STATE_DIR": str(state)}  # fmt: skip
    params = StdioServerParameters(command=sys.executable, args=["-m", "tooldeck", "serve", str(root)], env=env)
    async with stdio_client(params, errlog=DEVNULL) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        await timed_reads(s, 20)  # warm up
        idle = await timed_reads(s, args.calls)
        for i in range(args.sessions):
            call = Reply.call(("read_file", {"file": f"f{i}.txt"})).calls
            model.push(
                Reply(calls=call, delay=0.3, when=lambda b, i=i: last_user_text(b) == f"task {i}"),
                Reply(text=f"done {i}", delay=0.3, when=lambda b, i=i: f'"f{i}.txt"' in str(b.get("messages"))),
            )
        t0 = time.perf_counter()
        sids = []
        for i in range(args.sessions):
            res = await s.call_tool("agent_run", {"op": "start", "message": f"task {i}", "detach": True})
            sids.append(res.structured_content["session_id"])
        loaded: list[float] = []
        while True:
            loaded += await timed_reads(s, 10)
            poll = await s.call_tool("agent_run", {"op": "poll", "session_ids": sids})
            if all(v != "running" for v in poll.structured_content["poll"]["statuses"].values()):
                break
        total = time.perf_counter() - t0
        bad = 0
        for i, sid in enumerate(sids):
            log = (await s.call_tool("agent_manage", {"op": "get_log", "session_id": sid})).structured_content
            seqs = re.findall(r'seq="(\d+)"', log["transcript_xml"])
            if seqs != ["1", "2", "3", "4"] or f"done {i}<" not in log["transcript_xml"]:
                bad += 1
    print(f"machine: {platform.machine()} {os.cpu_count()} cpus, python {platform.python_version()}")
    print(f"{args.sessions} concurrent agent sessions (1 tool call + answer each, model delays 0.3 s + 0.3 s)\n")
    print(f"{'read_file over stdio':<28}{'calls':>7}{'p50 ms':>9}{'p95 ms':>9}")
    print(f"{'idle server':<28}{len(idle):>7}{pct(idle, 50):>9.2f}{pct(idle, 95):>9.2f}")
    print(f"{'during the agent load':<28}{len(loaded):>7}{pct(loaded, 50):>9.2f}{pct(loaded, 95):>9.2f}")
    ratio = pct(loaded, 95) / pct(idle, 95)
    print(f"\np95 ratio load/idle: {ratio:.2f}x; mean idle {statistics.mean(idle) * 1000:.2f} ms")
    print(f"all {args.sessions} sessions completed in {total:.2f} s; transcripts wrong: {bad}")
    return bad


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ScriptedOpenAI() as model:
        root, state = Path(tmp) / "root", Path(tmp) / "state"
        root.mkdir()
        state.mkdir()
        (root / "probe.txt").write_text("x" * 4096)
        for i in range(args.sessions):
            (root / f"f{i}.txt").write_text(f"content {i}\n")
        bad = anyio.run(run, args, root, state, model)
    # issue 12's load test: every session completes, no transcript entry lost or duplicated (a wrong
    # transcript is one without exactly its 4 entries and its answer). The read_file p95 under load is
    # only to be reported there: no limit is stated for it, so it has no goal line.
    label = f"sessions of {args.sessions} concurrent with a wrong transcript (lost, duplicated, no answer)"
    report("agents_load", label, bad, "<=", 0, 0)


if __name__ == "__main__":
    main()
