"""IndexService: the one object tools (and the CLI) use for indexes.

Built once per process (``rt.service("index", IndexService)``). It knows
where indexes live (:func:`index_dir`), which embedding provider the
user configured, how to turn a folder or a package into chunks, and keeps the
live generation of each index open between searches (reopened when a build
publishes a new one). Each successful build is recorded in the store
(``index_registry``) so indexes can be listed with their description.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooldeck.codemap.extract import extract
from tooldeck.codemap.languages import has_codemap, language_for
from tooldeck.config import load_config
from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.index import build as builder
from tooldeck.index.chunk_code import chunk_code
from tooldeck.index.chunk_markdown import chunk_markdown, is_doc
from tooldeck.index.chunk_pydoc import chunk_pydoc
from tooldeck.index.embed import Embedder, embedder_from_config, query_vectors
from tooldeck.index.layout import Layout, check_name
from tooldeck.index.model import BuildReport, Chunk, Hit
from tooldeck.index.search import Mode, OpenIndex
from tooldeck.index.sources import folder_source, package_source
from tooldeck.state.index_registry import IndexRecord, IndexRegistry

if TYPE_CHECKING:
    from tooldeck.runtime import Runtime

HOW_TO_BUILD = {
    "markdown": 'index_markdown_docs {{"root": "<docs folder>", "index_name": "{name}"}} '
    "(CLI: tooldeck index docs FOLDER --name {name})",
    "code": 'index_code {{"folder": "<source folder>", "index_name": "{name}"}} '
    "(CLI: tooldeck index code FOLDER --name {name})",
    "pydoc": "pydoc_search builds it by itself on first use",
}
Progress = builder.Progress


def _code_chunker(rel: str, text: str, data: bytes) -> list[Chunk]:
    lang = language_for(rel)
    if lang is None:
        return []
    try:
        symbols = extract(lang, data).symbols
    except Exception:  # a grammar failing on one odd file must not fail the whole build
        symbols = []
    return chunk_code(rel, text, symbols)


INDEX_DIR_KEY = "index_dir"  # in rt.settings: the folder a host was given (--index-dir)


def index_dir(rt: Runtime) -> Path:
    """Where indexes live: the folder the person gave the host
    (``tooldeck index --index-dir DIR``, in ``rt.settings``), else ``dir``
    under ``[index]`` in the person's own config file (a project file never
    sets ``[index]``), relative to the first root (ochat's ``.md_index``
    habit), else ``<state_dir>/indexes``. Never a tool argument: a model
    names an index, not where it is written."""
    given = rt.settings.get(INDEX_DIR_KEY)
    if given is None:
        given = load_config(None).section("index").get("dir")
        if given is not None and (not isinstance(given, str) or not given.strip()):
            raise ToolError(
                ErrorCode.INVALID_ARGUMENTS, f"[index] dir in the user config must be a path, not {given!r}"
            )
    if not given:
        return rt.state_dir / "indexes"
    path = Path(os.path.expanduser(str(given)))
    return Path(os.path.abspath(path if path.is_absolute() else Path(rt.workspace.primary.path) / path))


class IndexService:
    def __init__(self, rt: Runtime, embedder: Embedder | None = None) -> None:
        self.rt = rt
        self.layout = Layout(index_dir(rt))
        self._embedder = embedder
        self._open: dict[str, OpenIndex] = {}
        self._lock = threading.Lock()
        self._registry: IndexRegistry | None = None  # migrated on the first build

    # providers -----------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            # the user's file only: a project file must not choose where code is sent
            self._embedder = embedder_from_config(load_config(None).section("index"))
        return self._embedder

    # building --------------------------------------------------------------
    def build_markdown(
        self, folder: str, name: str, description: str = "", progress: Progress | None = None, check: Any = None
    ) -> BuildReport:
        src = folder_source(self.rt.workspace, folder, is_doc, "root")
        spec = builder.BuildSpec(check_name(name), "markdown", src.folder.abs, description)
        return self._build(
            spec, src.files, src.loader(), lambda rel, text, _d: chunk_markdown(rel, text), progress, check
        )

    def build_code(
        self, folder: str, name: str, description: str = "", progress: Progress | None = None, check: Any = None
    ) -> BuildReport:
        src = folder_source(self.rt.workspace, folder, has_codemap, "folder")
        spec = builder.BuildSpec(check_name(name), "code", src.folder.abs, description)
        return self._build(spec, src.files, src.loader(), _code_chunker, progress, check)

    def ensure_pydoc(self, package: str, progress: Progress | None = None) -> tuple[str, BuildReport | None]:
        """The pydoc index of ``package``, (re)built when the installed version changed."""
        src = package_source(package)
        name = check_name(f"pydoc:{package}")
        stamp = f"{src.base / src.files[0] if src.files else src.base}@{src.version}"
        live = self.layout.current(name)
        if live is not None:
            man = self.layout.current_manifest_of_dir(live.parent) or {}
            if man.get("source") == stamp and man.get("model") == self.embedder.model_id:
                return name, None
        spec = builder.BuildSpec(name, "pydoc", stamp, f"docstrings of {src.name} {src.version}")
        report = self._build(
            spec, src.files, src.loader(), lambda rel, text, _d: chunk_pydoc(rel, text), progress, None
        )
        return name, report

    def _build(
        self,
        spec: builder.BuildSpec,
        files: list[str],
        load: builder.Loader,
        chunker: builder.Chunker,
        progress: Progress | None,
        check: Callable[[], None] | None,
    ) -> BuildReport:
        report = builder.build_index(
            self.layout, spec, files, load, chunker, self.embedder, progress or builder._noop, check or (lambda: None)
        )
        self._record(spec, report)
        return report

    def _record(self, spec: builder.BuildSpec, report: BuildReport) -> None:
        if self._registry is None:
            self._registry = IndexRegistry(self.rt.store)
        self._registry.record(
            IndexRecord(
                spec.name,
                spec.kind,
                spec.source,
                spec.description,
                report.model,
                report.generation,
                report.files,
                report.chunks,
            )
        )

    # searching -------------------------------------------------------------
    def open(self, name: str, kind: str | None = None) -> OpenIndex:
        """The live generation of ``name`` (cached until a build publishes another)."""
        check_name(name, "index")
        live = self.layout.current(name)
        if live is None:
            how = HOW_TO_BUILD.get(kind or "markdown", HOW_TO_BUILD["markdown"]).format(name=name)
            known = [n for n in self.layout.names() if not n.startswith("pydoc:")]
            also = f" Existing indexes: {', '.join(known)}." if known else ""
            raise ToolError(ErrorCode.NOT_FOUND, f"no index named {name!r}; build it first with {how}.{also}")
        with self._lock:
            idx = self._open.get(name)
            if idx is None or idx.dir != live:
                idx = self._open[name] = OpenIndex(live)
        if kind is not None and idx.kind != kind:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENTS,
                f"index {name!r} is a {idx.kind} index, not a {kind} index; search it with "
                f"{'markdown_search' if idx.kind == 'markdown' else 'query_vector_db'}",
            )
        return idx

    def search(self, name: str, query: str, k: int, mode: Mode = "hybrid", kind: str | None = None) -> list[Hit]:
        idx = self.open(name, kind)
        qv = None
        if mode != "lexical":
            model = self.embedder.model_id
            if idx.model_id != model:
                how = HOW_TO_BUILD.get(idx.kind, HOW_TO_BUILD["markdown"]).format(name=name)
                raise ToolError(
                    ErrorCode.MODEL_MISMATCH,
                    f"index {name!r} was built with the embedding model {idx.model_id}, but the configured model "
                    f"is {model}; vectors of two models are not comparable. Rebuild it with {how}, or switch "
                    '[index] embeddings back in the config (or search with mode "lexical")',
                )
            qv = query_vectors(self.embedder, [query])[0]
        return idx.search(query, k, mode, qv)

    def indexes(self) -> list[dict[str, Any]]:
        """Manifests (without the file table) of every built index."""
        out = []
        for d in sorted(self.layout.base.iterdir()) if self.layout.base.is_dir() else []:
            man = self.layout.current_manifest_of_dir(d)
            if man is not None:
                man.pop("files", None)
                out.append(man)
        return out


def index_service(rt: Runtime) -> IndexService:
    return rt.service("index", IndexService)
