"""git tool: latency and output tokens, tooldeck beside the plain git CLI.

Tree: a generated repository (``--files`` Python files of ~40 lines, default
3,000, one commit, then ``--changed`` files edited and 10 untracked files), or
``--repo DIR`` for an existing checkout. Baseline: the git command a shell
agent would run for the same question, via subprocess, output captured.
tooldeck: the ``git`` tool called in-process through the Toolbox (so it
includes argument decoding, the safety checks, its extra git calls and the
rendering). Median of ``--runs`` interleaved runs. Tokens are o200k counts of
each output: what the model would read. The tool runs twice per repetition,
with its git processes confined (:mod:`tooldeck.confine`: Landlock where the
kernel has it) and unconfined, back to back; "confinement" is the median of
those paired differences, in wall and in CPU time (this process and its
children).

Usage: ``python bench/git_bench.py [--files 3000] [--changed 40] [--runs 15]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import tempfile
import time
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


def median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def cpu_now() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def paired_cost(fn, confined: str, runs: int) -> tuple[float, float, float]:
    """(median ms confined, median added wall ms, median added CPU ms)."""
    walls, added, added_cpu = [], [], []
    for rep in range(runs):
        got: dict[str, tuple[float, float]] = {}
        for mode in (confined, "none") if rep % 2 == 0 else ("none", confined):
            helpers.use_mode(mode)
            c0, t0 = cpu_now(), time.perf_counter()
            fn()
            got[mode] = ((time.perf_counter() - t0) * 1000, (cpu_now() - c0) * 1000)
        walls.append(got[confined][0])
        added.append(got[confined][0] - got["none"][0])
        added_cpu.append(got[confined][1] - got["none"][1])
    helpers.use_mode(confined)
    return statistics.median(walls), statistics.median(added), statistics.median(added_cpu)


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

        def tool(args: dict) -> str:
            res = box.call_sync("git", json.dumps(args))
            assert not res.is_error, res.text
            return res.text

        def cli(*cmds: list[str]) -> str:
            return "".join(git(repo, *c) for c in cmds)

        cases = [
            ("status", lambda: cli(["status", "--porcelain=v2", "--branch"]), {"op": "status"}),
            (
                "diff summary",
                lambda: cli(["diff", "HEAD", "--stat"], ["ls-files", "--others", "--exclude-standard"]),
                {"op": "diff"},
            ),
            ("diff files", lambda: cli(["diff", "HEAD", "-U0"]), {"op": "diff", "detail": "files"}),
            ("diff patches", lambda: cli(["diff", "HEAD"]), {"op": "diff", "detail": "patches"}),
            ("log 10 + stats", lambda: cli(["log", "-n", "10", "--stat"]), {"op": "log", "detail": "files"}),
            ("show HEAD", lambda: cli(["show", "--stat", "HEAD"]), {"op": "show"}),
            (
                "blame 10 lines",
                lambda: cli(["blame", "-L", "5,14", "--", blame_file]),
                {"op": "blame", "path": blame_file, "lines": "5-14"},
            ),
        ]
        rows = []
        confined = helpers.mode()
        for name, baseline, args in cases:
            base_out, tool_out = baseline(), tool(args)
            base_ms = median_ms(baseline, opts.runs)
            tool_ms, added, added_cpu = paired_cost(lambda a=args: tool(a), confined, opts.runs)
            rows.append((name, base_ms, tool_ms, count_tokens(base_out), count_tokens(tool_out), added, added_cpu))
        tracked = len(git(repo, "ls-files").splitlines())
        print(
            f"tree: {'generated' if not opts.repo else repo} repository, {tracked} tracked files, "
            f"{opts.changed if not opts.repo else '?'} edited + 10 untracked; runs={opts.runs}"
        )
        print(
            f"machine: {platform.machine()} {os.cpu_count()} CPUs, Python {platform.python_version()}, "
            f"{git(repo, '--version').strip()}"
        )
        print(f"git processes confined by: {confined}")
        print(
            f"{'operation':<16} {'git CLI ms':>10} {'tooldeck ms':>11} {'ratio':>6} "
            f"{'git tokens':>10} {'tooldeck tokens':>15} {'confinement ms':>14} {'CPU ms':>7}"
        )
        for name, b, t, bt, tt, added, added_cpu in rows:
            cost = f"{added:>+14.2f} {added_cpu:>+7.2f}"
            print(f"{name:<16} {b:>10.1f} {t:>11.1f} {t / b:>6.2f} {bt:>10} {tt:>15} {cost}")
        for name, b, t, *_ in rows:
            if name in ("status", "diff files", "diff patches"):
                report("git_bench", f"{name} / git CLI, wall", t / b, "<=", 2)


if __name__ == "__main__":
    main()
