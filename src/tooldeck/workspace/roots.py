"""Roots and path resolution: the one place that decides whether a path is
inside the workspace.

Rules (SPEC §3), applied to every tool that touches a file:

* NUL bytes and empty paths are rejected;
* a relative path resolves against the named root, else the first root where
  it exists (for a new file: the first root);
* the result is canonicalised (symlinks followed) and must be inside a root,
  checked with a separator-aware prefix test (``/x/root-evil`` is not inside
  ``/x/root``); for a path that does not exist yet, its nearest existing
  parent is what gets canonicalised, so ``..`` and symlinks never escape;
* a path inside the state directory (:mod:`~tooldeck.workspace.hidden`) is
  outside every root, even when a root contains it;
* a relative path may name its root with a prefix, ``docs:notes.md``;
* writes refuse read-only roots and a symlink as the final component, any
  path inside version-control metadata (``.git/``, ``.hg/``, ``.svn/``,
  ``.jj/``) or creating a ``.git`` entry (a planted hook or ``gitdir:`` file
  runs or redirects git for whoever works in the checkout next), anything
  that is an agent client's configuration (:data:`CLIENT_CONFIG`, at any depth
  of a root: code ``protected``), and new
  names holding control characters (a newline in a name makes every listing
  lie);
* with several roots, a relative path that names no existing file must carry
  a root prefix or be absolute to be created: "the first root" is a guess the
  model cannot see.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from tooldeck.core.errors import ErrorCode, ToolError, invalid_arguments
from tooldeck.workspace.hidden import is_hidden
from tooldeck.workspace.ignore import IgnoreRules

ROOT_ID_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
PATH_MAX = 4096  # Linux's limit for a whole path; longer input is a mistake, not a file
VCS_METADATA = frozenset({".git", ".hg", ".svn", ".jj"})
# What an agent client (or tooldeck) started in a folder reads as the person's own
# configuration: a new MCP server there is a host command, a hook runs at every
# prompt, an approval mode lets the next session run anything unasked. A model that
# writes one gives itself authority at the person's next client start (SPEC §3), so
# only the person changes them: a write to, a move onto or away from, anything inside
# one of these names, at any depth of a root, is refused. The shell sandbox binds the
# same names read-only (:mod:`tooldeck.shell.gitguard`).
CLIENT_CONFIG_DIRS = frozenset({".claude", ".codex", ".gemini", ".cursor", ".vscode"})
CLIENT_CONFIG_FILES = frozenset({".mcp.json", ".claude.json", ".tooldeck.toml"})  # .claude.json: a home as root
CLIENT_CONFIG = CLIENT_CONFIG_DIRS | CLIENT_CONFIG_FILES
# C0 controls, DEL and C1 controls: never part of a name tooldeck creates
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f\x80-\x9f]")


def short(path: str, limit: int = 160) -> str:
    """``repr(path)``, shortened in the middle: error messages quote the
    model's input, and a 4 KB path quoted twice helps nobody."""
    text = repr(path)
    if len(text) <= limit:
        return text
    keep = limit // 2 - 2
    return f"{text[:keep]}…{text[-keep:]}"


@dataclass(frozen=True, slots=True)
class Root:
    id: str
    path: str  # canonical absolute directory, no trailing separator (except "/")
    description: str = ""
    read_only: bool = False

    def contains(self, real: str) -> bool:
        """Separator-aware containment of an already canonical path."""
        if self.path == os.sep:
            return real.startswith(os.sep)
        return real == self.path or real.startswith(self.path + os.sep)

    def relative(self, real: str) -> str:
        """``real`` (canonical, inside this root) relative to the root, "/"-separated."""
        if real == self.path:
            return "."
        if self.contains(real):  # plain slicing: relpath costs ~20 µs per call
            rel = real[len(self.path) :].lstrip(os.sep)
            return rel.replace(os.sep, "/") if os.sep != "/" else rel
        return os.path.relpath(real, self.path).replace(os.sep, "/")


@dataclass(frozen=True, slots=True)
class ResolvedPath:
    root: Root
    abs: str  # canonical absolute path
    rel: str  # relative to root, "/"-separated ("." for the root itself)
    exists: bool
    requested: str = field(default="", compare=False)

    @property
    def name(self) -> str:
        return os.path.basename(self.abs)


