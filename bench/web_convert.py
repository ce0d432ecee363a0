"""webpage_to_markdown's conversion cost beside bare html-to-markdown.

Pages are generated (no network): sections with headings, paragraphs with
inline markup, a table and a highlighted code block each, inside a page with
navigation, a sidebar and a footer around ``<main>``. For each size:

* baseline: ``html_to_markdown.convert(html)`` alone, default options;
* scan: tooldeck's main-region and code-language pass (``main_region``);
* tooldeck: ``html_to_markdown`` of tooldeck (scan + convert with the
  boilerplate selectors), what the tool spends per page after the download.

CPU seconds (``time.process_time``, best of ``--repeat``), so a loaded shared
machine does not inflate the numbers. Goal: the scan costs less than the
conversion itself (tooldeck <= 2x the baseline).

Usage: ``python bench/web_convert.py [--repeat 3]``
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable

from goals import report  # bench/ is on sys.path when a script of it runs
from html_to_markdown import convert

from tooldeck.web_fetch.convert import html_to_markdown, main_region


def page(sections: int) -> str:
    body = "".join(
        f"<section><h2>Section {i}</h2><p>Some <b>bold</b> text with a <a href='/l{i}'>link</a>. {'word ' * 40}</p>"
        f"<table><tr><th>k</th><th>v</th></tr><tr><td>a{i}</td><td>{i}</td></tr></table>"
        f"<div class='highlight highlight-source-python'><pre>def f{i}(x):\n    return x + {i}</pre></div></section>"
        for i in range(sections)
    )
    chrome = "<nav>" + "".join(f"<a href='/n{i}'>nav {i}</a>" for i in range(50)) + "</nav>"
    return (
        f"<!doctype html><html><head><title>Bench</title><script>var x = '<main>';</script></head><body>"
        f"{chrome}<aside>sidebar</aside><main>{body}</main><footer>footer</footer></body></html>"
    )


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"# {platform.machine()} {platform.python_implementation()} {platform.python_version()}")
    print(f"{'sections':>8} {'size KB':>8} {'baseline s':>10} {'scan s':>8} {'tooldeck s':>10} {'ratio':>6}")
    ratios: list[tuple[int, float]] = []  # (page KB, tooldeck / baseline)
    for sections in (100, 1000, 5000):
        html = page(sections)
        base = best(lambda html=html: convert(html), args.repeat)
        scan = best(lambda html=html: main_region(html), args.repeat)
        ours = best(lambda html=html: html_to_markdown(html), args.repeat)
        ratio = ours / max(base, 1e-9)
        ratios.append((len(html) // 1024, ratio))
        print(f"{sections:>8} {len(html) // 1024:>8} {base:>10.3f} {scan:>8.3f} {ours:>10.3f} {ratio:>6.2f}")
    for kb, ratio in ratios:  # the goal in this docstring: tooldeck <= 2x the baseline
        report("web_convert", f"{kb:,} KB page: tooldeck / html-to-markdown, CPU", ratio, "<=", 2)


if __name__ == "__main__":
    main()
