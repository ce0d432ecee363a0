"""The output budget: a result larger than the caller's token budget is paged,
never cut blindly.

Tools that can degrade gracefully (fewer details, then counts) do so themselves
and take a ``budget``. This module is the safety net every tool gets from the
Toolbox: it splits an oversized text result at line boundaries, keeps the rest
under a cursor, and ends the page with a line that names what was left out and
the cursor that continues. ``{"cursor": "p:..."}`` on the same tool returns the
next page.

Core knows nothing of tooldeck's tokenizer: the counter is injected (hosts pass
the real BPE counter; the default is a conservative bytes/3 estimate).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from tooldeck.core.output import Output, TextPart

TokenCounter = Callable[[str], int]
DEFAULT_BUDGET = 20_000
CURSOR_PREFIX = "p:"
_NOTE_RESERVE = 80  # tokens kept free for the closing note


def estimate_tokens(text: str) -> int:
    """A cheap upper-leaning estimate (about 3 bytes per token for code)."""
    return len(text.encode("utf-8", "surrogatepass")) // 3 + 1


@dataclass(slots=True)
class _Pending:
    tool: str
    lines: list[str]
    start_line: int  # 1-based number of lines[0] in the whole output
    total_lines: int


class PageStore(Protocol):
    """Where pages outlive the process (the CLI: one process per call). A
    host passes one; core only needs these two calls."""

    def save(self, cursor: str, page: dict[str, Any]) -> None: ...

    def load(self, cursor: str) -> dict[str, Any] | None:
        """The page saved under ``cursor`` (removed: a cursor is used once), or None."""
        ...


CURSOR_RE = re.compile(r"p:[0-9a-f]{12}")


class Pager:
    """Keeps the unread remainder of oversized outputs, keyed by cursor (LRU).

    With a :class:`PageStore` every page is also saved there, so a cursor
    printed by one process continues in the next. Continuing never runs the
    tool again: a page is text already produced."""

    def __init__(self, capacity: int = 64, store: PageStore | None = None) -> None:
        self._items: OrderedDict[str, _Pending] = OrderedDict()
        self._capacity = capacity
        self._lock = threading.Lock()
        self.store = store

    def put(self, pending: _Pending) -> str:
        import secrets  # lazy: on the first page cut (~1.5 ms: hmac, random), not on a start

        cursor = CURSOR_PREFIX + secrets.token_hex(6)
        with self._lock:
            self._items[cursor] = pending
            while len(self._items) > self._capacity:
                self._items.popitem(last=False)
        if self.store is not None:
            self.store.save(cursor, asdict(pending))
        return cursor

    def take(self, cursor: str) -> _Pending | None:
        with self._lock:
            pending = self._items.pop(cursor, None)
        if self.store is not None and CURSOR_RE.fullmatch(cursor):
            saved = self.store.load(cursor)  # removes it from the store either way
            if pending is None and saved is not None:
                try:
                    pending = _Pending(**saved)
                except TypeError:
                    return None
        return pending


def fits(text: str, budget: int, count: TokenCounter) -> bool:
    # A BPE token always covers at least one byte, so a text with no more bytes
    # than the budget fits without counting.
    if len(text) <= budget and len(text.encode("utf-8", "surrogatepass")) <= budget:
        return True
    # A huge text: if a prefix is already well over the budget, so is the whole
    # (cutting can only change the tokens at the cut). Saves counting megabytes.
    probe = budget * 8
    if len(text) > probe and count(text[:probe]) > budget + 16:
        return False
    return count(text) <= budget


def _take_page(lines: list[str], budget: int, count: TokenCounter) -> int:
    """How many leading ``lines`` fit in ``budget`` tokens (at least one).

    The tokens-per-character ratio is measured on a sample about one page
    long, not on the whole remainder (which may be megabytes), then the
    estimate is corrected with a real count of the page."""
    sample_chars, k = 0, 0
    while k < len(lines) and sample_chars < budget * 6:
        sample_chars += len(lines[k]) + 1
        k += 1
    per_char = (count("\n".join(lines[:k])) or 1) / (sample_chars or 1)
    n, used = 0, 0.0
    for line in lines:
        cost = (len(line) + 1) * per_char
        if used + cost > budget and n > 0:
            break
        used += cost
        n += 1
    # correct the estimate with a real count, shrinking by 10% steps
    while n > 1 and count("\n".join(lines[:n])) > budget:
        n = max(1, int(n * 0.9))
    return n


def _fit_prefix(line: str, room: int, count: TokenCounter) -> int:
    """How many leading characters of ``line`` fit in ``room`` tokens (>= 1)."""
    size = min(len(line), room * 3)
    while size > 1 and count(line[:size]) > room:
        size = max(1, size * 2 // 3)
    return size


def paginate(tool: str, pending: _Pending, budget: int, count: TokenCounter, pager: Pager) -> Output:
    lines = pending.lines
    usable = max(200, budget - _NOTE_RESERVE)
    n = _take_page(lines, usable, count)
    page = lines[:n]
    split = False  # whether the page ends inside a line (the next page continues it)
    if len(page) == 1 and count(page[0]) > usable:
        # one enormous line: split it by characters
        cut = _fit_prefix(page[0], usable, count)
        page, lines, split = [page[0][:cut]], [page[0][:cut], page[0][cut:], *lines[1:]], True
    elif n < len(lines):
        # the next line does not fit whole: if a good part of the page is still
        # free, fill it with the head of that line instead of wasting it
        room = usable - count("\n".join(page)) - 1
        if room > usable // 4:
            cut = _fit_prefix(lines[n], room, count)
            head, tail = lines[n][:cut], lines[n][cut:]
            if tail:
                page, lines, split = [*page, head], [*page, head, tail, *lines[n + 1 :]], True
    rest = lines[len(page) :]
    if not rest:
        return Output.text("\n".join(page))
    first = pending.start_line
    last = first + len(page) - 1
    page_chars = sum(len(line) + 1 for line in page) or 1
    rest_chars = sum(len(line) + 1 for line in rest)
    # estimated from the page's own ratio: counting a megabyte remainder on every page costs more than it tells
    remaining_tokens = round(rest_chars * count("\n".join(page)) / page_chars)
    cursor = pager.put(_Pending(tool, rest, last if split else last + 1, pending.total_lines))
    shown = f"lines {first}-{last} of {pending.total_lines} shown" + (f" (line {last} continues)" if split else "")
    more = len(rest) - 1 if split else len(rest)
    note = (
        f"[output truncated to fit the {budget}-token budget: {shown}; {more} more lines "
        f"(~{remaining_tokens} tokens) not shown. "
        f'Continue with {{"cursor": "{cursor}"}} on {tool}, or narrow the request.]'
    )
    return Output.text("\n".join(page) + "\n" + note)


def enforce_budget(tool: str, output: Output, budget: int, count: TokenCounter, pager: Pager) -> Output:
    """Return ``output`` unchanged if it fits, else its first page with a note."""
    text = output.as_text()
    if fits(text, budget, count):
        return output
    images = [p for p in output.parts if not isinstance(p, TextPart)]
    lines = text.split("\n")
    page = paginate(tool, _Pending(tool, lines, 1, len(lines)), budget, count, pager)
    if images:
        return Output.of_parts([*page.parts, *images])
    return page
