"""Fetching one URL under a :class:`WebPolicy`: the I/O half of webpage_to_markdown.

Why redirects are followed by hand: each hop is a new URL a server chose, so
it gets the same checks as the first (scheme, every resolved address). Why
the connection goes to an IP address with the host name kept in the ``Host``
header and TLS SNI: the address connected to is the address checked, so a DNS
answer that changes in between cannot redirect the fetch (DNS rebinding);
certificates are still verified against the host name. Keep-alive is off so
a connection made for one host name is never reused for another name that
happens to share the address. Proxies from the environment are ignored for
the same reason: through a proxy the check would mean nothing.

The body is streamed and counted: a ``Content-Length`` over the cap is refused
before reading, and a body without one is cut off as soon as it passes the cap,
so an endless or huge response costs at most the cap.
"""

from __future__ import annotations

import ssl
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Literal
from urllib.parse import urljoin

import httpx

from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.web_fetch.policy import IPAddress, Target, WebPolicy, parse_target, resolve_checked

Kind = Literal["html", "markdown", "text", "json", "unknown"]

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_KINDS: dict[str, Kind] = {
    "text/html": "html",
    "application/xhtml+xml": "html",
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "text/plain": "text",
    "application/json": "json",
    "text/json": "json",
}
_ACCEPT = "text/html,application/xhtml+xml,text/markdown,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.1"


@dataclass(frozen=True, slots=True)
class Fetched:
    """A fetched body: the final URL (after redirects), its kind and bytes."""

    url: str
    status: int
    media_type: str
    kind: Kind
    charset: str | None
    body: bytes


def classify(content_type: str | None) -> tuple[str, Kind | None, str | None]:
    """(media type, kind or None if unsupported, charset) of a Content-Type."""
    if not content_type or not content_type.strip():
        return "", "unknown", None
    media, _, params = content_type.partition(";")
    media = media.strip().lower()
    charset = None
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("\"'")
    kind = _KINDS.get(media)
    if kind is None and media.startswith("application/") and media.endswith("+json"):
        kind = "json"
    return media, kind, charset


