"""Shell tool overhead and flood memory: tooldeck's sandboxed run beside bare subprocess.

Latency (N calls per case, the cases in turn in blocks of 10 calls, in this process, after a warm-up turn):

* baseline: ``subprocess.run(["true"])``;
* bwrap only: ``subprocess.run`` of the same bubblewrap command line tooldeck
  builds (what the sandbox itself costs);
* tooldeck, sandbox off: the same call on a runtime with ``sandbox.mode = "off"``
  (everything but bubblewrap: what tooldeck itself adds);
* tooldeck: a whole ``shell`` tool call through the Toolbox — decode, policy
  (PATH resolution, wrapper inspection), audit log (3 JSONL lines), git guard
  (placeholders of a root without a repository and of the agent-client
  configuration it lacks, nested .git scan), sandbox
  argv, pids cgroup, spawn, pump, render.

The bwrap and tool rows come "before" (the bwrap options as they were before
issue 27), with ``--cap-drop ALL --disable-userns --seccomp FD`` added, and
(tool) with the git guard too, side by side in one run: the same processes
each time, only the options differ.

Goal: tooldeck adds < 30 ms per call over the baseline (p50).

Flood (each in a fresh process, peak RSS from ``getrusage``): 100 MB on
stdout (``head -c 100000000 /dev/zero | tr '\\0' x``) through the tool with a
64 KB output limit, beside ``subprocess.run(capture_output=True)`` of the
same pipeline. Goal: the tool's peak RSS stays flat (independent of the flood).

Usage: ``python bench/shell_bench.py [--runs 100]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from goals import report  # bench/ is on sys.path when a script of it runs

BLOCK = int(os.environ.get("BENCH_BLOCK", "10"))  # calls of one case in a row, then the next case
FLOOD = ["sh", "-c", "head -c 100000000 /dev/zero | tr '\\0' x"]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def cpu_ms() -> float:
    """CPU time of this process and its reaped children (bwrap and the command), ms."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return (me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime) * 1000


