"""What a mount declaration asks for, before anything is connected.

``<tool mcp_server="stdio:CMD ARGS" .../>`` or ``mcp_server="https://..."``
(seed 000): this module turns the declaration's text into a :class:`Target`
(a command line or a URL), applies the OAuth client-credential knobs and
decides which remote tools are selected. Pure functions, no I/O: the loader
can reject a bad declaration before any process is spawned.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit


class MountError(ValueError):
    """A mount that cannot be made: a bad declaration, a server that cannot be
    reached, a selected tool the server does not have."""


@dataclass(frozen=True, slots=True)
class Target:
    """Where the remote catalog lives: a command (``stdio``) or a URL (``http``)."""

    kind: str  # "stdio" | "http"
    command: tuple[str, ...] = ()
    url: str = ""

    @property
    def label(self) -> str:
        """How errors name the server (never shows credentials)."""
        if self.kind == "stdio":
            return "stdio:" + shlex.join(self.command)
        parts = urlsplit(self.url)
        return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def parse_target(
    spec: str,
    *,
    client_id_env: str | None = None,
    client_secret_env: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Target:
    """``stdio:CMD ARGS`` (split like a shell would, no shell run) or an
    ``http://``/``https://`` URL (streamable HTTP). The credential knobs name
    environment variables; a variable that is set has its value added to the
    URL as ``client_id`` / ``client_secret`` (seed 000); one that is unset is
    skipped, so a declaration works with and without credentials."""
    text = spec.strip()
    if text.startswith("stdio:"):
        if client_id_env or client_secret_env:
            raise MountError("client_id_env / client_secret_env apply to http(s) servers, not to stdio: commands")
        try:
            argv = shlex.split(text[len("stdio:") :])
        except ValueError as exc:
            raise MountError(f"cannot split the command of {spec!r}: {exc}") from exc
        if not argv:
            raise MountError("`stdio:` needs a command, e.g. stdio:npx -y @modelcontextprotocol/server-filesystem .")
        return Target("stdio", command=tuple(argv))
    parts = urlsplit(text)
    if parts.scheme in ("http", "https") and parts.netloc:
        values = env if env is not None else {}
        query = parse_qsl(parts.query, keep_blank_values=True)
        for key, var in (("client_id", client_id_env), ("client_secret", client_secret_env)):
            if var and values.get(var):
                query = [(k, v) for k, v in query if k != key] + [(key, values[var])]
        return Target("http", url=urlunsplit(parts._replace(query=urlencode(query))))
    raise MountError(f"mcp_server must be `stdio:COMMAND ARGS` or an http(s):// URL (got {spec!r})")


def split_names(value: str | None) -> list[str]:
    """``"a, b,,c"`` → ``["a", "b", "c"]``."""
    if not value:
        return []
    return [n.strip() for n in value.split(",") if n.strip()]


@dataclass(frozen=True, slots=True)
class Selection:
    """Which remote tools a mount exposes: one (``name``, which wins over the
    rest), a subset (``include``), or all of them."""

    name: str | None = None
    include: tuple[str, ...] = ()

    @classmethod
    def of(cls, name: str | None = None, include: str | Sequence[str] | None = None) -> Selection:
        names = split_names(include) if isinstance(include, str) else [n for n in include or () if n]
        return cls(name or None, () if name else tuple(names))

    @property
    def wanted(self) -> tuple[str, ...]:
        """The names that must exist remotely (empty: take everything)."""
        return (self.name,) if self.name else self.include

    def pick(self, available: Sequence[str]) -> tuple[list[str], list[str]]:
        """(selected names in catalog order, missing wanted names)."""
        if not self.wanted:
            return list(available), []
        have = set(available)
        missing = [n for n in self.wanted if n not in have]
        chosen = [n for n in available if n in set(self.wanted)]
        return chosen, missing