def make_root(
    path: str | os.PathLike[str], id: str | None = None, description: str = "", read_only: bool = False
) -> Root:
    """A root from a directory; a missing directory is an error at startup."""
    p = os.path.realpath(os.fspath(path))
    if not os.path.isdir(p):
        raise FileNotFoundError(f"workspace root {os.fspath(path)!r} does not exist or is not a directory")
    rid = id or (os.path.basename(p) or "root")
    rid = re.sub(r"[^A-Za-z0-9_.-]", "_", rid)[:64] or "root"
    return Root(rid, p, description, read_only)


class Workspace:
    """A named set of roots plus the path rules."""

    def __init__(self, roots: Sequence[Root], name: str = "default") -> None:
        if not roots:
            raise ValueError("a workspace needs at least one root")
        ids = [r.id for r in roots]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate root ids: {ids}")
        self.name = name
        self.roots: tuple[Root, ...] = tuple(roots)
        # most specific root first, for absolute paths inside nested roots
        self._by_depth = sorted(self.roots, key=lambda r: len(r.path), reverse=True)
        self._rules: dict[str, IgnoreRules] = {}

    def rules(self, root: Root) -> IgnoreRules:
        """The (cached) ignore rules of ``root``."""
        rules = self._rules.get(root.id)
        if rules is None or rules.root != root.path:
            rules = self._rules[root.id] = IgnoreRules(root.path)
        return rules

    @classmethod
    def from_dirs(cls, dirs: Iterable[str | os.PathLike[str]], name: str = "default") -> Workspace:
        roots: list[Root] = []
        seen: set[str] = set()
        for d in dirs:
            root = make_root(d)
            rid, n = root.id, 2
            while rid in seen:
                rid, n = f"{root.id}-{n}", n + 1
            seen.add(rid)
            roots.append(Root(rid, root.path, root.description, root.read_only))
        return cls(roots, name)

    @property
    def primary(self) -> Root:
        return self.roots[0]

    def root(self, root_id: str) -> Root:
        for r in self.roots:
            if r.id == root_id:
                return r
        raise invalid_arguments(
            f"unknown root {root_id!r}; known roots: {', '.join(r.id for r in self.roots)}", field="root"
        )

    def describe_roots(self) -> str:
        """Lines ``id: /abs/path — description`` for tool descriptions."""
        lines = []
        for r in self.roots:
            extra = f" — {r.description}" if r.description else ""
            ro = " (read-only)" if r.read_only else ""
            lines.append(f"- {r.id}: {r.path}{ro}{extra}")
        return "\n".join(lines)

    def containing_root(self, real: str) -> Root | None:
        for r in self._by_depth:
            if r.contains(real):
                return r
        return None

    def display(self, real: str) -> str:
        """How a path is shown to the model: relative to the first root when
        inside it, else absolute (unambiguous across roots)."""
        if self.primary.contains(real):
            return self.primary.relative(real)
        return real

    def resolve(
        self,
        path: str,
        *,
        root: str | None = None,
        must_exist: bool = True,
        write: bool = False,
        field_name: str = "path",
        folders: dict[str, str] | None = None,
    ) -> ResolvedPath:
        """Resolve ``path`` under the rules above, or raise ToolError.

        ``folders``: a cache of folders' canonical paths that the caller keeps
        for the paths of one call (see :func:`_in_known_folder`)."""
        if not isinstance(path, str) or not path.strip():
            raise invalid_arguments(f"field `{field_name}`: a non-empty path is required", field=field_name)
        if "\x00" in path:
            raise invalid_arguments(f"field `{field_name}`: path contains a NUL byte", field=field_name)
        try:
            encoded = os.fsencode(path)  # U+DC80..U+DCFF stand for raw bytes; other lone surrogates cannot be a name
        except UnicodeEncodeError as exc:
            raise invalid_arguments(
                f"field `{field_name}`: path contains a lone surrogate and cannot name a file", field=field_name
            ) from exc
        if len(encoded) >= PATH_MAX:
            raise invalid_arguments(
                f"field `{field_name}`: path is {len(encoded)} bytes long, over the {PATH_MAX - 1}-byte limit",
                field=field_name,
            )
        shown = short(path)
        if root is None and not os.path.isabs(path):
            root, path = self._split_root_prefix(path)
        lexical = self._lexical(path, root, shown, field_name, new_file=write and not must_exist)
        known = _in_known_folder(lexical, folders) if folders is not None else None
        real, exists = known if known is not None else _canonical(lexical, shown, field_name)
        owner = self.containing_root(real)
        if owner is None or is_hidden(real):  # the state directory is outside, even inside a root
            raise ToolError(
                ErrorCode.OUTSIDE_ROOTS,
                f"{shown} resolves outside the workspace roots; use a path inside one of:\n{self.describe_roots()}",
            )
        if write:
            if owner.read_only:
                raise ToolError(ErrorCode.READ_ONLY, f"root {owner.id!r} is read-only; {shown} cannot be changed")
            # the folder cache answers only for a name that is no link: no second lstat of it
            if known is None and os.path.islink(lexical):
                raise ToolError(
                    ErrorCode.DENIED,
                    f"{shown} is a symbolic link; tooldeck never writes through a link. "
                    f"Edit its target {self.display(real)} instead",
                )
            _check_write_name(path, lexical, real, exists, shown, field_name)
            self._check_client_config(owner, real, lexical, shown)
        if must_exist and not exists:
            raise ToolError(
                ErrorCode.NOT_FOUND,
                f"{shown} does not exist (looked at {short(self.display(real))}); list the directory with "
                "read_directory or search with file_search",
            )
        return ResolvedPath(owner, real, owner.relative(real), exists, path)

    def _check_client_config(self, owner: Root, real: str, lexical: str, shown: str) -> None:
        """No write touches :data:`CLIENT_CONFIG`: judged on the canonical path
        (a link to one) and on the spelling given (a path through a link named
        like one), each relative to its root, case-insensitively."""
        norm = os.path.normpath(lexical)
        spelled = self.containing_root(norm)
        for rel in (owner.relative(real), spelled.relative(norm) if spelled else norm):
            hit = client_config_name(rel)
            if hit:
                raise ToolError(
                    ErrorCode.PROTECTED,
                    f"{shown} is agent-client configuration ({hit}): a client or tooldeck started in this "
                    "folder reads it as the person's own settings (MCP servers, hooks, approval modes), so "
                    "tools never create, change, move or delete it. Reading it is allowed; tell the person "
                    "what to change and they edit it themselves",
                    {"protected": hit},
                )

    def _lexical(self, path: str, root: str | None, shown: str, field_name: str, *, new_file: bool) -> str:
        """The one spelling of ``path`` to canonicalise: under the named root,
        as given when absolute, else under the first root where it exists
        (see :meth:`_under_root_named`)."""
        if root is not None:
            if os.path.isabs(path):
                raise invalid_arguments(
                    f"field `{field_name}` must be relative when `root` is given (got {shown})", field=field_name
                )
            return os.path.join(self.root(root).path, path)
        if os.path.isabs(path):
            return path
        candidates = [os.path.join(r.path, path) for r in self.roots]
        existing = [c for c in candidates if os.path.lexists(c)]
        if existing:
            return existing[0]
        named = self._under_root_named(path, shown, field_name, new_file=new_file)
        if named is not None:
            return named
        if len(self.roots) > 1 and new_file:
            raise self._ambiguous_new(path, shown, field_name)
        return candidates[0]

    def _under_root_named(self, path: str, shown: str, field_name: str, *, new_file: bool) -> str | None:
        """A relative path that exists under no root but starts with a root's
        own name, or the end of its path (``src/app.py`` with a root
        ``/work/src``, as ``<read path="src">`` declares it relative to
        ``${tool_dir}``): that root, named twice. Taken when the rest exists
        there (for a new file: its folder, where the plain reading has none);
        several roots that fit are an error naming each way to say it."""
        parts = [p for p in path.replace(os.sep, "/").split("/") if p not in ("", ".")]
        fits: dict[str, str] = {}
        for r in self.roots:
            own = [p for p in r.path.split(os.sep) if p]
            for k in range(1, min(len(own), len(parts) - 1) + 1):
                if parts[:k] != own[-k:] or ".." in parts[k:]:
                    continue
                rest = os.path.join(*parts[k:])
                target = os.path.join(r.path, rest)
                there = os.path.isdir(os.path.dirname(target)) if new_file else os.path.lexists(target)
                if there and r.id not in fits:
                    fits[r.id] = rest
        if new_file and fits and os.path.isdir(os.path.dirname(os.path.join(self.roots[0].path, path))):
            return None  # the plain reading has a folder for the new file: keep it
        if len(fits) > 1:
            ways = " or ".join(f"{rid}:{rest}" for rid, rest in fits.items())
            raise invalid_arguments(
                f"field `{field_name}`: {shown} exists under none of the roots as written, and could mean {ways}; "
                "say which with the `root` field or a root-id prefix",
                field=field_name,
            )
        if fits:
            ((rid, rest),) = fits.items()
            return os.path.join(self.root(rid).path, rest)
        return None

    def _split_root_prefix(self, path: str) -> tuple[str | None, str]:
        """``docs:notes.md`` → ("docs", "notes.md") when ``docs`` is a root id."""
        head, sep, tail = path.partition(":")
        if sep and tail and any(r.id == head for r in self.roots):
            return head, tail
        return None, path

    def _ambiguous_new(self, path: str, shown: str, field_name: str) -> ToolError:
        ids = ", ".join(f"{r.id}:" for r in self.roots)
        return invalid_arguments(
            f"field `{field_name}`: {shown} exists in none of the {len(self.roots)} roots, so where to create it "
            f"is ambiguous; prefix a root id ({self.roots[1].id}:{path}) or give an absolute path. Root ids: {ids} "
            "(to change an existing file, check its path with file_search)",
            field=field_name,
        )


