"""Which files to add as automatic codemaps for a selection's full/slices files.

Two signals, both from codemaps (tree-sitter, cached by content hash):

1. **imports**: what the file imports, resolved to workspace files
   (:mod:`tooldeck.selection.imports`); strong evidence, score 3 each;
2. **definitions of the names it uses**: for each name the file references and
   does not define itself, the files defining it (symbol index), weighted by
   rarity (1 / number of defining files; names defined in more than
   ``COMMON_NAME_FILES`` files, such as ``get`` or ``__init__``, are noise and
   skipped).

Scores add up over all full/slices files; the best ``limit`` files win (ties
by path, so the result is deterministic). No codemap service (or codemaps
disabled) means no automatic codemaps, never an error.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from tooldeck.selection.imports import resolve_import
from tooldeck.settings import setting
from tooldeck.workspace.roots import Root, Workspace

if TYPE_CHECKING:
    from tooldeck.runtime import Runtime

log = logging.getLogger("tooldeck.context")

IMPORT_SCORE = 3.0
COMMON_NAME_FILES = 8


def codemap_api(rt: Runtime) -> Any | None:
    """The codemap service, or None when codemaps are unavailable or disabled."""
    if not setting(rt, "code_maps.enabled"):
        return None
    try:
        # lazy: the codemap service (parse pool, tree-sitter) waits for a first expansion
        from tooldeck.codemap.service import codemap_service
    except ImportError:
        return None
    return codemap_service(rt)


class _Paths:
    """Shown paths (as the symbol index gives them) → canonical absolute paths, memoised."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.memo: dict[str, str | None] = {}
        self.dirs: dict[str, str] = {}  # folder -> its realpath (files of one folder share it)

    def __call__(self, path: str) -> str | None:
        if path not in self.memo:
            self.memo[path] = self._find(path)
        return self.memo[path]

    def _real(self, path: str) -> str:
        """``os.path.realpath(path)``, each folder resolved once per call:
        realpath(folder/name) is realpath(folder)/name, resolved again only
        when name itself is a link (one lstat per new component, not one per
        component of every path)."""
        folder, name = os.path.split(path)
        if not name or name in (".", "..") or folder == path:
            return os.path.realpath(path)
        real_dir = self.dirs.get(folder)
        if real_dir is None:
            real_dir = self.dirs[folder] = self._real(folder)
        joined = os.path.join(real_dir, name)
        return os.path.realpath(joined) if os.path.islink(joined) else joined

    def _find(self, path: str) -> str | None:
        if os.path.isabs(path):
            return self._real(path)
        for root in self.ws.roots:
            cand = os.path.join(root.path, path)
            if os.path.isfile(cand):
                return self._real(cand)
        return None


def _codemaps(api: Any, ws: Workspace, targets: list[str]) -> list[tuple[Root, str, Any]]:
    """(root, rel, codemap) of the targets that have one, one batch per root
    (the service parses cache misses in parallel)."""
    by_root: dict[str, list[str]] = defaultdict(list)
    roots: dict[str, Root] = {}
    for target in targets:
        root = ws.containing_root(target)
        if root is not None:
            roots[root.path] = root
            by_root[root.path].append(root.relative(target))
    out: list[tuple[Root, str, Any]] = []
    for root_path, rels in by_root.items():
        root = roots[root_path]
        try:
            maps = api.codemaps(root, rels)
        except Exception:  # a file the parser chokes on must not break the selection
            log.debug("codemaps failed under %s", root_path, exc_info=True)
            continue
        out.extend((root, rel, cm) for rel, cm in zip(rels, maps, strict=True) if hasattr(cm, "imports"))
    return out


class _NameScores:
    """Per symbol index: each file's name-signal contributions, kept while
    the index and the file's content are unchanged.

    Why: a selection grows one file at a time, and each change used to look
    up every name of every selected file again (a dozen files: ~60 ms on a
    13k-file tree); now only the file that is new, or whose content or the
    index changed, is looked up.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.version = -1
        self.by_file: dict[tuple[str, str], dict[str, float]] = {}


_NAME_SCORES: weakref.WeakKeyDictionary[Any, _NameScores] = weakref.WeakKeyDictionary()
_NAME_SCORES_LOCK = threading.Lock()


def _name_scores(index: Any, to_abs: _Paths, target: str, cm: Any) -> dict[str, float]:
    """definer → weight for the names ``cm`` uses and does not define (rare
    names weigh more; names defined in over ``COMMON_NAME_FILES`` files are
    skipped); ``target`` itself excluded."""
    with _NAME_SCORES_LOCK:
        memo = _NAME_SCORES.get(index)
        if memo is None:
            memo = _NAME_SCORES[index] = _NameScores()
    key = (target, str(getattr(cm, "content_hash", "")))
    with memo.lock:
        if memo.version != index.version:
            memo.version, memo.by_file = index.version, {}
        got = memo.by_file.get(key)
    if got is not None:
        return got
    out: dict[str, float] = defaultdict(float)
    own = {s.name for s in cm.symbols or ()}
    for name in sorted(set(cm.references or ()) - own):
        shown = index.files_defining_up_to(name, COMMON_NAME_FILES + 1)
        if not shown:  # none, or a name too common to say anything
            continue
        definers = {p for p in (to_abs(d) for d in shown) if p}
        definers.discard(target)
        if not definers or len(definers) > COMMON_NAME_FILES:
            continue
        for d in definers:
            out[d] += 1.0 / len(definers)
    result = dict(out)
    with memo.lock:
        if memo.version == index.version:
            memo.by_file[key] = result
    return result


def related_files(rt: Runtime, targets: list[str], limit: int) -> list[str]:
    """Up to ``limit`` absolute paths related to ``targets`` (absolute paths), best first."""
    if limit <= 0 or not targets:
        return []
    api = codemap_api(rt)
    if api is None:
        return []
    ws = rt.workspace
    target_set = set(targets)
    scores: dict[str, float] = defaultdict(float)
    resolved: dict[tuple[str, str, str, str], list[str]] = {}
    to_abs = _Paths(ws)
    index: Any | None = None
    index_failed = False
    maps = _codemaps(api, ws, targets)
    for root, rel, cm in maps:
        target = os.path.join(root.path, rel)
        # files in one folder import alike: memoise by folder (Rust: by file, its module path matters)
        where = rel if cm.language == "rust" else os.path.dirname(rel)
        for spec in cm.imports or ():
            key = (root.path, where, cm.language, str(spec))
            if key not in resolved:
                resolved[key] = resolve_import(root, rel, cm.language, str(spec))
            for hit in resolved[key]:
                if hit not in target_set:
                    scores[hit] += IMPORT_SCORE
        if index is None and not index_failed and cm.references:
            try:
                # incremental: only the selection's own files are refreshed once an index exists
                index = api.index(only=[(r, p) for r, p, _ in maps])
            except Exception:
                log.debug("symbol index unavailable", exc_info=True)
                index_failed = True
        if index is None:
            continue
        for d, weight in _name_scores(index, to_abs, target, cm).items():
            if d not in target_set:
                scores[d] += weight
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    return [p for p, _ in ranked[:limit] if ws.containing_root(p) is not None]
