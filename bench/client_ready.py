"""Ready before the client gives up: each handshake answer, timed from spawn.

An agent client spawns ``tooldeck serve`` and, right after ``initialize``,
lists everything: Claude Code sends ``tools/list``, ``resources/list``,
``resources/templates/list`` and ``prompts/list`` together; Codex and Claude
Code start the first model turn without a server that is not ready after one
to two seconds (docs/clients.md). This script plays that client over raw
stdio JSON-RPC (no SDK on the client side: its import is not the server's
time) and prints, per request, the milliseconds from spawn to its answer,
then the first ``tools/call`` (``read_file``):

* baseline: the handshake cache off (``TOOLDECK_HANDSHAKE_CACHE=0``: a first
  start, a new version, a changed config); the early front still answers,
  building every answer itself (:mod:`tooldeck.mcp.early`);
* tooldeck: the cache warm (an untimed spawn first records it).

``--sdk-only`` adds a column with the early front off (``TOOLDECK_EARLY_FRONT=0``:
the SDK answers everything, the path before the early front), cache off.

Spawns alternate (off, on, off, on...) so machine noise hits both alike;
medians of ``--spawns`` (default 5). Targets (issue 34): every list answer
≤ 300 ms cold and ≤ 150 ms warm, the first call ≤ 200 ms warm.
Usage: ``python bench/client_ready.py [--spawns 5]``.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REQUESTS = ["tools/list", "resources/list", "resources/templates/list", "prompts/list"]
INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {"roots": {"listChanged": True}},
    "clientInfo": {"name": "client-ready-bench", "version": "1"},
}


def _send(proc: subprocess.Popen[bytes], *messages: dict) -> None:
    assert proc.stdin is not None
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    proc.stdin.flush()


def _answers(proc: subprocess.Popen[bytes], want: set[int], start: float, timeout: float = 30.0) -> dict[int, float]:
    """Milliseconds from ``start`` to each answer with an id in ``want``."""
    assert proc.stdout is not None
    got: dict[int, float] = {}
    buf = b""
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + timeout
    while want - got.keys():
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError(f"no answer to ids {sorted(want - got.keys())}")
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            raise EOFError("the server closed its output")
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            msg = json.loads(line)
            if msg.get("id") in want and msg["id"] not in got:
                if "error" in msg:
                    raise RuntimeError(f"id {msg['id']}: {msg['error']}")
                got[msg["id"]] = (time.monotonic() - start) * 1000
    return got


def one_spawn(root: Path, state: Path, cache: bool, early: bool = True) -> dict[str, float]:
    env = dict(os.environ, TOOLDECK_HANDSHAKE_CACHE="1" if cache else "0", TOOLDECK_EARLY_FRONT="1" if early else "0")
    cmd = [sys.executable, "-m", "tooldeck", "serve", str(root), "--state-dir", str(state)]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        _send(proc, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
        row = {"initialize": _answers(proc, {0}, start)[0]}
        _send(
            proc,
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            *({"jsonrpc": "2.0", "id": i, "method": m, "params": {}} for i, m in enumerate(REQUESTS, 1)),
        )
        got = _answers(proc, set(range(1, len(REQUESTS) + 1)), start)
        row |= {m: got[i] for i, m in enumerate(REQUESTS, 1)}
        call = {"name": "read_file", "arguments": {"path": "notes.txt"}}
        _send(proc, {"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": call})
        row["first tools/call"] = _answers(proc, {99}, start)[99]
        row["ready (all lists)"] = max(row[m] for m in REQUESTS)
        return row
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# (answer, goal with the cache off, goal warm) in ms; None: no goal (issue 34)
GOALS = {
    "initialize": (300, 150),
    "tools/list": (300, 150),
    "resources/list": (300, 150),
    "resources/templates/list": (300, 150),
    "prompts/list": (300, 150),
    "ready (all lists)": (300, 150),
    "first tools/call": (None, 200),
}


def _verdict(off: float, on: float, goal: tuple[int | None, int | None]) -> str:
    parts = []
    for label, value, limit in (("off", off, goal[0]), ("warm", on, goal[1])):
        if limit is not None:
            parts.append(f"{label} ≤{limit}: {'met' if value <= limit else 'NOT met'}")
    return "; ".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--spawns", type=int, default=5)
    ap.add_argument("--sdk-only", action="store_true", help="also time the SDK-only path (early front off)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="client-ready-") as tmp:
        root, state_off, state_on = Path(tmp, "root"), Path(tmp, "state-off"), Path(tmp, "state-on")
        root.mkdir()
        (root / "notes.txt").write_text("alpha\nbeta\n" * 50)
        (root / "app.py").write_text("def main():\n    return 1\n")
        one_spawn(root, state_on, cache=True)  # untimed: records the cache
        runs: dict[str, list[dict[str, float]]] = {"off": [], "on": [], "sdk": []}
        for _ in range(args.spawns):
            runs["off"].append(one_spawn(root, state_off, cache=False))
            runs["on"].append(one_spawn(root, state_on, cache=True))
            if args.sdk_only:
                runs["sdk"].append(one_spawn(root, state_off, cache=False, early=False))
    keys = ["initialize", *REQUESTS, "ready (all lists)", "first tools/call"]
    load = os.getloadavg()
    print(f"tooldeck client readiness, ms from spawn (median of {args.spawns}; python {sys.version.split()[0]}; "
          f"load {load[0]:.2f} {load[1]:.2f})")  # fmt: skip
    sdk_head = f" {'SDK only':>9}" if args.sdk_only else ""
    print(f"{'answer':<26}{sdk_head} {'cache off':>10} {'cache warm':>11}  goals (issue 34)")
    for k in keys:
        off = statistics.median(r[k] for r in runs["off"])
        on = statistics.median(r[k] for r in runs["on"])
        sdk = f" {statistics.median(r[k] for r in runs['sdk']):>9.0f}" if args.sdk_only else ""
        print(f"{k:<26}{sdk} {off:>10.0f} {on:>11.0f}  {_verdict(off, on, GOALS[k])}")


if __name__ == "__main__":
    main()
