"""workspace_context on a large selection: tooldeck (token counts cached by
content hash in memory and in the store) beside the naive way (render the
context package and tokenize all of it on every call, the same quicktok
o200k encoder).

Tree: a copy of an installed package's sources (default: `rich` from this
venv, ~100 Python files) selected in full (plus its automatic codemaps).
Measured: selecting the folder, the first workspace_context (cold: every chunk
tokenized), later calls in the same process (warm), a new process's first
call (the store cache: no encoder load when nothing changed), and the naive
re-count. Usage: ``python bench/selection_context.py [--package rich] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tooldeck.catalog import build_toolbox
from tooldeck.runtime import Runtime
from tooldeck.selection.service import selection_service
from tooldeck.tokens import count_with

# the naive new process: same start-up, then render and tokenize everything (loads the encoder)
NAIVE_PROCESS = """
import sys
from tooldeck.catalog import build_toolbox
from tooldeck.selection.service import selection_service
from tooldeck.tokens import count_with
from tooldeck.runtime import Runtime
rt = Runtime.for_dirs([sys.argv[1]], state_dir=sys.argv[2])
build_toolbox(rt)
pkg, _ = selection_service(rt).package()
print(count_with("o200k_base", pkg.text()))
"""


def timed(fn, repeat: int) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    samples, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--package", default="rich")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    spec = importlib.util.find_spec(args.package)
    assert spec and spec.submodule_search_locations, f"{args.package} is not an installed package"
    src = Path(next(iter(spec.submodule_search_locations)))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        shutil.copytree(src, root / args.package, ignore=shutil.ignore_patterns("__pycache__"))
        state = Path(tmp) / "state"
        rt = Runtime.for_dirs([root], state_dir=state)
        box = build_toolbox(rt)
        files = sum(1 for _ in root.rglob("*.py"))
        size = sum(p.stat().st_size for p in root.rglob("*.py"))

        t = time.perf_counter()
        res = box.call_sync("manage_selection", f'{{"op": "add", "paths": ["{args.package}"]}}')
        select_s = time.perf_counter() - t
        assert not res.is_error, res.text

        t = time.perf_counter()
        res = box.call_sync("workspace_context", "{}")
        cold_s = time.perf_counter() - t
        assert not res.is_error, res.text
        total = res.output.structured["tokens"]["total"]

        warm_s, _ = timed(lambda: box.call_sync("workspace_context", "{}"), args.repeat)
        svc = selection_service(rt)

        def naive() -> int:
            pkg, _ = svc.package()
            return count_with("o200k_base", pkg.text())

        naive_s, naive_total = timed(naive, args.repeat)

        env = {**os.environ, "TOOLDECK_STATE_DIR": str(state)}
        cmd = [
            sys.executable,
            "-m",
            "tooldeck",
            "call",
            "workspace_context",
            '{"include": ["tokens"]}',
            "--root",
            str(root),
        ]
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
        cli_s = time.perf_counter() - t
        assert proc.returncode == 0, proc.stderr
        naive_cmd = [sys.executable, "-c", NAIVE_PROCESS, str(root), str(state)]
        t = time.perf_counter()
        proc = subprocess.run(naive_cmd, capture_output=True, text=True, env=env, timeout=300)
        naive_cli_s = time.perf_counter() - t
        assert proc.returncode == 0, proc.stderr

    print(
        f"tree: {files} Python files of `{args.package}` ({size / 1e6:.1f} MB), selected in full; "
        f"package {total:,} tokens (naive count {naive_total:,})"
    )
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}; "
        f"median of {args.repeat}"
    )
    print(f"{'step':<44} {'tooldeck':>10} {'naive':>10} {'ratio':>8}")
    print(f"{'select the folder (manage_selection add)':<44} {select_s * 1000:>8.0f}ms {'':>10} {'':>8}")
    print(f"{'workspace_context, first call (cold)':<44} {cold_s * 1000:>8.0f}ms {'':>10} {'':>8}")
    print(
        f"{'workspace_context, repeated (warm)':<44} {warm_s * 1000:>8.0f}ms {naive_s * 1000:>8.0f}ms "
        f"{naive_s / warm_s:>7.1f}x"
    )
    print(
        f"{'new process `tooldeck call workspace_context`':<44} {cli_s * 1000:>8.0f}ms {naive_cli_s * 1000:>8.0f}ms "
        f"{naive_cli_s / cli_s:>7.1f}x"
    )
    print("naive = render the package and tokenize all of it (quicktok o200k) on every call")
    # no goal line: no issue, README or docs page states a goal here (issue 5's note, the README only report it)


if __name__ == "__main__":
    main()