def client_config_name(rel: str) -> str | None:
    """The :data:`CLIENT_CONFIG` name a root-relative path is or lies inside
    (``.claude/`` for a folder's content), or None."""
    parts = [p.lower() for p in rel.replace(os.sep, "/").split("/")]
    for i, part in enumerate(parts):
        if part in CLIENT_CONFIG:
            return part + "/" if i < len(parts) - 1 or part in CLIENT_CONFIG_DIRS else part
    return None


def _check_write_name(path: str, lexical: str, real: str, exists: bool, shown: str, field_name: str) -> None:
    """The write-only rules: no VCS metadata (the canonical path and the
    model's spelling are both checked, so neither a link nor ``.GIT`` on a
    case-folding filesystem slips through) and no control characters in a
    name about to be created."""
    for candidate in (real, os.path.normpath(lexical)):
        parts = {p.lower() for p in candidate.split(os.sep)}
        hit = sorted(parts & VCS_METADATA)
        if hit:
            raise ToolError(
                ErrorCode.DENIED,
                f"{shown} is inside version-control metadata ({hit[0]}/) or would create a {hit[0]} entry; "
                "tools never write there (a hook or gitdir file would run or redirect the VCS). "
                "Change project files only",
            )
    if not exists and _CONTROL_RE.search(path):
        raise invalid_arguments(
            f"field `{field_name}`: {shown} contains a control character (newline, tab, escape...); "
            "new file names must be printable",
            field=field_name,
        )


