"""MCP round trip: `read_file` of a 4 KB file over stdio, tooldeck beside two baselines.

* reference: the official filesystem server (`@modelcontextprotocol/server-filesystem`,
  tool `read_text_file`), installed by npm into bench/.corpora/npm by
  ``bench/setup_corpora.sh`` and run with ``node`` directly (never npx: its
  own start-up and registry check are not the server's);
* bare SDK: a low-level Python SDK server with one trivial tool (returns the file text);
* tooldeck: `python -m tooldeck serve DIR` (its handshake cache warm: the
  first, untimed spawn records it);
* tooldeck, no cache: the same with ``TOOLDECK_HANDSHAKE_CACHE=0`` (what a
  first start, or a changed configuration, costs); timed for spawns only.

All three are driven by the same Python SDK client in the same run. Calls are
interleaved in blocks (server A 50 calls, B 50, C 50, repeat) so machine noise
hits each server alike. Also timed: spawn → initialized (median of several
spawns), with min/max and the server's CPU time per spawn (its whole life:
start-up included, until the client closed it). Usage:
``python bench/mcp_roundtrip.py [--calls 500] [--spawns 5]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import resource
import shutil
import statistics
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import anyio
from goals import report as goal_line  # bench/ is on sys.path when a script of it runs
from mcp import ClientSession, StdioServerParameters, stdio_client

DEVNULL = open(os.devnull, "w")  # noqa: SIM115 - servers' stderr chatter stays out of the table
BARE_SERVER = textwrap.dedent(
    """
    import sys
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    TOOL = types.Tool(
        name="read_text_file",
        description="Read a text file.",
        input_schema={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    )

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=[TOOL])

    async def call_tool(ctx, params):
        with open(params.arguments["path"], encoding="utf-8") as fh:
            return types.CallToolResult(content=[types.TextContent(text=fh.read())])

    async def main():
        server = Server("bare", on_list_tools=list_tools, on_call_tool=call_tool)
        async with stdio_server() as (r, w):
            await server.run(r, w, server.create_initialization_options())

    anyio.run(main)
    """
)


@dataclass
class Subject:
    name: str
    params: StdioServerParameters
    tool: str
    arguments: dict[str, object]
    command: str
    calls: bool = True  # timed for calls too (else spawns only)
    spawn_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    listed_ms: list[float] = field(default_factory=list)
    call_ms: list[float] = field(default_factory=list)


def make_tree(base: Path) -> Path:
    root = base / "root"
    root.mkdir()
    line = "the quick brown fox jumps over the lazy dog 0123456789\n"  # 55 bytes
    text = (line * 80)[:4096]
    (root / "file4k.txt").write_text(text)
    return root


CORPORA = Path(os.environ.get("TOOLDECK_BENCH_CORPORA", Path(__file__).resolve().parent / ".corpora"))
REFERENCE = CORPORA / "npm" / "node_modules" / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"


def reference_command(root: Path) -> tuple[str, list[str]]:
    node = shutil.which("node")
    if not node or not REFERENCE.is_file():
        raise SystemExit(f"reference server not installed ({REFERENCE}): run bench/setup_corpora.sh first")
    return "node", [str(REFERENCE), str(root)]


def subjects(root: Path, work: Path) -> list[Subject]:
    target = str(root / "file4k.txt")
    bare = work / "bare_server.py"
    bare.write_text(BARE_SERVER)
    env = {**os.environ, "TOOLDECK_STATE_DIR": str(work / "state")}
    ref_cmd, ref_args = reference_command(root)
    out = [
        Subject(
            "reference (node)",
            StdioServerParameters(command=ref_cmd, args=ref_args, env=env),
            "read_text_file",
            {"path": target},
            "node bench/.corpora/npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js DIR",
        ),
        Subject(
            "bare Python SDK",
            StdioServerParameters(command=sys.executable, args=[str(bare)], env=env),
            "read_text_file",
            {"path": target},
            "python bare_server.py (lowlevel Server, one tool)",
        ),
        Subject(
            "tooldeck",
            StdioServerParameters(
                command=sys.executable,
                args=["-m", "tooldeck", "serve", str(root), "--state-dir", str(work / "state")],
                env=env,
            ),
            "read_file",
            {"path": "file4k.txt"},
            "python -m tooldeck serve DIR",
        ),
        Subject(
            "tooldeck no cache",
            StdioServerParameters(
                command=sys.executable,
                args=["-m", "tooldeck", "serve", str(root), "--state-dir", str(work / "state")],
                env={**env, "TOOLDECK_HANDSHAKE_CACHE": "0"},
            ),
            "read_file",
            {"path": "file4k.txt"},
            "TOOLDECK_HANDSHAKE_CACHE=0 python -m tooldeck serve DIR",
            calls=False,
        ),
    ]
    return out


def children_cpu_ms() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


async def time_spawn(s: Subject) -> None:
    """Spawn → initialize result, and spawn → first tools/list answered."""
    cpu0 = children_cpu_ms()
    t0 = time.perf_counter()
    async with stdio_client(s.params, errlog=DEVNULL) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        s.spawn_ms.append((time.perf_counter() - t0) * 1000)
        await session.list_tools()
        s.listed_ms.append((time.perf_counter() - t0) * 1000)
    s.cpu_ms.append(children_cpu_ms() - cpu0)  # the server was reaped when the client closed


async def run(calls: int, spawns: int, block: int) -> list[Subject]:
    with tempfile.TemporaryDirectory(prefix="tdk-bench-") as tmp:
        work = Path(tmp)
        root = make_tree(work)
        subs = subjects(root, work)
        for s in subs:  # first spawn warms caches (.pyc files, node's compile cache)
            await time_spawn(s)
            s.spawn_ms.clear()
            s.listed_ms.clear()
            s.cpu_ms.clear()
        for _ in range(spawns):
            for s in subs:
                await time_spawn(s)
        async with contextlib.AsyncExitStack() as stack:
            sessions = []
            subs_called = [s for s in subs if s.calls]
            for s in subs_called:
                r, w = await stack.enter_async_context(stdio_client(s.params, errlog=DEVNULL))
                session = await stack.enter_async_context(ClientSession(r, w))
                await session.initialize()
                await session.list_tools()
                for _ in range(20):  # warm-up
                    res = await session.call_tool(s.tool, s.arguments)
                    if res.is_error:
                        raise SystemExit(f"{s.name}: {res.content}")
                sessions.append(session)
            done = 0
            while done < calls:
                n = min(block, calls - done)
                for s, session in zip(subs_called, sessions, strict=True):
                    for _ in range(n):
                        t0 = time.perf_counter()
                        await session.call_tool(s.tool, s.arguments)
                        s.call_ms.append((time.perf_counter() - t0) * 1000)
                done += n
        return subs


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def report(subs: list[Subject], calls: int) -> None:
    ref = subs[0]
    bare = subs[1]
    print(
        f"mcp_roundtrip — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; stdio round trip, read of a 4,096-byte text "
        f"file, {calls} calls per server (interleaved blocks)"
    )
    machine = f"{platform.node()}, {platform.machine()} {os.cpu_count()} cores, {platform.platform()}"
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"machine: {machine}, Python {platform.python_version()}; load average {load}")
    print()
    head = f"{'server':<18} {'p50 ms':>7} {'p95 ms':>7} {'p50/ref':>7} {'p50/bare':>8}"
    head += f" {'init ms':>7} {'init min-max':>13} {'init/ref':>8} {'listed ms':>9} {'list min-max':>13} {'cpu ms':>7}"
    print(head)
    print("-" * len(head))
    ref_p50, bare_p50 = pct(ref.call_ms, 0.5), pct(bare.call_ms, 0.5)
    ref_spawn = statistics.median(ref.spawn_ms)
    for s in subs:
        spawn, listed = statistics.median(s.spawn_ms), statistics.median(s.listed_ms)
        if s.call_ms:
            p50, p95 = pct(s.call_ms, 0.5), pct(s.call_ms, 0.95)
            row = f"{s.name:<18} {p50:>7.2f} {p95:>7.2f} {p50 / ref_p50:>7.2f} {p50 / bare_p50:>8.2f}"
        else:
            row = f"{s.name:<18} {'-':>7} {'-':>7} {'-':>7} {'-':>8}"
        spread = f"{min(s.spawn_ms):.0f}-{max(s.spawn_ms):.0f}"
        lspread = f"{min(s.listed_ms):.0f}-{max(s.listed_ms):.0f}"
        row += f" {spawn:>7.0f} {spread:>13} {spawn / ref_spawn:>8.2f} {listed:>9.0f} {lspread:>13}"
        print(row + f" {statistics.median(s.cpu_ms):>7.0f}")
    print()
    for s in subs:
        print(f"  {s.name}: {s.command}")
    print("init = process start until the initialize result arrived; listed = until the first tools/list")
    print("was answered (medians of the timed spawns, min-max beside); cpu = the server process's user+system")
    print("CPU time over its whole life per spawn (median): start-up work that continues after the handshake")
    for s in subs:
        if s.name == "tooldeck":
            init = statistics.median(s.spawn_ms)
            goal_line("mcp_roundtrip", "spawn -> initialize, handshake cache, ms", init, "<=", 400, 0)
            goal_line("mcp_roundtrip", "read_file p50 / reference", pct(s.call_ms, 0.5) / ref_p50, "<=", 1.0)
        if s.name == "tooldeck no cache":
            goal_line("mcp_roundtrip", "spawn -> initialize, no cache, ms", statistics.median(s.spawn_ms), "<=", 300, 0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--spawns", type=int, default=5)
    ap.add_argument("--block", type=int, default=50)
    args = ap.parse_args()
    subs = anyio.run(run, args.calls, args.spawns, args.block)
    report(subs, args.calls)


if __name__ == "__main__":
    main()
