"""Event-loop stall while a big tool result is held to the output budget.

Issue 14: no CPU work over 5 ms on the server's event loop. A ticker task
sleeps 1 ms at a time on the loop while a tool returns a ~450 KB text; the
worst gap between ticks is the stall. Baseline: the same call with the budget
enforced on the loop (``INLINE_BUDGET_CHARS`` raised so nothing goes to a
worker), as before the change. Usage: ``python bench/loop_stall.py [--runs 5]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

from tooldeck.core import Toolbox, tool
from tooldeck.core import toolbox as toolbox_module
from tooldeck.workspace.tokens import count_tokens, warm_up

TEXT = "".join(f"line {i} " + "word " * 18 + "\n" for i in range(4500))


@tool()
def big() -> str:
    "A ~450 KB result."
    return TEXT


async def worst_stall() -> float:
    box = Toolbox([big], count_tokens=count_tokens)
    worst, done = 0.0, False

    async def ticker() -> None:
        nonlocal worst
        last = time.perf_counter()
        while not done:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            worst, last = max(worst, now - last), now

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.05)
    worst = 0.0
    await box.call("big", "{}")
    done = True
    await task
    return worst * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    warm_up()
    inline = toolbox_module.INLINE_BUDGET_CHARS
    rows = []
    for label, limit in (("budget on the loop (before)", 10**12), ("budget in a worker (tooldeck)", inline)):
        toolbox_module.INLINE_BUDGET_CHARS = limit
        stalls = [asyncio.run(worst_stall()) for _ in range(args.runs)]
        rows.append((label, stalls))
    toolbox_module.INLINE_BUDGET_CHARS = inline
    print(f"result: {len(TEXT):,} chars; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; {args.runs} runs")
    print(f"{'case':<32}{'median ms':>10}{'max ms':>10}")
    for label, stalls in rows:
        print(f"{label:<32}{statistics.median(stalls):>10.1f}{max(stalls):>10.1f}")
    base, ours = (statistics.median(s) for _, s in rows)
    print(f"ratio tooldeck / before: {ours / base:.2f} (goal: worst stall <= 5 ms)")


if __name__ == "__main__":
    main()
