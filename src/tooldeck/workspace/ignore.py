"""Ignore rules: nested ``.gitignore``, ``.git/info/exclude``, ``.tooldeckignore``
and a built-in deny list, matched with pathspec's real gitignore implementation.

Semantics follow git: a pattern in ``D/.gitignore`` is relative to ``D``; for
one path the last matching rule wins, deeper files after shallower ones, so a
deeper ``!pattern`` can re-include; a path under an ignored directory stays
ignored (the walker never descends into it).
"""

from __future__ import annotations

import os
import re
import threading
from bisect import bisect_right
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from itertools import accumulate

from pathspec import GitIgnoreSpec

from tooldeck.core.errors import ToolError
from tooldeck.workspace.content import read_bytes
from tooldeck.workspace.tempnames import is_temp_name

IGNORE_FILES = (".gitignore", ".tooldeckignore")

# Never worth showing to a model: VCS internals, dependency trees, caches and
# build outputs. Matched by directory name at any depth.
DENY_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".jj",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".benchmarks",
        ".cache",
        ".gradle",
        ".idea",
        ".next",
        ".nuxt",
        ".turbo",
        ".parcel-cache",
        "dist",
        "build",
        "target",
        "_build",
        ".eggs",
        "bower_components",
        ".terraform",
        ".direnv",
        ".tdk-state",
    }
)
DENY_FILE_SUFFIXES = (".pyc", ".pyo", ".class", ".o", ".obj", ".so.tmp")
DENY_FILES = frozenset({".DS_Store", "Thumbs.db"})


