"""ripgrep's word count with ``--ignore-case`` against a case-sensitive pass over spelled variants.

A build during the fills counts the task's words with one rg pass
(``workspace/ripgrep.py``: ``-o -i -w -F --no-unicode``). With a dozen words,
``--ignore-case`` costs rg about twice the CPU of the same pass without it:
each literal's case variants are too many for rg's literal prefilter, so it
verifies far more candidates. Four spellings per word (as the task wrote it,
lower, UPPER, Capitalized) searched case-sensitively keep the prefilter; this
script measures what that would save and what it would miss (camelCase
spellings such as ``ZipFile`` for ``zipfile`` or ``setUp`` for ``setup``).

For each of context_speed's 15 tasks on its tree: rg's CPU both ways (its own
process, from ``RUSAGE_CHILDREN``), and the (file, word) counts that differ.
The result decides nothing by itself; it is the measurement behind the
"case variants" paragraph of docs/context_builder.md.

    python bench/rg_case.py [--tree DIR] [--files 14000] [--held-out]
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import context_speed as cs  # the same tree and tasks

COMMON = ["-o", "-w", "-F", "--no-unicode", "-H", "--null", "--no-line-number", "--no-heading", "--max-filesize", "2M"]


def spellings(term: str) -> list[str]:
    return sorted({term, term.lower(), term.upper(), term[:1].upper() + term[1:].lower()})


def counted(rg: str, tree: Path, args: list[str]) -> tuple[Counter[tuple[bytes, bytes]], float]:
    """(file, lowered word) → count, and rg's CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([rg, *COMMON, *args], cwd=tree, capture_output=True, check=False).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    found: Counter[tuple[bytes, bytes]] = Counter()
    for line in out.split(b"\n"):
        path, sep, word = line.partition(b"\0")
        if sep:
            found[(path, word.lower())] += 1
    return found, cpu


def main() -> None:
    args = cs.tree_options().parse_args()
    tree, made = cs.tree_of(args)
    from tooldeck.context.query import parse_query
    from tooldeck.context.retrieve import content_terms
    from tooldeck.workspace.ripgrep import find_rg

    rg = find_rg()
    if rg is None:
        sys.exit("rg not found")
    try:
        print(f"{'task':<44}{'-i CPU s':>10}{'variants CPU s':>16}{'counts missed':>15}  first missed")
        total_i = total_v = 0.0
        differ = 0
        for task in cs.tasks_of(args):
            terms = content_terms(parse_query(task))
            exact, cpu_i = counted(rg, tree, ["-i", *[a for t in terms for a in ("-e", t)]])
            fast, cpu_v = counted(rg, tree, [a for t in terms for v in spellings(t) for a in ("-e", v)])
            missed = exact - fast
            total_i, total_v = total_i + cpu_i, total_v + cpu_v
            differ += bool(missed)
            first = next(iter(missed.items()), None)
            shown = f"{first[0][0].decode(errors='replace')}: {first[0][1].decode()}" if first else ""
            print(f"{task[:42]:<44}{cpu_i:>10.3f}{cpu_v:>16.3f}{sum(missed.values()):>15}  {shown}")
        n = len(cs.tasks_of(args))
        print(
            f"{'all tasks':<44}{total_i:>10.2f}{total_v:>16.2f}   variants / -i CPU {total_v / total_i:.2f}; "
            f"tasks with a count missed: {differ} of {n}"
        )
    finally:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)


if __name__ == "__main__":
    main()
