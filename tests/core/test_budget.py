"""The output budget: oversized results are paged with a cursor, never cut blindly."""

from __future__ import annotations

import re

from tooldeck.core import Toolbox, tool
from tooldeck.tokens import count_tokens


@tool
def lines(n: int, width: int = 40) -> str:
    return "\n".join(f"{i:06d} " + "x" * width for i in range(n))


def _cursor(text: str) -> str:
    m = re.search(r'"cursor": "(p:[0-9a-f]+)"', text)
    assert m, text[-300:]
    return m.group(1)


def test_small_output_is_untouched():
    box = Toolbox([lines], budget_tokens=1000, count_tokens=count_tokens)
    assert box.call_sync("lines", {"n": 3}).text.count("\n") == 2


def test_large_output_pages_and_cursor_continues_until_everything_was_seen():
    box = Toolbox([lines], budget_tokens=500, count_tokens=count_tokens)
    res = box.call_sync("lines", {"n": 400})
    pages = [res.text]
    while "[output truncated" in pages[-1]:
        assert count_tokens(pages[-1]) <= 500
        pages.append(box.call_sync("lines", {"cursor": _cursor(pages[-1])}).text)
    seen = [ln for p in pages for ln in p.split("\n") if not ln.startswith("[output truncated")]
    assert seen == [f"{i:06d} " + "x" * 40 for i in range(400)]
    assert "more lines" in pages[0] and "lines 1-" in pages[0]


def test_unknown_cursor_is_a_clear_error():
    box = Toolbox([lines], budget_tokens=500, count_tokens=count_tokens)
    res = box.call_sync("lines", {"cursor": "p:000000000000"})
    assert res.is_error and "cursor" in res.text


def test_one_huge_line_is_split_by_characters():
    @tool
    def blob() -> str:
        return "y" * 200_000

    box = Toolbox([blob], budget_tokens=1000, count_tokens=count_tokens)
    res = box.call_sync("blob", {})
    assert count_tokens(res.text) <= 1000 and "[output truncated" in res.text


def test_custom_tool_output_pages_too():
    from tooldeck.core import custom_tool

    big = custom_tool(
        name="big",
        description="",
        grammar={"type": "grammar", "syntax": "lark", "definition": "x"},
        run=lambda s, inv: "\n".join(f"line {i} " + "z" * 30 for i in range(600)),
    )
    box = Toolbox([big], budget_tokens=500, count_tokens=count_tokens)
    first = box.call_sync("big", "*** raw input p:not-a-cursor")
    assert "[output truncated" in first.text
    nxt = box.call_sync("big", {"cursor": _cursor(first.text)})
    assert not nxt.is_error and nxt.text.split("\n", 1)[0].startswith("line ")
    assert nxt.text.split("\n", 1)[0] != first.text.split("\n", 1)[0]
    # the cursor as JSON text (how a host passes a custom tool's input), leading blanks included
    third = box.call_sync("big", '\n  {"cursor": "' + _cursor(nxt.text) + '"}')
    first_line = [int(page.text.split(" ", 2)[1]) for page in (first, nxt, third)]
    assert not third.is_error and first_line[0] < first_line[1] < first_line[2]
