"""Peak memory of read_file on a big file (issue 8 item 15), beside a baseline.

Each measurement runs in a fresh subprocess: it writes a file of ``--mb``
megabytes (100-byte lines), warms the tokenizer and the pager up on a small
file, then reports how much the peak RSS grew during one call. Baseline: a
bare ``open().read()`` of the same file (the least any whole-file reader
holds). Usage: ``python bench/large_read_bench.py [--mb 200]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time

from goals import report  # bench/ is on sys.path when a script of it runs

CHILD = textwrap.dedent(
    """
    import resource, sys, time
    root, mb, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    line = ("y" * 99 + "\\n").encode()
    with open(root + "/big.txt", "wb") as fh:
        for _ in range(mb * 10_000):
            fh.write(line)
    with open(root + "/small.txt", "wb") as fh:
        fh.write(line * 5000)
    from tooldeck.catalog import build_toolbox
    from tooldeck.runtime import Runtime
    box = build_toolbox(Runtime.for_dirs([root], state_dir=root + "/.state"))
    box.call_sync("read_file", '{"path": "small.txt"}')
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    began = time.perf_counter()
    if mode == "tooldeck":
        res = box.call_sync("read_file", '{"path": "big.txt"}')
        assert not res.is_error, res.text[:200]
    else:
        with open(root + "/big.txt", "rb") as fh:
            data = fh.read()
    took = time.perf_counter() - began
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{(peak - base) / 1024:.1f} {peak / 1024:.1f} {took:.2f}")
    """
)


def measure(mb: int, mode: str) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as root:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, root, str(mb), mode],
            capture_output=True,
            text=True,
            check=True,
            env=os.environ,
        )
    grown, peak, took = (float(x) for x in out.stdout.split())
    return grown, peak, took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=200)
    args = parser.parse_args()
    began = time.perf_counter()
    rows = [("open().read()", *measure(args.mb, "baseline")), ("tooldeck read_file", *measure(args.mb, "tooldeck"))]
    print(f"read of a {args.mb} MB file (100-byte lines); peak RSS growth during the call")
    print(f"{'reader':<20} {'grown MB':>9} {'peak MB':>8} {'seconds':>8}")
    for name, grown, peak, took in rows:
        print(f"{name:<20} {grown:>9.1f} {peak:>8.1f} {took:>8.2f}")
    base_grown = rows[0][1]
    print(
        f"ratio tooldeck/baseline (growth): {rows[1][1] / base_grown:.3f}  ({time.perf_counter() - began:.0f}s total)"
    )
    # the goal: streamed, the peak stays near what is shown (tests/tools/files/test_read_large.py: < 40 MB for 200 MB)
    report("large_read_bench", f"read_file of {args.mb} MB: peak RSS growth, MB", rows[1][1], "<", 40, 1)


if __name__ == "__main__":
    main()
