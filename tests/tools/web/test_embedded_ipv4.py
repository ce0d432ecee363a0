"""IPv6 spellings of a private IPv4 address (NAT64, 6to4, Teredo, IPv4-compatible,
-mapped, -translated) and site-local IPv6 are refused, directly and after a
redirect, even when the person allowed 127.0.0.1; a real listener on
127.0.0.1 proves from its own side that no connection was made."""

from __future__ import annotations

import ipaddress
import json
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from tooldeck.core.errors import ToolError
from tooldeck.core.toolbox import Toolbox
from tooldeck.web_fetch.addresses import embedded_ipv4
from tooldeck.web_fetch.policy import WebPolicy, check_address, is_public, parse_target, resolve_checked

pytestmark = pytest.mark.timeout(60)

# (address, the IPv4 it embeds or None): each would lead to 127.0.0.1 (or is site-local)
FORMS = [
    ("64:ff9b::7f00:1", "127.0.0.1"),  # NAT64 well-known prefix
    ("64:ff9b:1::7f00:1", "127.0.0.1"),  # NAT64 local-use prefix
    ("2002:7f00:1::1", "127.0.0.1"),  # 6to4
    ("::127.0.0.1", "127.0.0.1"),  # IPv4-compatible
    ("::ffff:127.0.0.1", "127.0.0.1"),  # IPv4-mapped
    ("::ffff:0:7f00:1", "127.0.0.1"),  # IPv4-translated
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "127.0.0.1"),  # Teredo: public server, client 127.0.0.1 (XOR'ed)
    ("2001:0:7f00:1:8000:63bf:f7f7:f7f7", "127.0.0.1"),  # Teredo: server 127.0.0.1, public client 8.8.8.8
    ("fec0::1", None),  # site-local
]


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A TCP socket listening on 127.0.0.1 that never accepts: a connection
    anyone makes to it waits in its backlog, where :func:`reached` sees it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    yield sock
    sock.close()


def reached(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


def fetch(box: Toolbox, url: str) -> Any:
    return box.call_sync("webpage_to_markdown", json.dumps({"url": url}))


@pytest.mark.parametrize(("addr", "inner"), FORMS)
def test_each_form_is_refused_and_never_connects(
    web_box: Toolbox, web_server: Any, listener: socket.socket, addr: str, inner: str | None
) -> None:
    port = listener.getsockname()[1]
    url = f"http://[{addr}]:{port}/secret"
    for how in (url, web_server.url("/to?u=" + quote(url, safe=""))):  # directly, and as a redirect's target
        res = fetch(web_box, how)  # web_box allows 127.0.0.1 (the test server) and nothing else
        assert res.is_error and res.error is not None and res.error.code == "denied", res.text
        assert res.error.details["reason"] == "private_address"
        if inner is not None:
            assert inner in res.error.details["embedded"] and inner in res.text, res.text
    assert web_server.hits["/to"] >= 1  # the redirect really was served, and its target refused
    assert not reached(listener)


def test_the_listener_detects_a_connection(listener: socket.socket) -> None:
    """The check above can fail: a real connection is seen."""
    socket.create_connection(listener.getsockname(), timeout=5).close()
    assert reached(listener)


@pytest.mark.parametrize(("addr", "inner"), FORMS)
def test_forms_decode_and_are_not_public(addr: str, inner: str | None) -> None:
    ip = ipaddress.ip_address(addr)
    assert not is_public(ip)
    if inner is not None:
        assert ipaddress.ip_address(inner) in [v4 for _form, v4 in embedded_ipv4(ip)]
    with pytest.raises(ToolError) as exc:
        check_address(ip, addr, WebPolicy.from_table({"allow_private_hosts": ["127.0.0.1"]}))
    assert exc.value.code == "denied"


def test_teredo_client_is_unobfuscated() -> None:
    forms = dict(embedded_ipv4(ipaddress.ip_address("2001:0:4136:e378:8000:63bf:3fff:fdd2")))  # RFC 4380's example
    assert forms == {"Teredo server": ipaddress.ip_address("65.54.227.120"),
                     "Teredo client": ipaddress.ip_address("192.0.2.45")}  # fmt: skip


@pytest.mark.parametrize("addr", ["2606:4700::1111", "2a00:1450:4001:81a::200e", "64:ff9b::808:808", "::ffff:1.1.1.1"])
def test_public_ipv6_is_still_allowed(addr: str) -> None:
    """Checked by the policy only: a literal address is not resolved, nothing connects."""
    assert is_public(ipaddress.ip_address(addr))
    assert resolve_checked(parse_target(f"https://[{addr}]/"), WebPolicy()) == [ipaddress.ip_address(addr)]


@pytest.mark.parametrize("addr", ["2002:808:808::1", "2001:0:4136:e378:8000:63bf:f7f7:f7f7", "::8.8.8.8"])
def test_transition_ranges_are_refused_even_around_a_public_ipv4(addr: str) -> None:
    """6to4, Teredo and IPv4-compatible are not globally reachable ranges (IANA)."""
    assert not is_public(ipaddress.ip_address(addr))


def test_allow_private_hosts_still_works() -> None:
    everything = WebPolicy.from_table({"allow_private_hosts": "*"})
    for addr, _inner in FORMS:
        check_address(ipaddress.ip_address(addr), addr, everything)
    nat64 = WebPolicy.from_table({"allow_private_hosts": ["64:ff9b::/96", "10.0.0.0/8"]})
    check_address(ipaddress.ip_address("64:ff9b::a00:1"), "x", nat64)  # both the prefix and 10.0.0.1 allowed
    with pytest.raises(ToolError) as exc:  # the prefix alone does not open 127.0.0.1
        check_address(ipaddress.ip_address("64:ff9b::7f00:1"), "x", nat64)
    assert exc.value.details["embedded"] == ["127.0.0.1"]
