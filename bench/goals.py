"""Goals of the benchmarks, and a table of them with pass/fail.

A benchmark states a measured figure against its goal with :func:`report`,
which prints one line the collector recognises::

    GOAL | context_speed | warm build p50, CPU s | 0.27 | <= 0.5 | pass

``python bench/goals.py RESULTS.txt`` reads a saved run (``bench/run_all.sh``
keeps them in ``bench/results/``) and prints every such line as one Markdown
table, rows in the order they ran, with the run's date, commit and machine
load from its header; ``run_all.sh`` calls it at the end of a run. A
benchmark that has no goal line is listed by name below the table, so a goal
is never silently missing.
"""

from __future__ import annotations

import operator
import re
import sys
from pathlib import Path

OPS = {"<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt}
MARK = "GOAL |"


def report(bench: str, measure: str, value: float, op: str, limit: float, digits: int = 2) -> bool:
    """Print one goal line; True when met."""
    ok = OPS[op](value, limit)
    print(f"{MARK} {bench} | {measure} | {value:.{digits}f} | {op} {limit:g} | {'pass' if ok else 'FAIL'}")
    return ok


def collect(text: str) -> tuple[list[list[str]], list[str], str]:
    """(goal rows, benchmarks run without a goal line, the run's header line)."""
    rows: list[list[str]] = []
    ran: list[str] = []
    header = next((ln for ln in text.splitlines() if ln.startswith("tooldeck benchmarks")), "")
    for ln in text.splitlines():
        m = re.match(r"^\$ (?:\S*python\S* )?(?:\S*/)?bench/(\w+)\.(?:py|sh)", ln)
        if m:
            ran.append(m.group(1))
        if ln.startswith(MARK):
            rows.append([c.strip() for c in ln[len(MARK) :].split("|")])
    with_goal = {r[0] for r in rows}
    missing = [b for b in dict.fromkeys(ran) if b not in with_goal and b != "scratch_ext4"]
    return rows, missing, header


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else max(Path(__file__).parent.glob("results/*.txt"))
    rows, missing, header = collect(path.read_text(encoding="utf-8", errors="replace"))
    print(f"Goals of {path.name}: {header}")
    print()
    print("| benchmark | measure | value | goal | result |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    failed = sum(1 for r in rows if r[-1] == "FAIL")
    print()
    print(f"{len(rows) - failed} of {len(rows)} goals met" + (f"; {failed} not met" if failed else ""))
    if missing:
        print("no goal line printed by: " + ", ".join(missing))


if __name__ == "__main__":
    main()
