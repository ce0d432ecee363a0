"""The handshake cache: what the real server answered to ``initialize`` and the
first ``tools/list`` on a previous run, so the next run can answer them
before the SDK is imported.

Why: ``import mcp`` alone costs ~0.65 s (pydantic builds the protocol models
of three spec revisions), more than the whole start-up budget a client
gives a stdio server. The answers themselves hardly ever change between two
spawns of the same command line, so they are kept here, produced by the SDK
itself (never written by hand: one source of truth), and keyed by everything
that can change them:

* tooldeck's version and the identity (path, size, mtime_ns) of the modules
  that shape the answers (``tooldeck/mcp/*.py``, the catalog, the profiles)
  and of the tool declarations the front serves (``tools_manifest.json``);
* the SDK's and pydantic's installed versions (their ``.dist-info`` names),
  the Python executable and version;
* the ``serve`` arguments, the working directory, every ``TOOLDECK_*``
  variable plus the few others the launch reads (``MCP_PROMPTS_DIR``,
  ``HOME``, ``XDG_CONFIG_HOME``, ``XDG_STATE_HOME``);
* the roots (resolved path, whether each is a directory), the identity of
  the user's config file, the content digest of each root's
  ``.tooldeck.toml`` and of the person's approvals (``approvals.json`` in
  the state directory: ``tooldeck trust allow|revoke`` changes which runtimes
  and tools a project file grants), and the listing of the prompts directory.

What the key cannot see (the state store's saved workspace folders, a tool
module edited in place) is corrected after the fact: the ``tools/list``
answer is compared with the real one once the catalog is up and
``notifications/tools/list_changed`` is sent when they differ (see
:mod:`tooldeck.mcp.handshake_front`).

This module is imported before the SDK, on the start-up path: it uses the
standard library only, and nothing heavy of it.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import threading
from collections.abc import Callable
from typing import Any

from tooldeck.statedir import resolve_state_dir

FORMAT = 1
DISABLE_ENV = "TOOLDECK_HANDSHAKE_CACHE"  # "0": never answer from the cache
_ENV_NAMES = ("MCP_PROMPTS_DIR", "HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME")
_DIST_PREFIXES = ("mcp-", "mcp_types-", "pydantic-", "pydantic_core-")
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../tooldeck
KEEP_FILES = 32  # cache files kept per state directory (one per command line / cwd / env seen)
STALE_TMP_S = 300  # a temp file this old was left by a writer that died


def enabled() -> bool:
    return os.environ.get(DISABLE_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def state_dir(explicit: str | None) -> str:
    """The state directory exactly as the store resolves it (one stdlib function for both)."""
    return resolve_state_dir(explicit)


def _identity(path: str) -> list[Any]:
    """path + size + mtime_ns, or the path alone when it does not exist."""
    try:
        st = os.stat(path)
    except OSError:
        return [path]
    return [path, st.st_size, st.st_mtime_ns]


def _digest(path: str, limit: int = 1 << 20) -> list[Any]:
    """path + a digest of the content (a file the next start reads whole), or
    the path alone; a FIFO planted there must not block the start: O_NONBLOCK
    and regular files only."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return [path]
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return [path, "not a regular file"]
        data = os.read(fd, limit + 1)
    except OSError:
        return [path]
    finally:
        os.close(fd)
    return [path, hashlib.blake2b(data, digest_size=12).hexdigest()]


def _listing(directory: str) -> list[Any]:
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return [directory]
    return [directory, *(_identity(os.path.join(directory, n)) for n in names)]


def _code_identity() -> list[Any]:
    mcp_dir = os.path.join(_PKG, "mcp")
    # the tool declarations the front serves (tools_manifest.json) and the modules that read them
    files = [os.path.join(_PKG, n) for n in ("__init__.py", "catalog.py", "profiles.py", "tool_manifest.py")]
    files.append(os.path.join(_PKG, "tools_manifest.json"))
    try:  # the front's modules
        files += sorted(os.path.join(mcp_dir, n) for n in os.listdir(mcp_dir) if n.endswith((".py", ".json")))
    except OSError:
        pass
    return [_identity(f) for f in files]


def _sdk_versions() -> list[str]:
    """The installed SDK and pydantic, by their ``.dist-info`` directory names
    (found without importing them: ``find_spec`` only searches the path)."""
    from importlib.util import find_spec

    spec = find_spec("mcp")
    if spec is None or not spec.origin:
        return ["no-sdk"]
    site = os.path.dirname(os.path.dirname(spec.origin))
    try:
        names = os.listdir(site)
    except OSError:
        return [site]
    return sorted(n for n in names if n.endswith(".dist-info") and n.startswith(_DIST_PREFIXES))


def _user_config() -> str:
    explicit = os.environ.get("TOOLDECK_CONFIG")
    if explicit:
        return os.path.expanduser(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "tooldeck", "config.toml")


def _prompts_dir(explicit: str | None) -> str:
    # as mcp.prompts.resolve_prompts_dir: --prompts, then $MCP_PROMPTS_DIR, then ./prompts
    return explicit or os.environ.get("MCP_PROMPTS_DIR") or "prompts"


