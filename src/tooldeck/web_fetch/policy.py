"""What a fetch may reach: schemes, addresses, sizes and time limits.

Why this is its own module: ``webpage_to_markdown`` takes a URL from a model,
so the host running tooldeck must not become a way into its own network
(cloud metadata at 169.254.169.254, a database on 127.0.0.1, the office LAN).
Every host is resolved here and *every* address it resolves to is checked
(with every IPv4 address an IPv6 address embeds: :mod:`.addresses`);
the fetcher then connects to the address that was checked (never resolving
again), so a DNS answer that changes between the check and the connection
(DNS rebinding) cannot slip through. Redirects are checked hop by hop.

The limits come from the ``[web]`` table of the *user's* config file only
(``load_config(None)``): a project's ``.tooldeck.toml`` arrives with a
checkout and must not open the private network to a model. A host process
embedding tooldeck may also pass ``Runtime(settings={"web": {...}})``.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from tooldeck.core.errors import ErrorCode, ToolError, invalid_arguments
from tooldeck.web_fetch.addresses import IPAddress, IPNetwork, admitted, embedded_ipv4, is_public

__all__ = [
    "IPAddress",
    "IPNetwork",
    "Target",
    "WebPolicy",
    "check_address",
    "is_public",
    "parse_target",
    "resolve_checked",
]


DEFAULT_GITHUB_RAW = "https://raw.githubusercontent.com"


@dataclass(frozen=True, slots=True)
class WebPolicy:
    """Limits of one fetcher. Build it with :meth:`from_table`."""

    allow_private: tuple[IPNetwork, ...] = ()  # non-public networks a fetch may still reach
    max_bytes: int = 5 * 1024 * 1024
    max_redirects: int = 5
    connect_timeout: float = 10.0
    read_timeout: float = 20.0
    total_timeout: float = 45.0
    github_raw_base: str = DEFAULT_GITHUB_RAW
    user_agent: str = "tooldeck-webpage-to-markdown/0.1"
    cache_entries: int = 128
    cache_seconds: float = 300.0
    ca_bundle: str | None = None  # PEM file of extra trusted CAs (a company proxy's, a test's)
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_table(cls, table: dict[str, Any]) -> WebPolicy:
        """A policy from a ``[web]`` table; unknown keys are kept in ``extra``.

        ``allow_private_hosts`` lists IP addresses or networks (``"127.0.0.1"``,
        ``"10.0.0.0/8"``, ``"::1"``); ``"*"`` allows every non-public address."""
        raw = table.get("allow_private_hosts") or []
        if isinstance(raw, str):
            raw = [raw]
        nets: list[IPNetwork] = []
        for item in raw:
            text = str(item).strip()
            if text == "*":
                nets += [ipaddress.ip_network("0.0.0.0/0"), ipaddress.ip_network("::/0")]
                continue
            try:
                nets.append(ipaddress.ip_network(text, strict=False))
            except ValueError as exc:
                raise ValueError(f"[web] allow_private_hosts: {text!r} is not an IP address or network") from exc
        known = {
            "max_bytes": int,
            "max_redirects": int,
            "connect_timeout": float,
            "read_timeout": float,
            "total_timeout": float,
            "github_raw_base": str,
            "user_agent": str,
            "cache_entries": int,
            "cache_seconds": float,
            "ca_bundle": str,
        }
        values: dict[str, Any] = {}
        for key, kind in known.items():
            if key in table and table[key] is not None:
                values[key] = kind(table[key])
        if "github_raw_base" in values:
            values["github_raw_base"] = values["github_raw_base"].rstrip("/")
        extra = {k: v for k, v in table.items() if k not in known and k != "allow_private_hosts"}
        return cls(allow_private=tuple(nets), extra=extra, **values)


@dataclass(frozen=True, slots=True)
class Target:
    """A checked URL: scheme, host (IDNA-encoded), port and the request path."""

    url: str
    scheme: str
    host: str
    port: int
    path: str  # path + query, never empty

    @property
    def host_header(self) -> str:
        default = 443 if self.scheme == "https" else 80
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return shown if self.port == default else f"{shown}:{self.port}"


def parse_target(url: str) -> Target:
    """``url`` split and checked: http(s) only, a host, no credentials."""
    text = url.strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise invalid_arguments(f"field `url`: {text[:200]!r} is not a valid URL ({exc})", field="url") from exc
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        shown = scheme or "no scheme"
        raise invalid_arguments(
            f"field `url`: only http:// and https:// URLs can be fetched ({shown} given); "
            "give a full URL such as https://example.org/page",
            field="url",
        )
    if not parts.hostname:
        raise invalid_arguments(f"field `url`: {text[:200]!r} has no host", field="url")
    if parts.username is not None or parts.password is not None:
        raise invalid_arguments("field `url`: URLs with user:password@ credentials are not fetched", field="url")
    try:
        host = parts.hostname.encode("idna").decode("ascii") if not parts.hostname.isascii() else parts.hostname
    except UnicodeError as exc:
        raise invalid_arguments(f"field `url`: host {parts.hostname!r} is not a valid name", field="url") from exc
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return Target(text, scheme, host.lower(), port or (443 if scheme == "https" else 80), path)


def check_address(addr: IPAddress, host: str, policy: WebPolicy) -> None:
    """Refuse ``addr`` unless it is public (:func:`is_public`: every IPv4
    address it embeds included) or the policy allows it, embedded IPv4 too."""
    if admitted(addr, policy.allow_private):
        return
    where = f"{host} is" if host.strip("[]") == str(addr) else f"{host} resolves to {addr},"
    details: dict[str, Any] = {"reason": "private_address", "address": str(addr)}
    embedded = embedded_ipv4(addr)
    if embedded:
        where += " an IPv6 form of " + " and ".join(f"{v4} ({form})" for form, v4 in embedded) + ","
        details["embedded"] = [str(v4) for _form, v4 in embedded]
    raise ToolError(
        ErrorCode.DENIED,
        f"{where} a private, loopback or otherwise non-public address; "
        "webpage_to_markdown only fetches public web pages. (The person running tooldeck can allow "
        "such addresses with `allow_private_hosts` in the [web] table of their config file.)",
        details,
    )


def resolve_checked(target: Target, policy: WebPolicy) -> list[IPAddress]:
    """Resolve ``target.host`` and check every address; the checked addresses,
    in the resolver's order of preference (the fetcher tries them in turn)."""
    try:
        literal = ipaddress.ip_address(target.host.strip("[]"))
    except ValueError:
        literal = None
    if literal is not None:
        check_address(literal, target.host, policy)
        return [literal]
    try:
        infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ToolError(
            ErrorCode.NETWORK_ERROR,
            f"cannot resolve host {target.host!r} ({exc}); check the URL's spelling",
            {"reason": "dns"},
        ) from exc
    addrs: list[IPAddress] = []
    for info in infos:
        addr = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if addr not in addrs:
            addrs.append(addr)
    if not addrs:
        raise ToolError(ErrorCode.NETWORK_ERROR, f"host {target.host!r} has no address", {"reason": "dns"})
    for addr in addrs:  # all of them: the connection must not depend on which one the OS picks
        check_address(addr, target.host, policy)
    return addrs
