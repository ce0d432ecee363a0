"""git tool: latency and output tokens, tooldeck beside the plain git CLI.

Tree: a generated repository (``--files`` Python files of ~40 lines, default
3,000, one commit, then ``--changed`` files edited and 10 untracked files), or
``--repo DIR`` for an existing checkout. Baseline: the git command a shell
agent would run for the same question, via subprocess, output captured.
tooldeck: the ``git`` tool called in-process through the Toolbox (so it
includes argument decoding, the safety checks, its extra git calls and the
rendering), warm and on one event loop, as a server answers many calls
(``call_sync`` would make a loop and a thread per call). Each repetition
runs the CLI line, the tool with its git processes confined
(:mod:`tooldeck.confine`: Landlock where the kernel has it) and the tool
unconfined, in a rotating order, so a load that comes and goes weighs on
each alike; figures are medians of ``--runs`` repetitions. "ratio" is the
tool's wall time over the CLI's; "CPU" the same for CPU time (the tool:
this process and its children; the CLI: its git children), steadier on a
shared machine. "confinement" is the median paired difference confined −
unconfined, in wall and CPU time. "procs" counts the git processes each
side starts per call: where the tool starts more, the line after the table
says what the others are for, and gives the ratio to a CLI line doing that
work too (``--others`` listing of untracked files, which the tool shows and
``git diff`` does not). Tokens are o200k counts of each output: what the
model would read.

Usage: ``python bench/git_bench.py [--files 3000] [--changed 40] [--runs 15]``"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from goals import report  # bench/ is on sys.path when a script of it runs

from tooldeck.catalog import build_toolbox
from tooldeck.confine import helpers
from tooldeck.runtime import Runtime
from tooldeck.tokens import count_tokens

ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, capture_output=True, text=True, check=True).stdout


def make_repo(base: Path, files: int, changed: int) -> Path:
    repo = base / "repo"
    for i in range(files):
        p = repo / f"pkg{i % 50:02d}" / f"mod{i:05d}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        body = "".join(f"    value_{j} = compute({i}, {j})\n" for j in range(36))
        p.write_text(f'"""Module {i}."""\n\n\ndef run_{i}(compute):\n{body}    return value_0\n')
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    for i in range(0, files, max(1, files // changed))[:changed]:
        p = repo / f"pkg{i % 50:02d}" / f"mod{i:05d}.py"
        text = p.read_text().replace("value_3 = ", "value_3 = 1 + ").replace("value_20 = ", "value_20 = 2 * ")
        p.write_text(text)
    for k in range(10):
        (repo / f"new_{k}.py").write_text(f"print({k})\n")
    return repo


def cpu_now() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def measure(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall ms, CPU ms of this process and its children) of one ``fn()``."""
    c0, t0 = cpu_now(), time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000, (cpu_now() - c0) * 1000


@dataclass
class Row:
    name: str
    cli: list[tuple[float, float]] = field(default_factory=list)
    same: list[tuple[float, float]] = field(default_factory=list)  # the CLI line plus what the tool adds
    tool: list[tuple[float, float]] = field(default_factory=list)  # confined
    free: list[tuple[float, float]] = field(default_factory=list)  # unconfined
    tokens: tuple[int, int] = (0, 0)
    procs: tuple[int, int] = (0, 0)  # git processes per call: CLI, tool

    def med(self, which: str, i: int) -> float:
        return statistics.median(x[i] for x in getattr(self, which))

    def added(self, i: int) -> float:
        return statistics.median(a[i] - b[i] for a, b in zip(self.tool, self.free, strict=True))


def run_case(row: Row, cli: Callable[[], object], same: Callable[[], object] | None, tool: Callable[[], object],
             confined: str, runs: int) -> None:  # fmt: skip
    """``runs`` repetitions of every contender, in an order that rotates."""

    def in_mode(mode: str) -> Callable[[], object]:
        def go() -> object:
            helpers.use_mode(mode)
            return tool()

        return go

    contenders: list[tuple[list[tuple[float, float]], Callable[[], object]]] = [
        (row.cli, cli),
        (row.tool, in_mode(confined)),
        (row.free, in_mode("none")),
    ]
    if same is not None:
        contenders.append((row.same, same))
    for rep in range(runs):
        k = rep % len(contenders)
        for out, fn in contenders[k:] + contenders[:k]:
            out.append(measure(fn))
    helpers.use_mode(confined)


class ProcessCounter:
    """Counts the git processes the tool starts (every one goes through
    :func:`tooldeck.confine.helpers.popen`)."""

    def __init__(self) -> None:
        self.count = 0
        self._real = helpers.popen

        def counting(*args: object, **kwargs: object) -> object:
            self.count += 1
            return self._real(*args, **kwargs)  # type: ignore[arg-type]

        helpers.popen = counting  # type: ignore[assignment]

    def per_call(self, fn: Callable[[], object]) -> int:
        before = self.count
        fn()
        return self.count - before


