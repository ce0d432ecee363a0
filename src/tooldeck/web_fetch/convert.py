"""Turning a fetched body into Markdown: the conversion half of webpage_to_markdown.

HTML goes through html-to-markdown (tables, fenced code with its language,
links, headings). Around it, two things the converter does not do itself:

* **Main content first.** A page's ``<main>`` (or ``role="main"``, else its
  only ``<article>``) is what a reader came for; menus, sidebars and footers
  around it are noise in a model's context. A one-pass stdlib HTML scan finds
  that element's span; the converter then sees only it. Boilerplate inside is
  still dropped by CSS selector (nav, asides, footers, cookie banners...).
* **Code languages the converter misses.** It reads ``<code class=
  "language-x">``; sites also mark the language on the ``<pre>`` (``lang``,
  ``data-lang``, ``class="lang-x"``, pandoc's ``sourceCode x``) or on a
  wrapping ``<div class="highlight-source-x">`` (GitHub, Sphinx). The scan
  copies a wrapper's language onto its ``<pre>`` and a visitor reads it.
"""

from __future__ import annotations

import codecs
import json
import re
from html.parser import HTMLParser

from html_to_markdown import ConversionOptions, PreprocessingOptions, convert

BOILERPLATE_SELECTORS = [
    "script",
    "style",
    "noscript",
    "template",
    "nav",
    "aside",
    "footer",
    "[role=navigation]",
    "[role=banner]",
    "[role=contentinfo]",
    "[role=complementary]",
    "[id*=cookie]",
    "[class*=cookie]",
    "[id*=consent]",
    "[class*=consent]",
    "[class*=gdpr]",
    "[class*=skip-link]",
]

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_LANG_CLASS = re.compile(r"^(?:language|lang|highlight-source|highlight|brush:?)-?([A-Za-z0-9_+#.-]+)$")
_LANG_NAME = re.compile(r"^[A-Za-z0-9_+#.-]{1,40}$")
_NOT_LANGS = frozenset({"highlight", "notranslate", "sourcecode", "code", "pre", "default", "none", "text", "plain"})


def decode_body(body: bytes, charset: str | None, *, html: bool) -> str:
    """Bytes to text: BOM, then the declared charset, then ``<meta charset>``, then UTF-8."""
    for bom, name in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if body.startswith(bom):
            return body.decode(name, errors="replace")
    candidates = [charset] if charset else []
    if html:
        m = _META_CHARSET.search(body[:4096])
        if m:
            candidates.append(m.group(1).decode("ascii", "replace"))
    for name in candidates:
        try:
            return body.decode(name, errors="replace")
        except LookupError:
            continue
    return body.decode("utf-8", errors="replace")


def lang_from_attrs(attrs: dict[str, str]) -> str | None:
    """A code language named by an element's attributes, if any."""
    for key in ("data-lang", "data-language", "lang"):
        value = (attrs.get(key) or "").strip()
        if value and _LANG_NAME.match(value) and value.lower() not in _NOT_LANGS:
            return value.lower()
    tokens = (attrs.get("class") or "").split()
    for token in tokens:
        m = _LANG_CLASS.match(token)
        if m and m.group(1).lower() not in _NOT_LANGS:
            return m.group(1).lower()
    if tokens and tokens[0].lower() == "sourcecode" and len(tokens) > 1 and _LANG_NAME.match(tokens[1]):
        return tokens[1].lower()  # pandoc: <pre class="sourceCode python">
    return None