def interleaved(cases: list[tuple[str, object]], runs: int) -> list[tuple[str, list[float], float]]:
    """The cases in turn, :data:`BLOCK` calls of one before the next, until each has
    ``runs`` calls (after a warm-up turn): a load that changes during the run weighs
    on every case alike, so the rows compare side by side. Per case: the wall
    times, and the mean CPU time per call (which a busy machine disturbs far less).
    ``BENCH_BLOCK=1`` alternates call by call (cgroup and mount work of one case
    then slows the next: every row is higher)."""
    times: dict[str, list[float]] = {name: [] for name, _fn in cases}
    cpu: dict[str, float] = {name: 0.0 for name, _fn in cases}
    block = BLOCK
    for round_ in range(runs // block + 1):  # the first round warms up
        for name, fn in cases:
            for _ in range(block):
                c0, t0 = cpu_ms(), time.perf_counter()
                fn()  # type: ignore[operator]
                if round_ > 0:
                    times[name].append((time.perf_counter() - t0) * 1000)
                    cpu[name] += cpu_ms() - c0
    return [(name, values, cpu[name] / max(1, len(values))) for name, values in times.items()]


def build_box(root: str, state: str, output_bytes: int = 64_000):  # type: ignore[no-untyped-def]
    """A shell tool over ``root`` (sandboxed) and one with the sandbox off."""
    from tooldeck.core.toolbox import Toolbox
    from tooldeck.shell.profiles import BUILTIN
    from tooldeck.shell.service import ShellService
    from tooldeck.shell.spec import ShellToolSpec
    from tooldeck.shell.tool_factory import make_tool

    dev = BUILTIN["builtin:workspace-development@1"]
    rt = replace(dev, policy=replace(dev.policy, default="allow", raw="allow"),
                 limits=replace(dev.limits, output_bytes=output_bytes))  # fmt: skip
    svc = ShellService(lambda: [(root, False)], state)
    unboxed = replace(rt, id="unsandboxed", sandbox=replace(rt.sandbox, mode="off"))
    tools = [
        make_tool(ShellToolSpec(name="shell", mode="structured", runtime=rt.id), rt, svc),
        make_tool(ShellToolSpec(name="shell_nosandbox", mode="structured", runtime=unboxed.id), unboxed, svc),
    ]
    return Toolbox(tools), svc, rt


NEW_FLAGS = (("--cap-drop", "ALL"), ("--disable-userns",), ("--seccomp", None))  # None: the fd that follows


def without_new_flags(argv: list[str]) -> list[str]:
    """The bwrap argv as it was before issue 27: no --cap-drop ALL, --disable-userns, --seccomp FD."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] == "--":
            return out + argv[i:]
        if argv[i] in ("--cap-drop", "--seccomp"):
            i += 2
            continue
        if argv[i] != "--disable-userns":
            out.append(argv[i])
        i += 1
    return out


@contextlib.contextmanager
def variant(new_flags: bool, git_guard: bool, client_config: bool = True):  # type: ignore[no-untyped-def]
    """The tool with or without the new privilege options, the git guard, and the guard's
    agent-client configuration placeholders and binds (same processes)."""
    import tooldeck.shell.gitguard as gitguard
    import tooldeck.shell.service as service
    from tooldeck.shell.gitguard import GitGuard

    saved = (service.bwrap_argv, service.seccomp_program, service.ShellService._git_guard)
    names = gitguard.CLIENT_CONFIG
    try:
        if not client_config:
            gitguard.CLIENT_CONFIG = frozenset()
        if not new_flags:
            service.bwrap_argv = lambda exe, plan, cmd: without_new_flags(saved[0](exe, plan, cmd))
            service.seccomp_program = lambda: None
        if not git_guard:
            service.ShellService._git_guard = lambda self, rt, read, write: GitGuard()
        yield
    finally:
        service.bwrap_argv, service.seccomp_program, service.ShellService._git_guard = saved
        gitguard.CLIENT_CONFIG = names


def latency(runs: int) -> list[tuple[str, list[float], float]]:
    from tooldeck.shell.sandbox import SandboxPlan, bwrap_argv, probe
    from tooldeck.shell.seccomp_filter import fill_slot, program

    with tempfile.TemporaryDirectory() as tmp:
        root, state = os.path.join(tmp, "root"), os.path.join(tmp, "state")
        os.mkdir(root)
        os.mkdir(state)
        box, _svc, rt = build_box(root, state)
        repo = os.path.join(tmp, "repo")  # a root with a repository: no placeholders, the .git bound read-only
        subprocess.run(["git", "init", "-q", repo], check=True)
        repo_box, _svc2, _rt2 = build_box(repo, state)
        plan = SandboxPlan((root,), (root,), False, root, {"PATH": rt.environment.path}, (),
                           rt.sandbox.system_paths)  # fmt: skip
        argv = bwrap_argv(probe(), plan, ["/usr/bin/true"])
        seccomp = program()
        args = json.dumps({"program": "true"})

        def bwrap_new() -> None:
            filled, fd = fill_slot(argv, seccomp)
            try:
                subprocess.run(filled, check=True, pass_fds=(fd,) if fd is not None else ())
            finally:
                if fd is not None:
                    os.close(fd)

        def tool_call(name: str = "shell", new_flags: bool = True, git_guard: bool = True, on=box,  # type: ignore[no-untyped-def]
                      client_config: bool = True) -> None:  # fmt: skip
            with variant(new_flags, git_guard, client_config):
                res = on.call_sync(name, args)
            assert not res.is_error and "[exit 0" in res.text, res.text

        return interleaved([
            ("subprocess.run(['true'])", lambda: subprocess.run(["true"], check=True)),
            ("bwrap only, before", lambda: subprocess.run(without_new_flags(argv), check=True)),
            ("bwrap only, +caps/seccomp", bwrap_new),
            ("tooldeck, sandbox off", lambda: tool_call("shell_nosandbox")),
            ("tooldeck tool, before", lambda: tool_call(new_flags=False, git_guard=False)),
            ("tooldeck, +caps/seccomp", lambda: tool_call(git_guard=False)),
            ("tooldeck, no client-config", lambda: tool_call(client_config=False)),
            ("tooldeck tool (all)", tool_call),
            ("tooldeck (all), repo root", lambda: tool_call(on=repo_box)),
        ], runs)  # fmt: skip


def flood_child(kind: str) -> None:
    """Runs in a fresh process; prints JSON with the peak RSS and the output size seen."""
    with tempfile.TemporaryDirectory() as tmp:
        root, state = os.path.join(tmp, "root"), os.path.join(tmp, "state")
        os.mkdir(root)
        os.mkdir(state)
        box, _svc, _rt = build_box(root, state, output_bytes=64_000)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t0 = time.perf_counter()
        if kind == "tooldeck":
            res = box.call_sync("shell", json.dumps({"program": FLOOD[0], "arguments": FLOOD[1:]}))
            assert not res.is_error, res.text
            seen = len(res.text)
        else:
            seen = len(subprocess.run(FLOOD, capture_output=True, check=True).stdout)
        ms = (time.perf_counter() - t0) * 1000
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"before_mb": before, "peak_mb": peak, "ms": ms, "returned_chars": seen}))


def flood() -> dict[str, dict]:
    out = {}
    for kind in ("capture_output", "tooldeck"):
        done = subprocess.run([sys.executable, __file__, "--flood-child", kind], capture_output=True, text=True,
                              check=True)  # fmt: skip
        out[kind] = json.loads(done.stdout)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--flood-child")
    args = ap.parse_args()
    if args.flood_child:
        flood_child(args.flood_child)
        return
    load = os.getloadavg()[0]
    print(f"machine: {platform.machine()}, {os.cpu_count()} cpus, load {load:.1f}, {platform.platform()}; "
          f"python {platform.python_version()}")  # fmt: skip
    rows = latency(args.runs)
    base = statistics.median(rows[0][1])
    print(f"\nlatency, {args.runs} calls per case in blocks of {BLOCK} (ms; cpu = CPU time per call of this process "
          "and its children)")  # fmt: skip
    print(f"{'case':<28}{'p50':>8}{'p95':>8}{'added p50':>11}{'ratio':>8}{'cpu':>8}")
    for name, values, cpu in rows:
        p50 = statistics.median(values)
        print(f"{name:<28}{p50:>8.2f}{pct(values, 0.95):>8.2f}{p50 - base:>11.2f}{p50 / base:>8.2f}{cpu:>8.2f}")
    med = {name: statistics.median(values) for name, values, _cpu in rows}
    cpu = {name: c for name, _values, c in rows}

    def delta(a: str, b: str) -> str:
        return f"{med[b] - med[a]:+.2f} ms p50 ({cpu[b] - cpu[a]:+.2f} ms CPU)"

    flags = ("tooldeck tool, before", "tooldeck, +caps/seccomp")
    bwrap = delta("bwrap only, before", "bwrap only, +caps/seccomp")
    print(f"--cap-drop ALL + --disable-userns + seccomp: bwrap {bwrap}, tool {delta(*flags)}; "
          f"git guard on a repo-less root {delta(flags[1], 'tooldeck tool (all)')}")  # fmt: skip
    print(f"agent-client configuration placeholders and binds (8 names): "
          f"{delta('tooldeck, no client-config', 'tooldeck tool (all)')}")  # fmt: skip
    added = med["tooldeck tool (all)"] - base
    print(f"goal: tooldeck adds < 30 ms per call -> {'met' if added < 30 else 'NOT met'} ({added:.1f} ms)")
    results = flood()
    print("\n100 MB flood on stdout (fresh process each; peak RSS of that process)")
    print(f"{'case':<28}{'before MB':>10}{'peak MB':>9}{'growth MB':>11}{'ms':>8}{'returned chars':>16}")
    for name, r in results.items():
        growth = r["peak_mb"] - r["before_mb"]
        print(
            f"{name:<28}{r['before_mb']:>10.1f}{r['peak_mb']:>9.1f}{growth:>11.1f}{r['ms']:>8.0f}{r['returned_chars']:>16}"
        )
    ratio = (results["capture_output"]["peak_mb"] - results["capture_output"]["before_mb"]) / max(
        0.1, results["tooldeck"]["peak_mb"] - results["tooldeck"]["before_mb"]
    )
    print(f"memory growth ratio capture_output / tooldeck: {ratio:.0f}x")
    report("shell_bench", "sandboxed `true` via the shell tool, p50 added over subprocess.run, ms", added, "<", 30, 1)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    main()