def cases(blame_file: str) -> list[tuple[str, list[list[str]], dict]]:
    """(name, the CLI line's git commands, the tool's arguments)."""
    return [
        ("status", [["status", "--porcelain=v2", "--branch"]], {"op": "status"}),
        ("diff summary", [["diff", "HEAD", "--stat"], UNTRACKED], {"op": "diff"}),
        ("diff files", [["diff", "HEAD", "-U0"]], {"op": "diff", "detail": "files"}),
        ("diff patches", [["diff", "HEAD"]], {"op": "diff", "detail": "patches"}),
        ("log 10 + stats", [["log", "-n", "10", "--stat"]], {"op": "log", "detail": "files"}),
        ("show HEAD", [["show", "--stat", "HEAD"]], {"op": "show"}),
        (
            "blame 10 lines",
            [["blame", "-L", "5,14", "--", blame_file]],
            {"op": "blame", "path": blame_file, "lines": "5-14"},
        ),
    ]


UNTRACKED = ["ls-files", "--others", "--exclude-standard"]
GOALS = ("status", "diff files", "diff patches")


def print_table(rows: list[Row]) -> None:
    print(
        f"{'operation':<16} {'git CLI ms':>10} {'tooldeck ms':>11} {'ratio':>6} {'CPU':>5} {'procs':>6} "
        f"{'git tokens':>10} {'tooldeck tokens':>15} {'confinement ms':>14} {'CPU ms':>7}"
    )
    for r in rows:
        b, t = r.med("cli", 0), r.med("tool", 0)
        cpu = r.med("tool", 1) / max(r.med("cli", 1), 1e-6)
        procs = f"{r.procs[0]}/{r.procs[1]}"
        cost = f"{r.added(0):>+14.2f} {r.added(1):>+7.2f}"
        print(
            f"{r.name:<16} {b:>10.1f} {t:>11.1f} {t / b:>6.2f} {cpu:>5.2f} {procs:>6} "
            f"{r.tokens[0]:>10} {r.tokens[1]:>15} {cost}"
        )
    for r in rows:
        if r.same:
            s, t = r.med("same", 0), r.med("tool", 0)
            print(
                f"{r.name}: the tool also lists the untracked files (and shows their patches), which the CLI line "
                f"does not; with `git {' '.join(UNTRACKED)}` added to it: CLI {s:.1f} ms, ratio {t / s:.2f}"
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=3000)
    ap.add_argument("--changed", type=int, default=40)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--repo", type=Path, default=None)
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = opts.repo.resolve() if opts.repo else make_repo(Path(tmp), opts.files, opts.changed)
        blame_file = git(repo, "ls-files").splitlines()[0]
        box = build_toolbox(Runtime.for_dirs([repo], state_dir=Path(tmp) / "state"))
        counter = ProcessCounter()
        loop = asyncio.new_event_loop()  # one loop for every call, as a server has (call_sync makes one per call)

        def tool(args: dict) -> str:
            res = loop.run_until_complete(box.call("git", json.dumps(args)))
            assert not res.is_error, res.text
            return res.text

        def cli(*cmds: list[str]) -> str:
            return "".join(git(repo, *c) for c in cmds)

        rows = []
        confined = helpers.mode()
        for name, cmds, args in cases(blame_file):
            row = Row(name)
            base_out, tool_out = cli(*cmds), tool(args)  # warm: a server answers many calls
            row.tokens = (count_tokens(base_out), count_tokens(tool_out))
            row.procs = (len(cmds), counter.per_call(lambda a=args: tool(a)))
            same = None
            if name in ("diff files", "diff patches"):
                same = lambda c=cmds: cli(*c, UNTRACKED)  # noqa: E731
            run_case(row, lambda c=cmds: cli(*c), same, lambda a=args: tool(a), confined, opts.runs)
            rows.append(row)
        tracked = len(git(repo, "ls-files").splitlines())
        print(
            f"tree: {'generated' if not opts.repo else repo} repository, {tracked} tracked files, "
            f"{opts.changed if not opts.repo else '?'} edited + 10 untracked; runs={opts.runs}"
        )
        print(
            f"machine: {platform.machine()} {os.cpu_count()} CPUs, Python {platform.python_version()}, "
            f"{git(repo, '--version').strip()}, load {os.getloadavg()[0]:.2f}"
        )
        print(f"git processes confined by: {confined}")
        print_table(rows)
        loop.close()
        for r in rows:
            if r.name in GOALS:
                report("git_bench", f"{r.name} / git CLI, wall", r.med("tool", 0) / r.med("cli", 0), "<=", 2)


if __name__ == "__main__":
    main()