def _in_known_folder(lexical: str, folders: dict[str, str]) -> tuple[str, bool] | None:
    """:func:`_canonical` for a path whose folder was resolved before in the
    same call: the folder's canonical path plus the name, when the name is no
    link (one ``lstat`` instead of one per component: an 800-file patch in 10
    folders made 6,400). None (resolve it whole) for a link, ``.``/``..``, or
    any error. A folder swapped for a link after it was cached changes nothing
    that matters: every open walks from the root without following links."""
    parent, name = os.path.split(lexical)
    if not parent or name in ("", ".", ".."):
        return None
    real_parent = folders.get(parent)
    if real_parent is None:
        try:
            real_parent = os.path.realpath(parent, strict=True)
        except OSError:
            return None
        folders[parent] = real_parent
    real = os.path.join(real_parent, name)
    try:
        st = os.lstat(real)
    except FileNotFoundError:
        return real, False
    except OSError:
        return None
    return None if stat.S_ISLNK(st.st_mode) else (real, True)


def _canonical(lexical: str, shown: str, field_name: str = "path") -> tuple[str, bool]:
    """Canonical form of ``lexical`` and whether it exists (symlinks followed)."""
    try:
        return os.path.realpath(lexical, strict=True), True
    except FileNotFoundError:
        pass
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise invalid_arguments(
                f"field `{field_name}`: {shown} is (or passes through) a symlink loop", field=field_name
            ) from exc
        if exc.errno == errno.ENOTDIR:
            raise ToolError(ErrorCode.NOT_A_DIRECTORY, f"{shown}: a parent component is not a directory") from exc
        if exc.errno == errno.ENAMETOOLONG:
            raise invalid_arguments(
                f"field `{field_name}`: {shown}: a name in the path is too long", field=field_name
            ) from exc
        raise
    try:
        return os.path.realpath(lexical, strict=False), False
    except OSError as exc:  # pragma: no cover - realpath(strict=False) rarely raises
        raise invalid_arguments(f"field `{field_name}`: {shown} cannot be resolved: {exc}", field=field_name) from exc
