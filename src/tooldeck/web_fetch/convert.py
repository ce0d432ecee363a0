"""Turning a fetched body into Markdown: the conversion half of webpage_to_markdown.

HTML goes through html-to-markdown (tables, fenced code with its language,
links, headings). Around it, two things the converter does not do itself:

* **Main content first.** A page's ``<main>`` (or ``role="main"``, else its
  only ``<article>``) is what a reader came for; menus, sidebars and footers
  around it are noise in a model's context. One regular-expression pass
  over the tags finds that element's span; the converter sees only it. Boilerplate inside is
  still dropped by CSS selector (nav, asides, footers, cookie banners...).
* **Code languages the converter misses.** It reads ``class="language-x"``
  on ``<pre>`` or ``<code>``; sites also mark the language with ``lang``,
  ``data-lang``, pandoc's ``sourceCode x``, or on a wrapping ``<div
  class="highlight-source-x">`` (GitHub, Sphinx). The scan writes such a
  language onto the ``<pre>`` as ``class="language-x"``.
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass, field
from html import unescape

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


_MASK = re.compile(r"<!--.*?-->|<(script|style|textarea|template)\b.*?</\1\s*>", re.S | re.I)
_TAG = re.compile(r"<(/?)(main|article|div|pre)\b([^>]*)>", re.I)
_ATTR = re.compile(r"""([^\s=/>"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+)))?""")
_TITLE = re.compile(r"<title\b[^>]*>(.*?)</title\s*>", re.S | re.I)


def _attrs(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in _ATTR.finditer(text):
        out.setdefault(m.group(1).lower(), next((g for g in m.groups()[1:] if g is not None), ""))
    return out


@dataclass(slots=True)
class _Scan:
    """What one pass over the tags finds: the main region's inner span, the
    articles, and where a ``<pre>`` should get a ``class="language-x"`` the
    converter understands (copied from its own ``lang``/``data-lang``/class
    or from a wrapping ``<div>``).

    A regular-expression pass over the few tags that matter, with comments,
    scripts and styles masked first (offsets kept): several times faster than
    a full HTML parse, which on a multi-megabyte page costs more than the
    conversion itself."""

    main: tuple[int, int] | None = None
    articles: list[tuple[int, int]] = field(default_factory=list)
    inserts: list[tuple[int, str]] = field(default_factory=list)  # (offset just after "<pre", attribute text)

    @classmethod
    def of(cls, html: str) -> _Scan:
        scan = cls()
        masked = _MASK.sub(lambda m: " " * len(m.group()), html)
        depth: dict[str, int] = {}
        div_langs: list[str | None] = []
        open_regions: list[tuple[str, int, int, str]] = []  # (tag, depth of that tag, inner start, kind)
        for m in _TAG.finditer(masked):
            closing, tag, raw = m.group(1) == "/", m.group(2).lower(), m.group(3)
            if closing:
                scan._close(tag, depth, m.start(), open_regions)
                if tag == "div" and div_langs:
                    div_langs.pop()
                continue
            attrs = _attrs(raw)
            if raw.rstrip().endswith("/"):
                continue  # <div/>: opens nothing
            if tag == "div":
                div_langs.append(lang_from_attrs(attrs))
            elif tag == "pre" and not _native_lang(attrs):
                lang = lang_from_attrs(attrs) or next((x for x in reversed(div_langs) if x), None)
                if lang:
                    scan.inserts.append((m.start() + 4, f' class="language-{lang}"'))
            depth[tag] = depth.get(tag, 0) + 1
            is_main = tag == "main" or attrs.get("role", "").lower() == "main"
            main_open = any(kind == "main" for *_, kind in open_regions)
            if (is_main and scan.main is None and not main_open) or (tag == "article" and not is_main):
                open_regions.append((tag, depth[tag], m.end(), "main" if is_main else "article"))
        return scan

    def _close(self, tag: str, depth: dict[str, int], at: int, open_regions: list[tuple[str, int, int, str]]) -> None:
        level = depth.get(tag, 0)
        for i in range(len(open_regions) - 1, -1, -1):
            otag, olevel, inner, kind = open_regions[i]
            if otag == tag and olevel == level:
                del open_regions[i]
                if kind == "article":
                    self.articles.append((inner, at))
                elif self.main is None:
                    self.main = (inner, at)
                break
        if level:
            depth[tag] = level - 1


def _native_lang(attrs: dict[str, str]) -> bool:
    """Whether html-to-markdown already reads a language off this ``<pre>``."""
    return any(t.startswith(("language-", "lang-")) for t in (attrs.get("class") or "").split())


def page_title(html: str) -> str | None:
    m = _TITLE.search(html[:200_000])
    if not m:
        return None
    return " ".join(unescape(re.sub(r"<[^>]+>", "", m.group(1))).split()) or None


def main_region(html: str) -> tuple[str, str | None]:
    """(the HTML to convert, the page title). The main element's inner HTML
    when the page has one (or exactly one article), else the whole page;
    ``<pre>`` tags carry the language hints found for them."""
    title = page_title(html)
    scan = _Scan.of(html)
    region = scan.main or (scan.articles[0] if len(scan.articles) == 1 else None)
    lo, hi = region if region is not None else (0, len(html))
    pieces: list[str] = []
    at = lo
    for offset, attr in sorted(scan.inserts):  # one join, not a copy of the page per insert
        if lo < offset <= hi:
            pieces += [html[at:offset], attr]
            at = offset
    pieces.append(html[at:hi])
    return "".join(pieces), title


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
    result = convert(region, options)
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