_NAMED_GROUP = re.compile(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")


@dataclass(frozen=True, slots=True)
class DirSpec:
    """The compiled rules one directory declares.

    ``quick`` is every pattern's regex (pathspec's own translation) in one
    alternation: a single C-level ``match`` tells whether *any* pattern could
    apply. Almost every path matches none, and for those pathspec's per-pattern
    Python loop (the walk's main cost on a big tree) is skipped; a path that
    does match goes through pathspec as usual, which decides, unless no
    pattern of the file re-includes (``!``): then any pattern that applies
    ignores the path, and the quick regex, made of the very same regexes,
    has just said one does."""

    base: str  # the directory, relative to the root ("" = root)
    spec: GitIgnoreSpec
    quick: re.Pattern[str] | None
    # a literal every path a pattern matches contains (one per pattern, none holding "/", no
    # two alike): a folder whose names hold none of them needs no check at all. Looked for with
    # str.find, not as one regex alternation: Python's regex engine steps through the text
    # (1.1 us for a folder of 21 names and 3 literals; 0.3 us with three finds)
    literals: tuple[str, ...] | None = None
    # no pattern re-includes: a path ``quick`` matches is ignored, without asking pathspec which
    # pattern applies last (~4 of a 50,000-file walk's ~78 ms, where each folder has a "*.log")
    ignores_only: bool = False

    @classmethod
    def build(cls, base: str, spec: GitIgnoreSpec) -> DirSpec:
        sources = []
        for pattern in spec.patterns:
            regex = getattr(pattern, "regex", None)
            if pattern.include is None:
                continue
            # pathspec searches each regex; the quick one is matched at the start, the same
            # only for the anchored regexes gitignore patterns compile to
            if regex is None or "(?P=" in regex.pattern or not regex.pattern.startswith("^"):
                return cls(base, spec, None)  # unknown shape: always ask pathspec
            sources.append(f"(?:{_NAMED_GROUP.sub('(?:', regex.pattern)})")
        try:
            quick = re.compile("|".join(sources)) if sources else re.compile(r"(?!)")
        except re.error:
            return cls(base, spec, None)
        ignores_only = all(p.include for p in spec.patterns if p.include is not None)
        found = [_literal(getattr(p, "pattern", None)) for p in spec.patterns if p.include is not None]
        if not found or any(lit is None for lit in found):
            return cls(base, spec, quick, None, ignores_only)
        return cls(base, spec, quick, tuple(sorted({lit for lit in found if lit})) or None, ignores_only)

    def check(self, path: str) -> bool | None:
        """True = ignored, False = re-included, None = no pattern applies."""
        if self.quick is not None:
            if self.quick.match(path) is None:
                return None
            if self.ignores_only:
                return True
        return self.spec.check_file(path).include


_WILDCARDS = re.compile(r"[*?]+")
_PLUS_ONE = (1).__add__


def _literal(pattern: object) -> str | None:
    """The longest run of plain characters of a gitignore pattern, without
    "/" (every path it matches contains it), or None when there is none or
    the pattern has escapes or character classes (not worth reading)."""
    if not isinstance(pattern, str):
        return None
    text = pattern.rstrip(" \t")
    if "\\" in text or "[" in text:
        return None
    text = text.removeprefix("!")
    pieces = [piece for chunk in _WILDCARDS.split(text) for piece in chunk.split("/") if piece]
    return max(pieces, key=len) if pieces else None


@dataclass(frozen=True, slots=True)
class _DirRules:
    stamp: tuple[tuple[str, int, int], ...]
    spec: DirSpec | None


MAX_RULE_FILE_BYTES = 1 << 20


def _read_lines(root: str, path: str) -> list[str] | None:
    """A rule file's lines, read through the safe path from ``root`` (a rule
    file that is a FIFO or a link swapped in is skipped, never waited on)."""
    try:
        data = read_bytes(path, path, MAX_RULE_FILE_BYTES, root=root).data
    except (ToolError, OSError):
        return None
    return data.decode("utf-8", "replace").splitlines()


class IgnoreRules:
    """The ignore rules of one root. Thread-safe; per-directory rule files are
    cached and re-read when their size or mtime changes."""

    def __init__(self, root_path: str, *, use_gitignore: bool = True) -> None:
        self.root = root_path
        self.use_gitignore = use_gitignore
        self._cache: dict[str, _DirRules] = {}
        self._lock = threading.Lock()
        self._root_extra = self._load_root_extra()

    def _load_root_extra(self) -> DirSpec | None:
        if not self.use_gitignore:
            return None
        lines = _read_lines(self.root, os.path.join(self.root, ".git", "info", "exclude"))
        return DirSpec.build("", GitIgnoreSpec.from_lines(lines)) if lines else None

    def rules_for_dir(self, rel_dir: str) -> GitIgnoreSpec | None:
        """The compiled rules declared in ``rel_dir`` ("" = root), or None."""
        found = self.dir_spec(rel_dir)
        return found.spec if found is not None else None

    def dir_spec(self, rel_dir: str, present: Collection[str] | None = None) -> DirSpec | None:
        """Like :meth:`rules_for_dir`, with the walker's fast pre-check.
        ``present``: which of :data:`IGNORE_FILES` the caller's own listing of
        the folder holds (a walker has one); only those are stat'ed, saving two
        calls in most folders. Without it, each rule file name is stat'ed."""
        if present is not None and not present:
            return None  # the folder holds no rule file: nothing to stat, read or cache
        base = os.path.join(self.root, rel_dir) if rel_dir else self.root
        stamp: list[tuple[str, int, int]] = []
        for name in IGNORE_FILES:
            if name == ".gitignore" and not self.use_gitignore:
                continue
            if present is not None and name not in present:
                continue
            try:
                st = os.stat(os.path.join(base, name))
            except OSError:
                continue
            stamp.append((name, st.st_mtime_ns, st.st_size))
        key = tuple(stamp)
        cached = self._cache.get(rel_dir)
        if cached is not None and cached.stamp == key:
            return cached.spec
        lines: list[str] = []
        for name, _, _ in stamp:
            lines.extend(_read_lines(self.root, os.path.join(base, name)) or [])
        spec = DirSpec.build(rel_dir, GitIgnoreSpec.from_lines(lines)) if any(ln.strip() for ln in lines) else None
        with self._lock:
            self._cache[rel_dir] = _DirRules(key, spec)
        return spec

    @property
    def has_root_rules(self) -> bool:
        """Whether root-wide rules (``.git/info/exclude``) apply to every path."""
        return self._root_extra is not None

    @staticmethod
    def denied_name(name: str, is_dir: bool) -> bool:
        if is_dir:
            return name in DENY_DIRS
        return name in DENY_FILES or name.endswith(DENY_FILE_SUFFIXES) or is_temp_name(name)

    def decide(self, rel: str, is_dir: bool, specs: list[DirSpec]) -> bool:
        """Whether ``rel`` is ignored given the chain of rules from the root
        down to its parent (each :class:`DirSpec`, shallowest first). Used by
        the walker, which keeps the chain."""
        ignored = False
        target = rel + "/" if is_dir else rel
        if self._root_extra is not None:
            res = self._root_extra.check(target)
            if res is not None:
                ignored = res
        for spec in specs:
            res = spec.check(target[len(spec.base) + 1 :] if spec.base else target)
            if res is not None:
                ignored = res
        return ignored

    def file_checks(self, specs: list[DirSpec]) -> list[tuple[re.Pattern[str] | None, DirSpec, int]]:
        """:meth:`decide`'s chain for the files of one folder, prepared once
        per folder: (quick regex, spec, offset of the path below its base),
        root-wide rules first. :func:`ignored_files` applies it."""
        chain = [self._root_extra, *specs] if self._root_extra is not None else specs
        return [(sp.quick, sp, len(sp.base) + 1 if sp.base else 0) for sp in chain]

    def is_ignored(self, rel: str, is_dir: bool | None = None) -> bool:
        """Random-access check of one path (relative to the root), including
        whether any ancestor directory is ignored."""
        rel = rel.strip("/")
        if rel in ("", "."):
            return False
        parts = rel.split("/")
        if is_dir is None:
            is_dir = os.path.isdir(os.path.join(self.root, rel))
        specs: list[DirSpec] = []
        for i, name in enumerate(parts):
            last = i == len(parts) - 1
            here_is_dir = is_dir if last else True
            if self.denied_name(name, here_is_dir):
                return True
            spec = self.dir_spec("/".join(parts[:i]))
            if spec is not None:
                specs.append(spec)
            if self.decide("/".join(parts[: i + 1]), here_is_dir, specs):
                return True
        return False


def ignored_files(prefix: str, names: list[str], checks: list[tuple[re.Pattern[str] | None, DirSpec, int]]) -> set[int]:
    """:meth:`IgnoreRules.decide` for the files ``names`` of the folder
    ``prefix`` (its root-relative path with a trailing "/") at once, with the
    chain of :meth:`IgnoreRules.file_checks`: which indexes are ignored.

    Each rule file's :attr:`DirSpec.literals` are looked for once in the
    folder's names joined by newlines (C-level); only the names they are
    found in go through the quick regex, then pathspec, which decides (the
    last rule that applies wins); a rule file without a ``!`` pattern ignores
    every name its quick regex matches."""
    joined: str | None = "\n".join(names)
    if joined.count("\n") != len(names) - 1:  # a name holds a newline: no literal pre-check
        joined = None
    if len(checks) == 1 and checks[0][0] is not None and checks[0][1].ignores_only:  # the usual chain
        quick, spec, off = checks[0]
        return set(_candidates(spec, prefix[off:], names, quick, joined))
    verdict: dict[int, bool] = {}
    for quick, spec, off in checks:
        below = prefix[off:]
        found = _candidates(spec, below, names, quick, joined)
        if quick is not None and spec.ignores_only:  # found: the names a pattern applies to
            verdict.update(dict.fromkeys(found, True))
            continue
        check = spec.spec.check_file
        for k in found:
            res = check(below + names[k]).include
            if res is not None:
                verdict[k] = res
    return {k for k, ignored in verdict.items() if ignored}


def _candidates(
    spec: DirSpec, below: str, names: list[str], quick: re.Pattern[str] | None, joined: str | None
) -> Iterable[int]:
    """Indexes of ``names`` (under ``below``; ``joined``: them joined by
    newlines, or None) some rule of ``spec`` may apply to: a superset of
    those its quick regex matches."""
    every: Iterable[int] = range(len(names))
    lits = spec.literals
    if lits is not None and joined is not None and not _holds_any(below, lits):
        starts = _found_at(joined, lits)
        if not starts:
            return ()
        if len(starts) <= 4:  # the usual few: count the newlines before each
            every = sorted({joined.count("\n", 0, at) for at in starts})
        else:
            offsets = list(accumulate(map(_PLUS_ONE, map(len, names)), initial=0))  # where each name starts
            every = sorted({bisect_right(offsets, at) - 1 for at in starts})
    if quick is None:
        return every
    return [k for k in every if quick.match(below + names[k])]


def _holds_any(text: str, literals: tuple[str, ...]) -> bool:
    """Whether ``text`` holds one of ``literals`` (a loop: ``any()`` over a
    generator costs more than the few ``in`` tests, once per folder)."""
    for lit in literals:  # noqa: SIM110
        if lit in text:
            return True
    return False


def _found_at(text: str, literals: tuple[str, ...]) -> list[int]:
    """Where each of ``literals`` occurs in ``text`` (every occurrence, in no order)."""
    out: list[int] = []
    for lit in literals:
        at = text.find(lit)
        while at >= 0:
            out.append(at)
            at = text.find(lit, at + 1)
    return out
