"""Which IP addresses a fetch may reach: public ones, with every IPv4 address
an IPv6 address carries checked as well.

Why the embedded IPv4 matters: several IPv6 forms are only a way to reach an
IPv4 address. ``::ffff:127.0.0.1`` *is* 127.0.0.1 to the kernel; a NAT64
gateway turns ``64:ff9b::7f00:1`` into 127.0.0.1 on its side; a 6to4 or
Teredo relay sends ``2002:7f00:1::1`` or a Teredo address to the IPv4 address
encoded in it. A check that looks only at the IPv6 range lets a model reach
the host's loopback or the office LAN through any of them. So each form is
decoded (:func:`embedded_ipv4`) and every decoded address must be public too.

Why the extra table: the ``is_global`` tables of the running Python may be
older than IANA's special-purpose registry (Python 3.11 calls ``fec0::/10``,
``2002::/16`` and ``3fff::/20`` global, and multicast global). The flags are
combined (``is_private``, ``is_reserved``, ``is_site_local``, ...) and the few
ranges newer registries mark not globally reachable are listed here, so the
verdict does not depend on the Python version.
"""

from __future__ import annotations

import ipaddress

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_V6 = ipaddress.IPv6Network
NAT64_WELL_KNOWN = _V6("64:ff9b::/96")  # RFC 6052: globally reachable; the IPv4 is the last 32 bits
NAT64_LOCAL = _V6("64:ff9b:1::/48")  # RFC 8215: local-use translation prefix (not global)
SIX_TO_FOUR = _V6("2002::/16")  # RFC 3056, deprecated by RFC 7526
TEREDO = _V6("2001::/32")  # RFC 4380
IPV4_COMPATIBLE = _V6("::/96")  # RFC 4291 §2.5.5.1, deprecated
IPV4_TRANSLATED = _V6("::ffff:0:0:0/96")  # RFC 2765 (SIIT)

# not globally reachable per IANA's special-purpose registries, whatever this Python's tables say
_NOT_GLOBAL: dict[int, tuple[IPNetwork, ...]] = {
    4: (ipaddress.IPv4Network("192.0.0.0/24"),),  # IETF protocol assignments
    6: (SIX_TO_FOUR, NAT64_LOCAL, _V6("fec0::/10"), _V6("3fff::/20"), _V6("100::/64"), _V6("2001::/23")),
}


def embedded_ipv4(addr: IPAddress) -> list[tuple[str, ipaddress.IPv4Address]]:
    """The IPv4 addresses ``addr`` carries, each with the name of its form:
    IPv4-mapped, IPv4-translated, IPv4-compatible, NAT64 (well-known and
    local-use prefix, the IPv4 in the last 32 bits), 6to4, and Teredo (its
    server, and its client whose bits are stored inverted — ``ipaddress``
    undoes the XOR). Empty for IPv4 and for IPv6 that carries none."""
    if isinstance(addr, ipaddress.IPv4Address):
        return []
    low32 = ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
    if addr.ipv4_mapped is not None:
        return [("IPv4-mapped", addr.ipv4_mapped)]
    if addr in IPV4_TRANSLATED:
        return [("IPv4-translated", low32)]
    if addr in IPV4_COMPATIBLE:
        return [("IPv4-compatible", low32)]
    if addr in NAT64_WELL_KNOWN:
        return [("NAT64", low32)]
    if addr in NAT64_LOCAL:
        return [("NAT64 local-use", low32)]
    if addr.sixtofour is not None:
        return [("6to4", addr.sixtofour)]
    if addr.teredo is not None:
        server, client = addr.teredo
        return [("Teredo server", server), ("Teredo client", client)]
    return []


def _spelling_of_ipv4(addr: IPAddress) -> bool:
    """Forms that are nothing but another way to name one IPv4 destination
    (the kernel, or a NAT64 gateway, delivers to it): judged by that address."""
    return isinstance(addr, ipaddress.IPv6Address) and (addr.ipv4_mapped is not None or addr in NAT64_WELL_KNOWN)


def range_is_public(addr: IPAddress) -> bool:
    """Whether ``addr``'s own range is globally routable unicast: not private,
    loopback, link-local, site-local, multicast, reserved, unspecified, shared
    (CGNAT), documentation or transition space (embedded IPv4 not looked at)."""
    if any(addr in net for net in _NOT_GLOBAL[addr.version]):
        return False
    if addr.is_private or addr.is_loopback or addr.is_link_local or addr.is_multicast:
        return False
    if addr.is_reserved or addr.is_unspecified:
        return False
    if isinstance(addr, ipaddress.IPv6Address) and addr.is_site_local:
        return False
    return addr.is_global


def is_public(addr: IPAddress) -> bool:
    """Globally routable unicast, and so is every IPv4 address it embeds.
    IPv4-mapped and NAT64 well-known-prefix addresses are judged by their
    IPv4 address alone; the other forms need both sides public (in practice
    never: their ranges are not global)."""
    embedded = embedded_ipv4(addr)
    if not all(range_is_public(v4) for _, v4 in embedded):
        return False
    return True if embedded and _spelling_of_ipv4(addr) else range_is_public(addr)


def admitted(addr: IPAddress, allowed: tuple[IPNetwork, ...]) -> bool:
    """Whether ``addr`` may be reached: it is public or inside an ``allowed``
    network, and so is every IPv4 address it embeds — an allowance for
    127.0.0.1 does not let ``64:ff9b::7f00:1`` through unless that address
    is allowed as well (``"*"`` allows both)."""

    def ok(a: IPAddress) -> bool:
        return any(a.version == net.version and a in net for net in allowed)

    if not all(range_is_public(v4) or ok(v4) for _form, v4 in embedded_ipv4(addr)):
        return False
    return is_public(addr) or ok(addr)
