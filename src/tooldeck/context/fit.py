"""The budget fitter: choose how each ranked file enters the context.

Every file steps down ``full → slices → codemap → omitted`` until the whole
selection fits the token budget. Greedy passes, all in rank order:

1. **coverage**: the cheapest view of each ranked file (its codemap; for a
   file without one, the slices around the task's words; a file smaller than
   either, whole), up to ``COVERAGE_SHARE`` of the budget, so the model sees
   the shape of everything relevant. Half the budget goes to breadth: a task
   touches a test, a doc page, a caller beside the file it names, and a file
   left out entirely is one the model cannot know to ask for, while a file
   shown as a codemap can be opened in full on demand;
2. **depth for the lead**: the ``LEAD`` best-ranked files are upgraded to
   their full text (when the file is at most ``FULL_SHARE`` of the budget,
   ``TOP_FULL_SHARE`` for the best-ranked one) or else to slices around what
   the task names. A quarter of the budget at most (7,500 tokens of 30,000):
   a larger file shown whole would push out a dozen codemaps of files ranked
   below it, while its slices show the lines the task names;
3. **more breadth**: ranked files still out get their cheapest view, up to
   ``BREADTH_SHARE`` (90 %) of the budget: upgrading the tenth file to full
   text is worth less than showing the thirtieth at all;
4. **depth for the rest**, in rank order, while the budget allows;
5. **fill**: any ranked file still out gets its codemap if it fits.

Pure: costs come in with the candidates; the builder verifies the result
against the real rendering and trims if the estimate was short.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tooldeck.state.selections import LineRange

FitMode = Literal["full", "slices", "codemap", "omitted"]
_Mode = Literal["full", "slices", "outline", "codemap", "omitted"]  # outline: a doc page's headings, as slices
COVERAGE_SHARE = 0.5
FULL_SHARE = 0.25  # a file larger than this share of the budget is sliced rather than shown whole...
TOP_FULL_SHARE = 0.8  # ...except the best-ranked file, which the task is most likely about
MAX_CANDIDATES = 80
LEAD = 3
BREADTH_SHARE = 0.9


@dataclass(slots=True)
class Candidate:
    key: str  # canonical absolute path
    shown: str
    score: float
    reasons: list[str] = field(default_factory=list)
    full: int | None = None  # tokens of the whole file (None: not readable text)
    codemap: int | None = None  # tokens of its codemap (None: no codemap)
    slices: tuple[tuple[LineRange, ...], int] | None = None  # (ranges, tokens)
    outline: tuple[tuple[LineRange, ...], int] | None = None  # a doc page's headings: (ranges, tokens)


@dataclass(slots=True)
class Choice:
    candidate: Candidate
    mode: FitMode
    tokens: int = 0
    ranges: tuple[LineRange, ...] = ()
    why: str = ""


def _cost(c: Candidate, mode: _Mode) -> int | None:
    if mode == "full":
        return c.full
    if mode == "codemap":
        return c.codemap
    if mode == "slices":
        return c.slices[1] if c.slices else None
    if mode == "outline":
        return c.outline[1] if c.outline else None
    return 0


def _cheapest(c: Candidate) -> _Mode | None:
    """The smallest way to show a file: its codemap, or for a doc page its
    outline (headings), or for a file without either (configuration) the
    slices around the task's words, or its whole text when that is smaller
    still (a short file needs no summary)."""
    options: list[tuple[int, int, _Mode]] = []
    for order, m in enumerate(("codemap", "outline", "slices", "full")):
        cost = _cost(c, m)  # type: ignore[arg-type]
        if cost is not None:
            options.append((cost, order, m))  # type: ignore[arg-type]
    return min(options)[2] if options else None


def fit(candidates: list[Candidate], budget: int) -> list[Choice]:
    """One Choice per candidate (rank order kept); chosen tokens ≤ ``budget``."""
    ranked = candidates[:MAX_CANDIDATES]
    mode: dict[str, _Mode] = {c.key: "omitted" for c in candidates}
    used = 0

    def cost_of(c: Candidate) -> int:
        return _cost(c, mode[c.key]) or 0

    def try_set(c: Candidate, new: _Mode, cap: int) -> bool:
        nonlocal used
        new_cost = _cost(c, new)
        if new_cost is None:
            return False
        delta = new_cost - cost_of(c)
        if used + delta > cap:
            return False
        used += delta
        mode[c.key] = new
        return True

    def cover(cap: int) -> None:
        for c in ranked:
            cheapest = _cheapest(c) if mode[c.key] == "omitted" else None
            if cheapest is not None:
                try_set(c, cheapest, cap)

    def deepen(files: list[Candidate]) -> None:
        for c in files:
            share = TOP_FULL_SHARE if c is ranked[0] else FULL_SHARE
            if c.full is not None and c.full <= budget * share and try_set(c, "full", budget):
                continue
            if mode[c.key] != "full" and (c.slices and (c.full is None or c.slices[1] < c.full)):
                try_set(c, "slices", budget)

    cover(int(budget * COVERAGE_SHARE))
    deepen(ranked[:LEAD])
    cover(int(budget * BREADTH_SHARE))
    deepen(ranked[LEAD:])
    for c in ranked:
        if mode[c.key] == "omitted":
            try_set(c, "codemap", budget) or try_set(c, "outline", budget) or try_set(c, "slices", budget)

    out: list[Choice] = []
    for rank, c in enumerate(candidates, 1):
        m = mode[c.key]
        tokens = _cost(c, m) or 0
        ranges = c.slices[0] if (m == "slices" and c.slices) else ()
        if m == "outline" and c.outline:  # shown as slices: the heading lines
            out.append(Choice(c, "slices", tokens, c.outline[0], _why(c, m, rank)))
            continue
        out.append(Choice(c, m, tokens, ranges, _why(c, m, rank)))
    return out


def _why(c: Candidate, m: _Mode, rank: int) -> str:
    basis = "; ".join(dict.fromkeys(c.reasons)) or "linked by references"
    if m == "full":
        return f"#{rank} {basis}"
    if m == "outline":
        return f"#{rank} {basis}; headings only to stay in budget"
    if m == "slices":
        whole = f" (whole file {c.full} tokens)" if c.full else ""
        return f"#{rank} {basis}; sliced to what the task names{whole}"
    if m == "codemap":
        return f"#{rank} {basis}; signatures only to stay in budget" if c.full else f"#{rank} {basis}; signatures"
    if rank > MAX_CANDIDATES:
        return f"#{rank} {basis}; below the top {MAX_CANDIDATES}"
    return f"#{rank} {basis}; no room left in the budget"
