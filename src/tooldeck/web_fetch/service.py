"""The web service one Runtime shares: policy, fetcher and the page cache.

Why a cache: a model often reads a page, reasons, then asks for it again (a
second page of the output, a follow-up question). A small TTL-LRU (128
entries, 5 minutes by default) keyed by URL answers those without another
download, and is short enough that a page edited upstream is soon seen.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import urldefrag

from cachetools import TTLCache

from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.web_fetch.convert import decode_body, html_to_markdown, json_to_markdown, looks_like_html
from tooldeck.web_fetch.fetch import Fetched, Fetcher
from tooldeck.web_fetch.github import parse_blob, render_blob
from tooldeck.web_fetch.policy import WebPolicy, parse_target


class WebService:
    """``markdown(url)``: a page as Markdown, cached."""

    def __init__(self, policy: WebPolicy, *, timer: Callable[[], float] | None = None) -> None:
        self.policy = policy
        self.fetcher = Fetcher(policy)
        kwargs: dict[str, Any] = {"timer": timer} if timer is not None else {}
        self._cache: TTLCache[str, str] = TTLCache(policy.cache_entries, policy.cache_seconds, **kwargs)
        self._lock = threading.Lock()

    def close(self) -> None:
        self.fetcher.close()

    def markdown(self, url: str, check_cancelled: Callable[[], None] | None = None) -> str:
        url = url.strip()
        parse_target(url)  # a bad URL is refused before anything else
        blob = parse_blob(url, self.policy.github_raw_base)
        # a blob is cached as its raw text, so several #L slices of one file cost one download
        key = "raw " + blob.raw_url if blob is not None else urldefrag(url).url
        with self._lock:
            text = self._cache.get(key)
        if text is None:
            if blob is not None:
                fetched = self.fetcher.fetch(blob.raw_url, check_cancelled)
                text = decode_body(fetched.body, fetched.charset, html=False)
            else:
                text = render_page(key, self.fetcher.fetch(key, check_cancelled))
            with self._lock:
                self._cache[key] = text
        return render_blob(blob, text) if blob is not None else text


def render_page(url: str, fetched: Fetched) -> str:
    """A fetched body as Markdown under a ``Source:`` header."""
    kind = fetched.kind
    if kind == "unknown":  # no Content-Type: decide from the bytes
        if b"\x00" in fetched.body[:8192]:
            raise ToolError(
                ErrorCode.UNSUPPORTED,
                f"{fetched.url} sent no content type and looks binary; only web pages and text are converted",
            )
        kind = "html" if looks_like_html(fetched.body[:2048].decode("utf-8", "replace")) else "text"
    text = decode_body(fetched.body, fetched.charset, html=kind == "html")
    header = f"Source: {fetched.url}" + (f" (redirected from {url})" if fetched.url != url else "")
    if kind == "html":
        body, title = html_to_markdown(text)
        if title:
            header += f"\nTitle: {title}"
        if not body:
            body = "(the page has no readable text content; it may need JavaScript to render)"
    elif kind == "json":
        body = json_to_markdown(text)
    else:
        body = text.strip()
    return f"{header}\n\n{body}"
