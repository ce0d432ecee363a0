"""``<tool mcp_server=... />``: the entry point the ChatMD loader calls.

Reads the declaration's attributes (``mcp_server``, ``name``, ``include`` /
``includes``, ``strict``, ``client_id_env``, ``client_secret_env``), mounts
the catalog and returns its tools. Every failure is a :class:`ChatmdError`
naming the declaration's file, line and column, raised at load time, before
any model call.

Mounts are kept in a :class:`MountRegistry` keyed by the declaration itself
(its position, its attributes and the credential values it resolves to), so
running the same file again in one process reuses the live session and its
five-minute catalog cache, while two declarations of the same server — or two
identities — never share an entry (seed 000).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Mapping
from typing import Any

from tooldeck.core.tool import Tool
from tooldeck.markup.element import ChatmdError, Element
from tooldeck.mounts import loop as client_loop
from tooldeck.mounts.client import Mount, amount
from tooldeck.mounts.spec import MountError

# ``namespace`` is set by ChatMD imports; the loader applies it to the names
ATTRS = {"mcp_server", "name", "include", "includes", "strict", "client_id_env", "client_secret_env", "namespace"}
MountKey = tuple[str, ...]


class MountRegistry:
    """Live mounts by declaration; :meth:`close` stops them all."""

    def __init__(self) -> None:
        self._mounts: dict[MountKey, Mount] = {}
        self._lock = threading.Lock()

    def get(self, key: MountKey) -> Mount | None:
        with self._lock:
            m = self._mounts.get(key)
        return m if m is not None and not m.server.closed else None

    def put(self, key: MountKey, m: Mount) -> None:
        with self._lock:
            self._mounts[key] = m

    def __len__(self) -> int:
        return len(self._mounts)

    async def aclose(self) -> None:
        with self._lock:
            mounts, self._mounts = list(self._mounts.values()), {}
        for m in mounts:
            await m.aclose()

    def close(self) -> None:
        client_loop.run_blocking(self.aclose())


DEFAULT_REGISTRY = MountRegistry()


def _secret_id(value: str | None) -> str:
    return hashlib.sha256(value.encode()).hexdigest()[:16] if value else "-"


def declaration_key(el: Element, env: Mapping[str, str]) -> MountKey:
    attrs = tuple(f"{k}={el.attrs[k]}" for k in sorted(el.attrs))
    ident = tuple(_secret_id(env.get(el.get(k) or "")) for k in ("client_id_env", "client_secret_env"))
    return (str(el.pos), *attrs, *ident)


def registry_for(rt: Any | None) -> MountRegistry:
    """The runtime's own registry (mounts never outlive or cross runtimes), or
    the process-wide one when no runtime is given."""
    if rt is None or not hasattr(rt, "service"):
        return DEFAULT_REGISTRY
    return rt.service("mcp.mounts", lambda _rt: MountRegistry())  # type: ignore[no-any-return]


async def amount_from_element(
    el: Element,
    *,
    env: Mapping[str, str] | None = None,
    registry: MountRegistry | None = None,
    rt: Any | None = None,
    **context: Any,
) -> list[Tool]:
    """The tools of the ``<tool mcp_server=...>`` declaration ``el``. ``rt``
    selects the runtime's registry; other loader context (``vars``...) is
    accepted and not needed: the command line is used as written."""
    environ = env if env is not None else os.environ
    reg = registry if registry is not None else registry_for(rt)
    spec = el.get("mcp_server")
    if not spec:
        raise ChatmdError(el.pos, "<tool mcp_server=...> needs a server: `stdio:COMMAND ARGS` or an http(s) URL")
    unknown = sorted(set(el.attrs) - ATTRS)
    if unknown:
        raise ChatmdError(
            el.pos, f"<tool mcp_server> does not take {', '.join(unknown)}; it takes {', '.join(sorted(ATTRS))}"
        )
    include = el.get("include") or el.get("includes")
    key = declaration_key(el, environ)
    try:
        existing = reg.get(key)
        if existing is not None:
            return list(await existing.refresh())
        mounted = await amount(
            spec,
            name=el.get("name"),
            include=include,
            strict=el.has("strict") and (el.get("strict") or "true").lower() not in ("false", "0", "no"),
            client_id_env=el.get("client_id_env"),
            client_secret_env=el.get("client_secret_env"),
            env=environ,
        )
    except MountError as exc:
        raise ChatmdError(el.pos, str(exc)) from exc
    reg.put(key, mounted)
    return list(mounted.tools)


def mount_from_element(
    el: Element,
    *,
    env: Mapping[str, str] | None = None,
    registry: MountRegistry | None = None,
    rt: Any | None = None,
    **context: Any,
) -> list[Tool]:
    """Blocking :func:`amount_from_element` for a sync loader (safe to call
    from inside a running event loop: the mount lives on its own loop)."""
    return client_loop.run_blocking(amount_from_element(el, env=env, registry=registry, rt=rt, **context))
