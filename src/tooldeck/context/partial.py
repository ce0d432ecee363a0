"""What a build parses when the symbol index of a large tree is not complete.

The first build (:func:`index_cold`) parses its best lexical candidates, the
files naming the task's identifiers and the files its seeds import (a few
hundred files, in the shared parse workers), then the background fill
(:mod:`tooldeck.codemap.fill`) indexes the rest of the tree.

A build that arrives while that fill runs (:func:`index_during_fill`: a
user's second question, seconds after the first) parses much less, in its
own thread: its best ``FILL_PARSE`` lexical candidates (the builder measures
its top 80 and needs their codemaps anyway) and up to ``FILL_NAMING`` files
naming its identifiers. It follows no import, and builds a graph of the
partial index only while that holds at most ``FILL_GRAPH_MAX`` files (else it
ranks with the last graph built); the fill, which pauses while a build runs
(:mod:`tooldeck.core.foreground`), does the rest, and the whole tree's graph
is built once, at its end. Parsing ~800 files per such build in the shared
workers, beside the fill's, and a graph of the partial index each time, cost
5-8 s of wall time at load 10 (docs/context_builder.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from tooldeck.codemap import pool
from tooldeck.codemap.fill import IN_PROCESS
from tooldeck.codemap.index import SymbolIndex
from tooldeck.codemap.languages import language_for
from tooldeck.codemap.service import CodemapService
from tooldeck.context.query import Query
from tooldeck.context.retrieve import Scored
from tooldeck.context.universe import Walked
from tooldeck.core.errors import ToolError
from tooldeck.selection.imports import resolve_import
from tooldeck.workspace.roots import Root

SEEDS = 40  # the best lexical files that seed the PageRank (and whose imports a cold build parses)
COLD_PARSE = 400  # best lexical candidates parsed by a build without the full index
COLD_NAMING = 200  # ... and files naming the task's identifiers (where their definers are)
COLD_IMPORTED = 200  # ... and files the best SEEDS import
FILL_PARSE = 80  # a later build during the background fill: its best lexical candidates ...
FILL_NAMING = 40  # ... and files naming the task's identifiers, parsed in the building thread
FILL_GRAPH_MAX = 2500  # indexed files up to which such a build ranks with a graph of the partial index


def index_cold(
    cm_svc: CodemapService, roots: Sequence[Root], walked: Walked, scored: dict[str, Scored], query: Query
) -> SymbolIndex:
    """The first build's partial index (see the module docstring); the
    caller starts the background fill."""
    by_id, coded = _coded(roots, scored)
    pairs = candidates(by_id, coded, query, COLD_PARSE, COLD_NAMING) + (walked.changed or [])
    cm_svc.partial_index(pairs)  # first: the seeds' imports are read from these codemaps
    index = cm_svc.partial_index(imported_by_seeds(cm_svc, by_id, coded, {rel for _r, rel in pairs}))
    pool.release_if_idle()
    return index


def during_fill(cm_svc: CodemapService, walked: Walked) -> bool:
    """Whether a background fill (or the graph built at its end) is still
    running for the current index, so a build takes :func:`index_during_fill`.
    Not when the index is complete and the walk could not say what changed:
    that needs the full refresh."""
    fill = cm_svc.filling
    if fill is None or fill.finished:
        return False
    return not (cm_svc.index_complete and walked.changed is None)


def index_during_fill(
    cm_svc: CodemapService, roots: Sequence[Root], walked: Walked, scored: dict[str, Scored], query: Query
) -> SymbolIndex:
    """The index as filled so far, plus this task's few best candidates parsed
    in this thread, and the files the walk saw change."""
    by_id, coded = _coded(roots, scored)
    pairs = candidates(by_id, coded, query, FILL_PARSE, FILL_NAMING) + (walked.changed or [])
    return cm_svc.partial_index(pairs, submitter=IN_PROCESS)


def _coded(roots: Sequence[Root], scored: dict[str, Scored]) -> tuple[dict[str, Root], list[Scored]]:
    """The roots by id, and the scored files of a codemap language in them,
    best lexical score first."""
    by_id = {r.id: r for r in roots}
    coded = [s for s in scored.values() if language_for(s.info.rel) is not None and s.info.root_id in by_id]
    coded.sort(key=lambda s: (-s.lexical, s.info.abs))
    return by_id, coded


def candidates(
    roots: dict[str, Root], coded: list[Scored], query: Query, n_best: int, n_naming: int
) -> list[tuple[Root, str]]:
    """The files a build without the full index parses: the best ``n_best``
    by content and path score, and up to ``n_naming`` files whose content
    names one of the task's identifiers (where its definers are)."""
    best = coded[:n_best]
    idents = set(query.identifiers)
    naming = sorted(
        (s for s in coded if idents.intersection(s.term_scores)), key=lambda s: (-s.content, s.info.abs)
    )[:n_naming]
    chosen = {s.info.abs: s.info for s in (*best, *naming)}
    return [(roots[f.root_id], f.rel) for f in chosen.values()]


def imported_by_seeds(
    cm_svc: CodemapService, roots: dict[str, Root], coded: list[Scored], have: set[str]
) -> list[tuple[Root, str]]:
    """The files the best ``SEEDS`` candidates import (resolved from their
    codemaps' import lists): without the full index, the reference graph
    reaches a seed's dependencies only if they are parsed too."""
    seeds = [s.info for s in coded[:SEEDS]]
    out: dict[str, tuple[Root, str]] = {}
    for f in seeds:
        root = roots[f.root_id]
        try:
            cm = cm_svc.codemap(root, f.rel)
        except (ToolError, OSError):
            continue
        for spec in cm.imports if cm is not None else ():
            for target in resolve_import(root, f.rel, cm.language, str(spec)):
                rel = root.relative(target)
                if rel not in have and language_for(rel) is not None:
                    out.setdefault(rel, (root, rel))
        if len(out) >= COLD_IMPORTED:
            break
    return list(out.values())[:COLD_IMPORTED]