class _Scan(HTMLParser):
    """One pass: the title, the main region's inner span, and the ``<pre>``
    tags that should inherit a language from a wrapping ``<div>``."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self._lines = [0]
        for m in re.finditer("\n", html):
            self._lines.append(m.end())
        self.title: str | None = None
        self._in_title = False
        self.main: tuple[int, int] | None = None
        self.articles: list[tuple[int, int]] = []
        # candidate regions still open: (tag, nesting depth of that tag, inner start, "main" | "article")
        self._open: list[tuple[str, int, int, str]] = []
        self._depth: dict[str, int] = {}
        self._div_langs: list[str | None] = []
        self.inserts: list[tuple[int, str]] = []  # (offset just after "<pre", attribute text)

    def _offset(self) -> int:
        line, col = self.getpos()
        return self._lines[line - 1] + col

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        amap = {k: v or "" for k, v in attrs}
        start = self._offset()
        if tag == "title" and self.title is None:
            self._in_title = True
        if tag == "div":
            self._div_langs.append(lang_from_attrs(amap))
        elif tag == "pre" and lang_from_attrs(amap) is None:
            inherited = next((lang for lang in reversed(self._div_langs) if lang), None)
            if inherited:
                self.inserts.append((start + 4, f' data-lang="{inherited}"'))
        self._depth[tag] = self._depth.get(tag, 0) + 1
        is_main = tag == "main" or amap.get("role", "").lower() == "main"
        main_open = any(kind == "main" for *_, kind in self._open)
        if (is_main and self.main is None and not main_open) or (tag == "article" and not is_main):
            inner = start + len(self.get_starttag_text() or "")
            self._open.append((tag, self._depth[tag], inner, "main" if is_main else "article"))

    def handle_endtag(self, tag: str) -> None:
        end = self._offset()
        depth = self._depth.get(tag, 0)
        if tag == "div" and self._div_langs:
            self._div_langs.pop()
        for i in range(len(self._open) - 1, -1, -1):
            otag, odepth, inner, kind = self._open[i]
            if otag == tag and odepth == depth:
                del self._open[i]
                if kind == "article":
                    self.articles.append((inner, end))
                elif self.main is None:
                    self.main = (inner, end)
                break
        if depth:
            self._depth[tag] = depth - 1
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title = ((self.title or "") + data).strip() or None


def main_region(html: str) -> tuple[str, str | None]:
    """(the HTML to convert, the page title). The main element's inner HTML
    when the page has one (or exactly one article), else the whole page."""
    scan = _Scan(html)
    try:
        scan.feed(html)
        scan.close()
    except Exception:  # a scan failure only costs the main-region preference
        return html, None
    for offset, attr in sorted(scan.inserts, reverse=True):
        html = html[:offset] + attr + html[offset:]
        shift = len(attr)
        if scan.main:
            scan.main = _shift(scan.main, offset, shift)
        scan.articles = [_shift(a, offset, shift) for a in scan.articles]
    region = scan.main or (scan.articles[0] if len(scan.articles) == 1 else None)
    if region is None:
        return html, scan.title
    return html[region[0] : region[1]], scan.title


def _shift(span: tuple[int, int], at: int, by: int) -> tuple[int, int]:
    return (span[0] + by if span[0] > at else span[0], span[1] + by if span[1] > at else span[1])


class _CodeLanguages:
    """html-to-markdown visitor: fence a code block whose language sits on the ``<pre>``."""

    def visit_code_block(self, ctx: object, lang: str | None, code: str) -> dict[str, str]:
        if lang:
            return {"type": "continue"}
        found = lang_from_attrs(ctx.attributes())  # type: ignore[attr-defined]
        if not found:
            return {"type": "continue"}
        return {"type": "custom", "output": fenced(code.rstrip("\n"), found)}


def fenced(code: str, lang: str = "") -> str:
    """``code`` in a backtick fence longer than any backtick run inside it."""
    longest = max((len(m.group()) for m in re.finditer("`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{code}\n{fence}"


def html_to_markdown(html: str) -> tuple[str, str | None]:
    """(Markdown of the page's main content, the page title)."""
    region, title = main_region(html)
    options = ConversionOptions(
        extract_metadata=False,
        exclude_selectors=BOILERPLATE_SELECTORS,
        preprocessing=PreprocessingOptions(enabled=True, preset="standard", remove_navigation=True, remove_forms=True),
    )
    result = convert(region, options, visitor=_CodeLanguages())
    return (result.content or "").strip(), title


def json_to_markdown(text: str) -> str:
    """JSON pretty-printed in a fence (kept as sent when it does not parse)."""
    try:
        pretty = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        pretty = text
    return fenced(pretty, "json")


def looks_like_html(text: str) -> bool:
    head = text.lstrip()[:512].lower()
    return head.startswith(("<!doctype html", "<html")) or ("<head" in head and head[:1] == "<")
