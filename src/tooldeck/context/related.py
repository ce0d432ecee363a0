"""Which files to add as automatic codemaps for a selection's full/slices files.

Two signals, both from codemaps (tree-sitter, cached by content hash):

1. **imports**: what the file imports, resolved to workspace files
   (:mod:`tooldeck.context.imports`); strong evidence, score 3 each;
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
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from tooldeck.context.imports import resolve_import
from tooldeck.workspace.roots import Workspace

if TYPE_CHECKING:
    from tooldeck.runtime import Runtime

log = logging.getLogger("tooldeck.context")

IMPORT_SCORE = 3.0
COMMON_NAME_FILES = 8


def codemap_api(rt: Runtime) -> Any | None:
    """The codemap service, or None when codemaps are unavailable or disabled."""
    from tooldeck.settings import setting

    if not setting(rt, "code_maps.enabled"):
        return None
    try:
        from tooldeck.codemap.service import codemap_service
    except ImportError:
        return None
    return codemap_service(rt)


def _abs(ws: Workspace, path: str) -> str | None:
    if os.path.isabs(path):
        return os.path.realpath(path)
    for root in ws.roots:
        cand = os.path.join(root.path, path)
        if os.path.isfile(cand):
            return os.path.realpath(cand)
    return None


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
    index: Any | None = None
    index_failed = False
    for target in targets:
        root = ws.containing_root(target)
        if root is None:
            continue
        rel = root.relative(target)
        try:
            cm = api.codemap(root, rel)
        except Exception:  # a file the parser chokes on must not break the selection
            log.debug("codemap failed for %s", target, exc_info=True)
            continue
        if cm is None:
            continue
        for spec in getattr(cm, "imports", ()) or ():
            for hit in resolve_import(root, rel, cm.language, str(spec)):
                if hit not in target_set:
                    scores[hit] += IMPORT_SCORE
        own = {s.name for s in getattr(cm, "symbols", ()) or ()}
        names = sorted(set(getattr(cm, "references", ()) or ()) - own)
        if not names:
            continue
        if index is None and not index_failed:
            try:
                index = api.index()
            except Exception:
                log.debug("symbol index unavailable", exc_info=True)
                index_failed = True
        if index is None:
            continue
        for name in names:
            definers = {p for p in (_abs(ws, d) for d in index.files_defining(name)) if p}
            definers.discard(target)
            if not definers or len(definers) > COMMON_NAME_FILES:
                continue
            weight = 1.0 / len(definers)
            for d in definers:
                if d not in target_set:
                    scores[d] += weight
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    return [p for p, _ in ranked[:limit] if ws.containing_root(p) is not None]
