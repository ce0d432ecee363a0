"""The transcript view: a Line API widget that renders only what is on screen.

Why not one widget per message: a 1,000-message conversation would lay out,
and so render, every message before the first frame. Here each block is
rendered (Rich → lines at the view's width) only when it comes into view, its
lines are cached (keyed by width and the block's version), and blocks not yet
rendered count with an estimated height. An idle timer measures the rest a
few milliseconds at a time, nearest first, so the scrollbar becomes exact
without a stall. When a height above the viewport changes the view keeps its
place (the first visible block stays where it was); when the view follows the
end (the default, until the person scrolls up) it stays at the end.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections import OrderedDict

from rich.console import ConsoleOptions
from rich.style import Style
from textual import events
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer

from tooldeck.tui.blocks import Block

CACHE_BLOCKS = 40  # rendered blocks kept: a few screens (their lines are many small objects to collect)
IDLE_BUDGET = 0.004  # seconds of measuring per idle tick: far below a 16 ms frame
IDLE_EVERY = 0.02  # while blocks wait to be measured; the timer sleeps once all are


class ChatView(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    ChatView { height: 1fr; overflow-x: hidden; overflow-y: scroll; padding: 0 1; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.blocks: list[Block] = []
        self._pos: dict[int, int] = {}  # block key -> index
        self._heights: list[int] = []
        self._exact: list[bool] = []
        self._offsets: list[int] = [0]
        self._valid = 0  # offsets[: valid + 1] are right
        self._cache: OrderedDict[int, tuple[tuple[int, int, bool], list[Strip]]] = OrderedDict()
        self._width = 0
        self._scan = -1  # the idle measurer walks up from the end
        self._idle: Timer | None = None  # its timer, paused while nothing waits to be measured
        self._busy_scroll = False
        self.follow = True
        self.rendered = 0  # blocks rendered so far (tests and benchmarks read it)
        self._options: tuple[int, ConsoleOptions] | None = None
        self._style: Style | None = None  # rich_style walks the DOM: once per sync, not per line

    def on_mount(self) -> None:
        super().on_mount()
        self._idle = self.set_interval(IDLE_EVERY, self._measure_idle)

    # content ------------------------------------------------------------------------
    def reset(self, blocks: list[Block]) -> None:
        self.blocks = list(blocks)
        self._pos = {b.key: i for i, b in enumerate(self.blocks)}
        w = self._width or 80
        self._heights = [b.estimate(w) for b in self.blocks]
        self._exact = [False] * len(self.blocks)
        self._valid = 0
        self._cache.clear()
        self._rescan()
        self.follow = True
        self.sync()

    def append(self, block: Block) -> None:
        self._pos[block.key] = len(self.blocks)
        self.blocks.append(block)
        self._heights.append(block.estimate(self._width or 80))
        self._exact.append(False)  # offsets past the old end are recomputed on demand

    def insert(self, index: int, block: Block) -> None:
        self.blocks.insert(index, block)
        self._heights.insert(index, block.estimate(self._width or 80))
        self._exact.insert(index, False)
        self._reindex(index)

    def remove(self, block: Block) -> None:
        i = self._pos.pop(block.key, None)
        if i is None:
            return
        del self.blocks[i], self._heights[i], self._exact[i]
        self._cache.pop(block.key, None)
        self._reindex(i)

    def index(self, block: Block) -> int | None:
        return self._pos.get(block.key)

    def _reindex(self, start: int) -> None:
        for j in range(start, len(self.blocks)):
            self._pos[self.blocks[j].key] = j
        self._valid = min(self._valid, start)
        self._rescan()

    def insert_after(self, anchor: Block, block: Block) -> None:
        i = self._pos.get(anchor.key)
        if i is None:
            self.append(block)
        else:
            self.insert(i + 1, block)

    def changed(self, block: Block) -> None:
        i = self._pos.get(block.key)
        if i is not None:
            self._exact[i] = False

    # measuring ------------------------------------------------------------------------
    def _lines(self, i: int) -> list[Strip]:
        block = self.blocks[i]
        key = (self._width, block.version, block.expanded)
        hit = self._cache.get(block.key)
        if hit is not None and hit[0] == key:
            self._cache.move_to_end(block.key)
            return hit[1]
        console = self.app.console
        if self._options is None or self._options[0] != self._width:  # console.options asks the tty its size
            self._options = (self._width, console.options.update(width=self._width, height=None, highlight=False))
        lines = console.render_lines(block.renderable(), self._options[1], pad=True)
        strips = [Strip(line, self._width) for line in lines] or [Strip.blank(self._width)]
        self.rendered += 1
        self._cache[block.key] = (key, strips)
        if len(self._cache) > CACHE_BLOCKS:
            self._cache.popitem(last=False)
        return strips

    def _height(self, i: int) -> int:
        """A block's height without keeping its lines (the idle measurer: nothing cached, nothing to collect)."""
        block = self.blocks[i]
        hit = self._cache.get(block.key)
        if hit is not None and hit[0] == (self._width, block.version, block.expanded):
            return len(hit[1])
        console = self.app.console
        if self._options is None or self._options[0] != self._width:
            self._options = (self._width, console.options.update(width=self._width, height=None, highlight=False))
        self.rendered += 1
        return max(1, len(console.render_lines(block.renderable(), self._options[1], pad=False)))

    def _measure(self, i: int, keep: bool = True) -> None:
        h = len(self._lines(i)) if keep else self._height(i)
        self._exact[i] = True
        if h != self._heights[i]:
            self._heights[i] = h
            self._valid = min(self._valid, i)

    def _offs(self) -> list[int]:
        n = len(self.blocks)
        if self._valid < n or len(self._offsets) != n + 1:
            offs = self._offsets[: self._valid + 1] or [0]
            for i in range(len(offs) - 1, n):
                offs.append(offs[-1] + self._heights[i])
            self._offsets, self._valid = offs, n
        return self._offsets

    def _at(self, y: int) -> int:
        offs = self._offs()
        return max(0, min(len(self.blocks) - 1, bisect_right(offs, y) - 1))

    # layout -----------------------------------------------------------------------------
    def sync(self) -> None:
        """Measure what is on screen, keep the view's place, redraw."""
        width = self.scrollable_content_region.width
        if width <= 0 or not self.is_mounted:
            return
        if width != self._width:
            self._width = width
            self._heights = [b.estimate(width) for b in self.blocks]
            self._exact = [False] * len(self.blocks)
            self._valid = 0
            self._rescan()
        self._style = self.rich_style
        height = max(1, self.scrollable_content_region.height)
        n = len(self.blocks)
        if n == 0:
            self._set_virtual(0)
            self.refresh()
            return
        if self.follow:
            i, seen = n - 1, 0
            while i >= 0 and seen < height + 4:
                if not self._exact[i]:
                    self._measure(i)
                seen += self._heights[i]
                i -= 1
            self._set_virtual(self._offs()[-1])
            self._scroll(self.max_scroll_y)
        else:
            y = int(self.scroll_y)
            first = self._at(y)
            within = y - self._offs()[first]
            j, seen = first, -within
            while j < n and seen < height + 4:
                if not self._exact[j]:
                    self._measure(j)
                seen += self._heights[j]
                j += 1
            self._set_virtual(self._offs()[-1])
            self._scroll(self._offs()[first] + min(within, max(0, self._heights[first] - 1)))
        self.refresh()

    def _set_virtual(self, total: int) -> None:
        size = Size(self._width, total)
        if self.virtual_size != size:
            self.virtual_size = size

    def _scroll(self, y: int) -> None:
        y = max(0, min(y, self.max_scroll_y))
        if int(self.scroll_y) != y:
            self._busy_scroll = True
            try:
                self.scroll_to(y=y, animate=False, immediate=True, force=True)
            finally:
                self._busy_scroll = False

    def _rescan(self) -> None:
        """The idle measurer looks again from the end (measured blocks cost a check)."""
        self._scan = len(self.blocks) - 1
        if self._idle is not None:
            self._idle.resume()

    def _measure_idle(self) -> None:
        """Blocks not yet measured, a few milliseconds' worth per tick, from the end up."""
        if self._width <= 0:
            return  # not laid out yet: the first layout asks again (_rescan)
        start = time.perf_counter()
        changed = False
        while self._scan >= 0 and time.perf_counter() - start < IDLE_BUDGET:
            if self._scan < len(self.blocks) and not self._exact[self._scan]:
                self._measure(self._scan, keep=False)
                changed = True
            self._scan -= 1
        if self._scan < 0 and self._idle is not None:
            self._idle.pause()  # nothing left: no wake-ups until a change asks again
        if changed:
            self.sync()

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if self._busy_scroll:
            return
        self.follow = new >= self.max_scroll_y - 0.5
        if round(old) != round(new):
            self.sync()

    def on_resize(self, event: events.Resize) -> None:
        self.sync()

    # drawing ------------------------------------------------------------------------------
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._style = None
        self._cache.clear()

    def render_line(self, y: int) -> Strip:
        width = self._width or self.scrollable_content_region.width
        top = int(self.scroll_y) + y
        offs = self._offs()
        style = self._style or self.rich_style
        if not self.blocks or top >= offs[-1] or width <= 0:
            return Strip.blank(width, style)
        i = self._at(top)
        lines = self._lines(i)
        k = top - offs[i]
        if len(lines) != self._heights[i]:
            self._exact[i] = False
            self.call_later(self.sync)  # its height changed: place it right on the next frame
        line = lines[k] if k < len(lines) else Strip.blank(width)
        return line.crop_extend(0, width, style).apply_style(style)

    # the person ---------------------------------------------------------------------------
    def block_at_screen(self, y: int) -> Block | None:
        top = int(self.scroll_y) + y
        if not self.blocks or top >= self._offs()[-1]:
            return None
        return self.blocks[self._at(top)]

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        block = self.block_at_screen(offset.y)
        if block is not None:
            block.toggle()
            self.changed(block)
            self.sync()

    def expand_all(self, expanded: bool) -> None:
        for b in self.blocks:
            if b.expanded != expanded:
                b.toggle()
                self.changed(b)
        self.sync()

    def scroll_to_end(self) -> None:
        self.follow = True
        self.sync()