def cache_key(args: dict[str, Any], roots: list[str], prompts: str | None) -> dict[str, Any]:
    """Everything the ``initialize`` and ``tools/list`` answers depend on that
    can be seen without importing the SDK (see the module docstring)."""
    from tooldeck import __version__

    cwd = os.getcwd()
    resolved = [os.path.realpath(r) for r in (roots or [cwd])]
    return {
        "format": FORMAT,
        "tooldeck": __version__,
        "code": _code_identity(),
        "sdk": _sdk_versions(),
        "python": [sys.executable, sys.version],
        "args": args,
        "cwd": cwd,
        "env": sorted((k, v) for k, v in os.environ.items() if k.startswith("TOOLDECK_") or k in _ENV_NAMES),
        "roots": [[r, os.path.isdir(r), _digest(os.path.join(r, ".tooldeck.toml"))] for r in resolved],
        "config": _identity(_user_config()),
        "approvals": _digest(os.path.join(state_dir(args.get("state_dir")), "approvals.json")),
        "prompts": _listing(os.path.join(cwd, _prompts_dir(prompts))),
    }


def cache_path(state: str, key: dict[str, Any]) -> str:
    digest = hashlib.blake2b(json.dumps(key, sort_keys=True).encode(), digest_size=12).hexdigest()
    return os.path.join(state, "mcp-handshake", f"{digest}.json")


class HandshakeCache:
    """One cache file: the key it was written under, the SDK's protocol
    versions, and per negotiated version the ``initialize`` and ``tools/list``
    results exactly as the SDK put them on the wire."""

    def __init__(self, path: str, key: dict[str, Any], data: dict[str, Any] | None = None) -> None:
        self.path = path
        self.key = key
        self.data: dict[str, Any] = data if data is not None else {"key": key}
        self._taken = 0  # snapshots taken for a later write (:meth:`writer`)
        self._written = 0  # the newest of them on disk
        self._writing = threading.Lock()

    @classmethod
    def load(cls, path: str, key: dict[str, Any]) -> HandshakeCache:
        """The cache at ``path`` if it was written under ``key``, else an empty one."""
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            return cls(path, key)
        if not isinstance(data, dict) or data.get("key") != json.loads(json.dumps(key)):
            return cls(path, key)
        return cls(path, key, data)

    def negotiate(self, requested: object) -> str | None:
        """The version the SDK would pick for ``requested`` (the same rule as
        its ``_negotiate_initialize``: the requested one when it is a handshake
        version, else the newest handshake version); None when unknown yet."""
        versions = self.data.get("handshake_versions")
        latest = self.data.get("latest_handshake")
        if not isinstance(versions, list) or not isinstance(latest, str):
            return None
        return requested if isinstance(requested, str) and requested in versions else latest

    def result(self, method: str, version: str) -> dict[str, Any] | None:
        got = self.data.get(method, {}).get(version)
        return got if isinstance(got, dict) else None

    def record(self, method: str, version: str, result: dict[str, Any] | None) -> None:
        """Store (or with None, forget) the SDK's ``result`` of ``method``."""
        table = self.data.setdefault(method, {})
        if result is None:
            table.pop(version, None)
        else:
            table[version] = result

    def set_versions(self, versions: list[str], latest: str) -> None:
        self.data["handshake_versions"] = list(versions)
        self.data["latest_handshake"] = latest

    def snapshot(self) -> str:
        """The file's text now (taken on the event loop; written elsewhere)."""
        return json.dumps(self.data)

    def write(self, text: str) -> None:
        """Write ``text`` atomically (temp file + rename): a concurrent reader
        sees the old file or the new one, never half of one. Failures are
        ignored: the cache only saves time."""
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            tmp = f"{self.path}.{os.getpid()}.{threading.get_ident()}.tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, self.path)
        except OSError:
            return
        prune(os.path.dirname(self.path))

    def save(self) -> None:
        self.write(self.snapshot())

    def writer(self) -> Callable[[], None]:
        """The cache as it is now (taken here, on the event loop), to be
        written by the function returned (in a worker thread). Of several
        such writes, in whatever order their threads run, the file ends with
        the newest: an older one finishing last would bring back answers the
        newer one corrected."""
        self._taken += 1
        number, text = self._taken, self.snapshot()

        def write() -> None:
            with self._writing:
                if number > self._written:
                    self.write(text)
                    self._written = number

        return write


def prune(directory: str, keep: int = KEEP_FILES) -> list[str]:
    """Remove all but the ``keep`` most recently written cache files of
    ``directory``, and temp files a dead writer left behind.

    Why: each distinct command line, working directory or environment gets
    a file of its own, so without pruning the directory only grows. The
    least recently written files belong to set-ups not started for the
    longest time; losing one costs that set-up one slow start. Returns the
    names removed; failures (a concurrent pruner got there first) are ignored.
    """
    import time

    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    now = time.time()
    caches: list[tuple[float, str]] = []
    doomed: list[str] = []
    for entry in entries:
        try:
            mtime = entry.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        if entry.name.endswith(".tmp"):
            if now - mtime > STALE_TMP_S:
                doomed.append(entry.name)
        elif entry.name.endswith(".json"):
            caches.append((mtime, entry.name))
    caches.sort(reverse=True)
    doomed += [name for _, name in caches[keep:]]
    removed = []
    for name in doomed:
        try:
            os.unlink(os.path.join(directory, name))
            removed.append(name)
        except OSError:
            continue
    return removed
