"""What of a remote server's error reply may reach a message (SPEC §3, authority).

Why this exists: an error message goes to the model (a ToolError, an agent's
status text, a transcript). If it carried the body of whatever answered, any
route that lets a request reach an address on the person's own network (a
model endpoint, an embeddings endpoint, an MCP HTTP mount, a web fetch the
person allowed) would read that network back to the model through the error
path. So the rule every caller follows:

* a reply from a private, loopback, link-local or otherwise non-public
  address (or a name that resolves to one, or that does not resolve) gives
  the status only: never its body, never a header;
* a reply from a public address may add a *short, sanitised reason*: the
  ``message`` field of a JSON error object (never a raw body), one line, at
  most :data:`MAX_REASON` characters, with anything shaped like a key removed;
* a URL is shown without its user info, query or fragment;
* the API key never appears: :func:`redact` removes the exact secrets the
  caller holds and key-shaped tokens (``sk-...``, ``Bearer ...``, the masked
  ``sk-ab****yz`` form some providers echo back).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from tooldeck.web_fetch.policy import is_public

MAX_REASON = 200
WITHHELD = "the reply body of a private address is not shown"

_KEYISH = re.compile(
    r"(?i)\bbearer\s+\S+"  # an Authorization value
    r"|\bsk-[A-Za-z0-9_\-*.]{6,}"  # OpenAI-style keys, whole or masked
    r"|\S*\*{3,}\S*"  # a masked key of any provider (abcd****wxyz)
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")


def host_of(url: str | None) -> str | None:
    try:
        return urlsplit(url or "").hostname
    except ValueError:
        return None


def is_private_host(host: str | None) -> bool:
    """True unless every address ``host`` stands for is public. A name that
    does not resolve counts as private: when in doubt, show nothing."""
    if not host:
        return True
    name = host.strip("[]").split("%", 1)[0]
    try:
        return not is_public(ipaddress.ip_address(name))
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return True
    addrs = {str(info[4][0]).split("%", 1)[0] for info in infos}
    return not addrs or any(not is_public(ipaddress.ip_address(a)) for a in addrs)


def is_private_url(url: str | None) -> bool:
    return is_private_host(host_of(url))


def shown_url(url: str | None) -> str:
    """``url`` as it may appear in a message: scheme, host, port and path only."""
    try:
        parts = urlsplit(url or "")
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(an unreadable URL)"
    if not parts.scheme or not host:
        return "(an unreadable URL)"
    shown_host = f"[{host}]" if ":" in host else host
    return _CONTROL.sub("", f"{parts.scheme}://{shown_host}{port}{parts.path}")


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` without the given secrets and without anything shaped like a key."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    return _KEYISH.sub("[redacted]", text)


def json_message(body: Any) -> str | None:
    """The ``message`` of a JSON error object (``{"error": {"message": ...}}``
    or ``{"message": ...}``), or None: a raw body is never a reason."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(inner, str) and inner is not body:
            return inner
    return None


def reason(url: str | None, message: str | None, *, secrets: Iterable[str | None] = ()) -> str:
    """A short, safe reason for an error reply from ``url``: empty when there
    is none to give, :data:`WITHHELD` when ``url`` is not a public address."""
    if not message:
        return ""
    if is_private_url(url):
        return WITHHELD
    one_line = redact(" ".join(_CONTROL.sub(" ", message).split()), secrets)  # before the cut: a key cut
    return one_line[:MAX_REASON] + ("…" if len(one_line) > MAX_REASON else "")  # in two would slip through
