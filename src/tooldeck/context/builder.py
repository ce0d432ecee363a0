"""context_builder, offline: task → ranked files → a selection within budget.

The pipeline, one stage per module:

1. :mod:`~tooldeck.context.query` reads the task (identifiers, paths, words);
2. :mod:`~tooldeck.context.retrieve` scores files lexically (ripgrep BM25,
   path words, the symbol index);
3. :mod:`~tooldeck.context.rank` spreads those scores over the reference
   graph (personalised PageRank);
4. this module measures each candidate's costs (full text, slices around what
   the task names, codemap) with the same renderers the context package uses;
5. :mod:`~tooldeck.context.fit` chooses a representation per file under the
   budget; the choice is then checked against the real package rendering and
   trimmed if an estimate fell short, so the selection never exceeds the budget;
6. the selection is set (automatic codemaps off: the builder chose them).

No model and no network: seconds on a large repository once the codemap cache
is warm.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tooldeck.codemap import pool
from tooldeck.codemap.index import SymbolIndex
from tooldeck.codemap.model import Codemap
from tooldeck.codemap.service import CodemapService, codemap_service
from tooldeck.context import partial
from tooldeck.context.clock import Progress, StageClock, stage_reporter
from tooldeck.context.cochange import CoChange, cochange_reason, lift_cochanged
from tooldeck.context.fit import Candidate, Choice, fit
from tooldeck.context.memory import release_freed_memory
from tooldeck.context.pairs import best_first, lift_test_pairs, pair_reason
from tooldeck.context.partial import SEEDS
from tooldeck.context.query import Query, parse_query
from tooldeck.context.rank import MIN_RANK, Graph, GraphCache, rank_vector
from tooldeck.context.retrieve import (
    FileInfo,
    Scored,
    path_word_index,
    retrieve,
    score_symbols,
    start_content,
)
from tooldeck.context.slices import outline_view, slice_ranges
from tooldeck.context.term_index import TermIndex
from tooldeck.context.universe import Universe, Walked
from tooldeck.core.errors import ToolError
from tooldeck.core.foreground import serving
from tooldeck.selection.package import codemap_chunk, full_chunk, slices_chunk
from tooldeck.selection.service import Item, selection_service
from tooldeck.state.selections import LineRange, SelectedFile, Selection
from tooldeck.workspace.content import decode_text, read_bytes

if TYPE_CHECKING:
    from tooldeck.runtime import Runtime

log = logging.getLogger("tooldeck.context")

DEFAULT_BUDGET = 30_000
CANDIDATES = 80
MAX_READ_BYTES = 1_000_000
LEXICAL_WEIGHT = 0.45
INLINE_INDEX_FILES = 1500
CODEMAP_TOKENS_KEPT = 4096  # codemap token counts kept between builds (~0.5 MB)


@dataclass(slots=True)
class BuildResult:
    query: Query
    budget: int
    choices: list[Choice]
    total_tokens: int
    strategy: str
    timings: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    cpu: dict[str, float] = field(default_factory=dict)  # this thread's CPU seconds per stage (timings: wall)

    @property
    def selected(self) -> list[Choice]:
        return [c for c in self.choices if c.mode != "omitted"]

    @property
    def omitted(self) -> list[Choice]:
        return [c for c in self.choices if c.mode == "omitted"]


@dataclass(slots=True)
class _Pending:
    """A candidate whose chunks are rendered but not yet counted."""

    candidate: Candidate
    full: str | None = None
    codemap: str | None = None
    slices: str | None = None
    ranges: tuple[LineRange, ...] = ()
    codemap_key: tuple[str, str, str] | None = None  # (shown path, language, content hash) of its codemap
    codemap_tokens: int | None = None  # known from an earlier build: the codemap was not rendered
    outline: tuple[tuple[LineRange, ...], str] | None = None  # a doc page's headings, rendered as slices


class ContextBuilder:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.graphs = GraphCache(Path(rt.state_dir) / "graphs")  # a restart loads the graph, not builds it
        self.universe = Universe()
        self.terms = TermIndex(rt.state_dir)
        self.cochange = CoChange()  # each root's history of changes, per HEAD commit
        self._last_graph: Graph | None = None
        self._path_index: dict[str, list[str]] | None = None  # path word → files, while the walk finds the same files
        self._paths: tuple[Graph, dict[str, str], np.ndarray] | None = None  # see _node_paths
        # tokens of a codemap chunk by (shown path, language, content hash): rendering a candidate's
        # codemap cost ~1 ms, and the same files come back build after build
        self._codemap_tokens: OrderedDict[tuple[str, str, str], int] = OrderedDict()
        self._lock = threading.Lock()

    def build(
        self,
        instructions: str,
        budget: int | None = None,
        *,
        strategy: str = "graph",
        apply: bool = True,
        progress: Progress | None = None,
        check: Callable[[], None] | None = None,
    ) -> BuildResult:
        """Select files for ``instructions`` within ``budget`` tokens.
        ``strategy="lexical"`` ranks by content and path matches alone (the
        evaluation baseline); ``apply=False`` leaves the selection untouched.
        ``check``: a cancelled call's check (raises), called between stages
        and per folder of the walk, so a cancelled build stops early.
        Background fills pause while it runs (:mod:`tooldeck.core.foreground`)."""
        with serving():
            return self._build(instructions, budget, strategy, apply, progress, check)

    def _build(
        self,
        instructions: str,
        budget: int | None,
        strategy: str,
        apply: bool,
        progress: Progress | None,
        check: Callable[[], None] | None,
    ) -> BuildResult:
        stop = check or (lambda: None)
        say = stage_reporter(progress, stop)
        budget = budget or DEFAULT_BUDGET
        clock = StageClock()
        query = parse_query(instructions)
        ws = self.rt.workspace
        # without a ready term index, ripgrep reads the tree in its own processes while it is walked
        content = None if self.terms.ready_for(ws) else start_content(ws, query)
        walked = self.universe.walk(ws, check)
        files = walked.files
        clock.lap("walk")

        say("retrieving")
        content = self.terms.search(ws, walked, query, content)  # the index's counts, or ripgrep's
        if not walked.same_files or self._path_index is None:
            self._path_index = path_word_index(files)
            self._paths = None
        scored = retrieve(
            ws, query, None, lexical_only=True, files=files, by_word=self._path_index, started=content
        )  # content, paths
        clock.lap("retrieve")
        index = graph = None
        cm_svc = codemap_service(self.rt)
        if strategy != "lexical":
            say("indexing symbols")
            if partial.during_fill(cm_svc, walked):
                index = partial.index_during_fill(cm_svc, self.rt.workspace.roots, walked, scored, query)
                graph = self._graph_during_fill(index)
            else:
                index = self._index(cm_svc, walked, scored, query)
                graph = self.graphs.get(index)
            if walked.changed is None or graph is not self._last_graph:
                release_freed_memory()  # a full index or a new graph leaves much freed heap behind
            self._last_graph = graph
            score_symbols(query, files, index, graph.symbol_words, scored)  # retrieve()'s third signal
            clock.lap("index")
        ranked = self._rank(scored, graph, files)
        lifted: dict[str, str] = {}
        if strategy != "lexical":  # test <-> source pairing: a structure signal, off in the baseline
            ranked, paired = lift_test_pairs(ranked, [(f.abs, f.rel) for f in files])
            lifted = {k: pair_reason(v) for k, v in paired.items()}
            ranked, changed_with = lift_cochanged(self.cochange, ranked, [r.path for r in ws.roots], files, CANDIDATES)
            lifted.update((k, cochange_reason(v)) for k, v in changed_with.items())
        clock.lap("rank")

        say("measuring candidates")
        cands = self._count(self._measure_ranked(ranked, scored, query, cm_svc, files, lifted, stop))
        clock.lap("measure")
        stop()
        choices = fit(cands, budget)
        choices, total = self._verify(choices, budget)
        clock.lap("fit")
        notes: list[str] = []
        if index is not None and not index.complete:
            notes.append(_filling_note(cm_svc))
        if index is not None and index.truncated:
            notes.append("the symbol index stopped at its file limit; some files were not ranked by references")
        if not cands:
            notes.append("nothing in the workspace matched the task; name a file, symbol or distinctive word")
        if apply:
            stop()  # the last point a cancelled build may stop: the selection is not touched yet
            self._apply(choices)
            clock.lap("apply")
        release_freed_memory()  # a build's transients (file texts, rg output, rank arrays) leave freed heap
        clock.lap("trim")
        self.terms.start_fill()  # after the build: the first one does not share the cores with it
        timings, cpu = clock.done()
        return BuildResult(query, budget, choices, total, strategy, timings, notes, cpu)

    # stages -------------------------------------------------------------------------------
    def _index(self, cm_svc: CodemapService, walked: Walked, scored: dict[str, Scored], query: Query) -> SymbolIndex:
        """The symbol index, refreshed for the files the walk found changed
        (all of them by a full walk the first time, or after a full rebuild
        could not be avoided: a truncated index is always walked whole).

        On a large tree whose index is not complete yet (the first build),
        only the best lexical candidates are parsed now, and the rest of the
        tree is indexed in the background (:mod:`tooldeck.codemap.fill`)."""
        if not cm_svc.index_complete and len(walked.files) > inline_index_files():
            index = partial.index_cold(cm_svc, self.rt.workspace.roots, walked, scored, query)
            fill = cm_svc.fill_in_background(first=self.terms.after_fill)  # the term index first: see after_fill
            if fill is not None:
                fill.then(self._prepare_graph)  # the whole tree's graph, built before a build needs it
            return index
        index = cm_svc.index(only=walked.changed) if walked.changed is not None else cm_svc.index()
        if index.truncated and walked.changed is not None:
            index = cm_svc.index()
        pool.release_if_idle()  # parse workers (~40 MB each) are not kept once the tree is indexed
        return index

    def _graph_during_fill(self, index: SymbolIndex) -> Graph:
        """The graph of the partial index while it is small (a few hundred
        ms at most), else the last one built: a graph of most of the tree
        costs seconds, and the fill builds the whole tree's at its end."""
        if self._last_graph is not None and len(index) > partial.FILL_GRAPH_MAX:
            return self._last_graph
        return self.graphs.get(index)

    def _prepare_graph(self, index: SymbolIndex) -> None:
        """In the fill's thread, once its index is complete: the whole tree's
        graph, pausing while a request is served (see ``build_graph``)."""
        fill = codemap_service(self.rt).filling
        release_freed_memory()  # the fill's freed heap first: the graph's transients are the fill's peak
        # a request that needs this graph meanwhile waits for the cache's lock: the pause then ends
        self.graphs.get(index, pause=(lambda: fill.pause(self.graphs.wanted)) if fill is not None else lambda: None)
        index.definitions("")  # its name -> definers map too: the first build after the fill would make it
        release_freed_memory()

    def _rank(self, scored: dict[str, Scored], graph: Graph | None, files: list[FileInfo]) -> list[tuple[str, float]]:
        lexical = {k: s.lexical for k, s in scored.items() if s.lexical > 0}
        if not lexical:
            return []
        top = max(lexical.values())
        lex_norm = {k: v / top for k, v in lexical.items()}
        if graph is None:
            return best_first(lex_norm)
        shown_of, node_abs = self._node_paths(graph, files)
        seeds = dict(sorted(lex_norm.items(), key=lambda kv: -kv[1])[:SEEDS])
        r = rank_vector(graph, {shown_of[k]: v for k, v in seeds.items() if k in shown_of})
        pr_abs: dict[str, float] = {}
        if r is not None:
            idx = np.flatnonzero(r > MIN_RANK)
            for a, v in zip(node_abs[idx].tolist(), r[idx].tolist(), strict=True):
                if a is not None:
                    pr_abs[a] = v
        pr_top = max(pr_abs.values(), default=0.0) or 1.0
        keys = set(lex_norm) | set(pr_abs)
        combined = {
            k: LEXICAL_WEIGHT * lex_norm.get(k, 0.0) + (1 - LEXICAL_WEIGHT) * pr_abs.get(k, 0.0) / pr_top for k in keys
        }
        return best_first(combined)

    def _node_paths(self, graph: Graph, files: list[FileInfo]) -> tuple[dict[str, str], np.ndarray]:
        """abs → shown path of every file, and each graph node's abs path (None: not
        a walked file), kept while the graph and the walk's files are the same
        (two dicts of 13k paths per build otherwise)."""
        kept = self._paths  # dropped by build() when the walk finds other files
        if kept is not None and kept[0] is graph:
            return kept[1], kept[2]
        shown_of = {f.abs: f.shown for f in files}
        abs_of = {f.shown: f.abs for f in files}
        node_abs = np.array([abs_of.get(s) for s in graph.nodes], dtype=object)
        self._paths = (graph, shown_of, node_abs)
        return shown_of, node_abs

    def _measure_ranked(
        self,
        ranked: list[tuple[str, float]],
        scored: dict[str, Scored],
        query: Query,
        cm_svc: CodemapService,
        files: list[FileInfo],
        lifted: dict[str, str],
        stop: Callable[[], None],
    ) -> list[_Pending]:
        """The top candidates measured (``stop`` checked every 16: a cancelled build ends here)."""
        by_abs = {f.abs: f for f in files}
        pending: list[_Pending] = []
        for n, (key, score) in enumerate(ranked[:CANDIDATES]):
            if n % 16 == 0:
                stop()
            p = self._measure(key, score, scored.get(key), query, cm_svc, by_abs=by_abs, lifted=lifted.get(key))
            if p is not None:
                pending.append(p)
        return pending

    def _measure(
        self,
        key: str,
        score: float,
        s: Scored | None,
        query: Query,
        cm_svc: CodemapService,
        *,
        by_abs: dict[str, FileInfo],
        lifted: str | None = None,
    ) -> _Pending | None:
        """A candidate with the chunks to count (counted together by :meth:`_count`)."""
        info = by_abs.get(key)
        if info is None:
            return None
        ws = self.rt.workspace
        reasons = list(s.reasons) if s else []
        if s and s.term_scores:
            reasons.append("mentions " + ", ".join(t for t, _ in s.term_scores.most_common(3)))
        if lifted is not None:  # why pairing or the history lifted it
            reasons.append(lifted)
        if not reasons:
            reasons.append("linked by references to the files above")
        p = _Pending(Candidate(key, info.shown, score, reasons))
        text: str | None = None
        root = ws.containing_root(key)
        try:
            if root is not None:
                fb = read_bytes(key, info.shown, limit=MAX_READ_BYTES, root=root.path)
                if not fb.truncated:
                    text = decode_text(fb.data, info.shown)
        except (ToolError, OSError):  # unreadable, binary: it can still be listed by codemap or not at all
            text = None
        if text is not None:
            p.full = full_chunk(info.shown, text)
        cm: Codemap | None = None
        if root is not None:
            try:
                cm = cm_svc.codemap(root, root.relative(key))
            except (ToolError, OSError) as exc:  # unreadable now: the file stays a full/slices candidate
                log.debug("no codemap for %s: %s", info.shown, exc)
                cm = None
        if cm is not None:
            p.codemap_key = (info.shown, cm.language, cm.content_hash)
            p.codemap_tokens = self._codemap_tokens.get(p.codemap_key)
            if p.codemap_tokens is None:
                p.codemap = codemap_chunk(info.shown, cm_svc.render(cm))
        if text is not None:
            p.outline = outline_view(info.shown, text) if cm is None else None  # a doc page's codemap, in effect
            p.ranges = slice_ranges(text, query, cm)
            if p.ranges:
                p.slices = slices_chunk(info.shown, text, p.ranges)
        if p.full is None and p.codemap is None and p.codemap_tokens is None:
            return None
        return p

    def _count(self, pending: list[_Pending]) -> list[Candidate]:
        """Token costs of every candidate's chunks, in one batch (one cache
        lookup and one write for the whole build instead of three per file)."""
        texts = [t for p in pending for t in (p.full, p.codemap, p.slices, p.outline and p.outline[1]) if t]
        counts = iter(selection_service(self.rt).counter.count_many(texts))
        for p in pending:
            c = p.candidate
            c.full = next(counts) if p.full is not None else None
            c.codemap = next(counts) if p.codemap is not None else p.codemap_tokens
            if p.codemap_key is not None and c.codemap is not None:
                with self._lock:  # two builds may run at once
                    self._codemap_tokens[p.codemap_key] = c.codemap
                    self._codemap_tokens.move_to_end(p.codemap_key)  # least recently used ones go first
                    while len(self._codemap_tokens) > CODEMAP_TOKENS_KEPT:
                        self._codemap_tokens.popitem(last=False)
            if p.slices is not None:
                c.slices = (p.ranges, next(counts))
            if p.outline:
                c.outline = (p.outline[0], next(counts))
        return [p.candidate for p in pending]

    def _selection_of(self, choices: list[Choice]) -> Selection:
        sel = Selection(auto_codemaps=False)
        for c in choices:
            if c.mode == "omitted":
                continue
            mode = "codemap" if c.mode == "codemap" else c.mode
            sel.files[c.candidate.key] = SelectedFile(c.candidate.key, mode, c.ranges if mode == "slices" else ())
        return sel

    def _verify(self, choices: list[Choice], budget: int) -> tuple[list[Choice], int]:
        """Measure the real rendering; demote from the bottom until it fits."""
        svc = selection_service(self.rt)
        for _ in range(len(choices) * 3 + 1):
            bd = svc.breakdown(self._selection_of(choices), prompt="")
            total = sum(f.tokens for f in bd.files)
            if total <= budget:
                actual = {f.path: f.tokens for f in bd.files}
                for c in choices:
                    c.tokens = actual.get(c.candidate.key, 0) if c.mode != "omitted" else 0
                return choices, total
            for c in reversed(choices):
                if c.mode == "omitted":
                    continue
                c.mode = {
                    "full": "slices" if c.candidate.slices else "codemap",
                    "slices": "codemap",
                    "codemap": "omitted",
                }[c.mode]
                if c.mode == "codemap" and c.candidate.codemap is None:
                    c.mode = "omitted"
                c.ranges = c.candidate.slices[0] if c.mode == "slices" and c.candidate.slices else ()
                c.why += "; stepped down to fit the budget"
                break
        # unreachable: three step-downs per file empty the selection, which then fits
        raise AssertionError("budget fitting did not converge")  # pragma: no cover

    def _apply(self, choices: list[Choice]) -> None:
        items = [
            Item(c.candidate.key, "codemap" if c.mode == "codemap" else c.mode, c.ranges)
            for c in choices
            if c.mode != "omitted"
        ]
        selection_service(self.rt).set(items, auto_codemaps=False)


def inline_index_files() -> int:
    """Trees up to this many files are indexed whole before the first build
    ranks (seconds at most); larger ones parse their top candidates and fill
    the index in the background. ``TOOLDECK_CONTEXT_INLINE_INDEX`` overrides
    it (0: always the background fill, as the cold-build recall eval uses)."""
    env = os.environ.get("TOOLDECK_CONTEXT_INLINE_INDEX")
    if env is not None:
        try:
            return max(0, int(env))
        except ValueError:
            pass
    return INLINE_INDEX_FILES


def _filling_note(cm_svc: CodemapService) -> str:
    fill = cm_svc.filling
    progress = f" ({fill.done:,} of {fill.total:,} files)" if fill is not None and fill.total else ""
    return (
        f"the symbol index of this large tree is still being built in the background{progress}: this build "
        "ranked by content and path matches and the definitions and references of its top candidates; "
        "builds after it completes also follow references across the whole tree"
    )


def context_builder_service(rt: Runtime) -> ContextBuilder:
    return rt.service("context_builder", ContextBuilder)