class Fetcher:
    """A policy-checked HTTP GET. Thread-safe; one per Runtime."""

    def __init__(self, policy: WebPolicy) -> None:
        self.policy = policy
        verify: ssl.SSLContext | bool = True
        if policy.ca_bundle:
            try:
                verify = ssl.create_default_context(cafile=policy.ca_bundle)
            except (OSError, ssl.SSLError) as exc:
                raise ToolError(
                    ErrorCode.UNSUPPORTED, f"[web] ca_bundle {policy.ca_bundle!r} cannot be loaded ({exc})"
                ) from exc
            verify.load_default_certs()  # extra CAs, not instead of the system's
        self._client = httpx.Client(
            verify=verify,
            trust_env=False,
            follow_redirects=False,
            limits=httpx.Limits(max_keepalive_connections=0),
            timeout=httpx.Timeout(policy.read_timeout, connect=policy.connect_timeout),
        )

    def close(self) -> None:
        self._client.close()

    def fetch(self, url: str, check_cancelled: Callable[[], None] | None = None) -> Fetched:
        """GET ``url`` following at most ``max_redirects`` checked redirects."""
        deadline = time.monotonic() + self.policy.total_timeout
        visited: list[str] = []
        current = url
        for _hop in range(self.policy.max_redirects + 1):
            target = parse_target(current)
            location, fetched = self._connect_any(
                target, resolve_checked(target, self.policy), deadline, check_cancelled
            )
            if fetched is not None:
                return fetched
            visited.append(current)
            nxt = urljoin(current, location)
            if nxt in visited:
                raise ToolError(
                    ErrorCode.TOO_MANY_REDIRECTS,
                    f"{url} redirects in a loop ({' -> '.join([*visited, nxt])[:600]}); the page cannot be fetched",
                    {"chain": [*visited, nxt]},
                )
            current = nxt
        raise ToolError(
            ErrorCode.TOO_MANY_REDIRECTS,
            f"{url} redirected more than {self.policy.max_redirects} times (last: {current[:300]}); "
            "fetch the final URL directly if you know it",
            {"chain": [*visited, current]},
        )

    def _connect_any(
        self, target: Target, addrs: list[IPAddress], deadline: float, check_cancelled: Callable[[], None] | None
    ) -> tuple[str, Fetched | None]:
        """Try the checked addresses in turn until one accepts the connection
        (a host with an IPv6 address on a machine without IPv6 still works).
        Only a failure to connect moves on: nothing was sent yet."""
        for i, addr in enumerate(addrs):
            try:
                return self._request(target, addr, deadline, check_cancelled)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                if i == len(addrs) - 1 or time.monotonic() > deadline:
                    if isinstance(exc, httpx.ConnectTimeout):
                        raise _timeout(target, self.policy) from exc
                    raise _network_error(target, exc) from exc
        raise AssertionError("resolve_checked returns at least one address")

    def _request(
        self, target: Target, addr: IPAddress, deadline: float, check_cancelled: Callable[[], None] | None
    ) -> tuple[str, Fetched | None]:
        """One hop: (redirect location, None) or ("", the fetched page)."""
        host = f"[{addr}]" if addr.version == 6 else str(addr)
        headers = {
            "Host": target.host_header,
            "User-Agent": self.policy.user_agent,
            "Accept": _ACCEPT,
            "Accept-Encoding": "gzip",
        }
        extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
        remaining = max(0.05, deadline - time.monotonic())
        timeout = httpx.Timeout(
            min(self.policy.read_timeout, remaining), connect=min(self.policy.connect_timeout, remaining)
        )
        request_url = f"{target.scheme}://{host}:{target.port}{target.path}"
        try:
            with self._client.stream(
                "GET", request_url, headers=headers, extensions=extensions, timeout=timeout
            ) as resp:
                if resp.status_code in REDIRECT_STATUSES:
                    location = resp.headers.get("location")
                    if not location:
                        raise _http_error(target, resp.status_code, "a redirect without a Location header")
                    return location, None
                if resp.status_code >= 400 or resp.status_code < 200:
                    raise _http_error(target, resp.status_code, _phrase(resp.status_code))
                media, kind, charset = classify(resp.headers.get("content-type"))
                if kind is None:
                    raise ToolError(
                        ErrorCode.UNSUPPORTED,
                        f"{target.url} is {media}, not a web page: only HTML, Markdown, plain text and JSON "
                        "are converted (the body was not downloaded)",
                        {"content_type": media},
                    )
                body = self._read_body(resp, target, deadline, check_cancelled)
                return "", Fetched(target.url, resp.status_code, media, kind, charset, body)
        except (httpx.ConnectError, httpx.ConnectTimeout):
            raise  # _connect_any tries the next address
        except httpx.TimeoutException as exc:
            raise _timeout(target, self.policy) from exc
        except httpx.TransportError as exc:
            raise _network_error(target, exc) from exc

    def _read_body(
        self, resp: httpx.Response, target: Target, deadline: float, check_cancelled: Callable[[], None] | None
    ) -> bytes:
        """The body, decompressed here with a bound on the output: httpx would
        inflate a whole chunk (or a chain of encodings) before the cap could
        be checked, and a few kilobytes of gzip can expand to gigabytes."""
        cap = self.policy.max_bytes
        declared = resp.headers.get("content-length")
        encoding = resp.headers.get("content-encoding", "").strip().lower()
        if declared and declared.strip().isdigit() and int(declared) > cap:  # compressed or not, too big
            raise _too_large(target, cap, f"it declares {int(declared)} bytes")
        if encoding in ("", "identity"):
            inflater = None
        elif encoding in ("gzip", "x-gzip", "deflate"):
            inflater = zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib header, detected
        else:
            raise ToolError(
                ErrorCode.UNSUPPORTED,
                f"{target.url} was sent with content encoding {encoding!r}; only gzip and deflate are decoded",
            )
        chunks: list[bytes] = []
        size = 0
        try:
            for raw in resp.iter_raw():
                pending = raw
                while pending:
                    if inflater is None:
                        data, pending = pending, b""
                    else:
                        data = inflater.decompress(pending, cap - size + 1)
                        pending = inflater.unconsumed_tail
                    size += len(data)
                    if size > cap:
                        raise _too_large(target, cap, "the body kept going")
                    chunks.append(data)
                if time.monotonic() > deadline:
                    raise _timeout(target, self.policy)
                if check_cancelled is not None:
                    check_cancelled()
        except zlib.error as exc:
            raise ToolError(ErrorCode.NETWORK_ERROR, f"{target.url}: the compressed body is corrupt ({exc})") from exc
        return b"".join(chunks)


def _http_error(target: Target, status: int, reason: str) -> ToolError:
    hint = "retry later" if status >= 500 else "check the URL (a typo, a moved page, or a page that needs a login)"
    return ToolError(
        ErrorCode.HTTP_ERROR,
        f"{target.url} answered HTTP {status} {reason}".rstrip() + f"; {hint}",
        {"status": status},
    )


def _phrase(status: int) -> str:
    """The standard reason phrase: the server's own status line is text it
    chose, and a message must not carry what an address answered (SPEC §3)."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def _network_error(target: Target, exc: Exception) -> ToolError:
    return ToolError(
        ErrorCode.NETWORK_ERROR,
        f"cannot fetch {target.url}: {type(exc).__name__} ({exc}); check the URL or retry later",
    )


def _too_large(target: Target, cap: int, why: str) -> ToolError:
    return ToolError(
        ErrorCode.TOO_LARGE,
        f"{target.url} is over the {cap}-byte limit ({why}); it was not read. "
        "Fetch a more specific page (a section, a raw file) instead",
        {"limit": cap},
    )


def _timeout(target: Target, policy: WebPolicy) -> ToolError:
    return ToolError(
        ErrorCode.TIMEOUT,
        f"{target.url} did not answer in time (connect {policy.connect_timeout:g} s, read "
        f"{policy.read_timeout:g} s, total {policy.total_timeout:g} s); retry later or try another page",
    )
