"""Building indexes: incremental by content hash, deletions, concurrent
searches during a rebuild, the path rules."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.index.indexkit import CODE, DOCS, CountingEmbedder, write_tree
from tooldeck.core.errors import ToolError
from tooldeck.index.chunk_markdown import chunk_markdown
from tooldeck.index.service import IndexService
from tooldeck.index.views import VIEWS
from tooldeck.runtime import Runtime


@pytest.fixture
def svc(root: Path, state_dir: Path) -> IndexService:
    write_tree(root / "docs", DOCS)
    write_tree(root / "src", CODE)
    return IndexService(Runtime.for_dirs([root], state_dir=state_dir), CountingEmbedder())


def embedded(svc: IndexService) -> list[str]:
    return svc.embedder.texts  # type: ignore[attr-defined,no-any-return]


def test_reindex_embeds_only_the_changed_file(svc: IndexService, root: Path) -> None:
    first = svc.build_markdown("docs", "docs")
    total = sum(len(chunk_markdown(rel, text)) for rel, text in DOCS.items())
    assert first.files == 3 and first.chunks == total and first.chunks_embedded == total
    assert len(embedded(svc)) == VIEWS * total  # each chunk's vector sums the vectors of its views

    again = svc.build_markdown("docs", "docs")
    assert again.files_changed == 0 and again.chunks_embedded == 0 and len(embedded(svc)) == VIEWS * total

    (root / "docs" / "install.md").write_text(DOCS["install.md"] + "\n## Upgrading\n\nRun pip install -U.\n")
    before = len(embedded(svc))
    third = svc.build_markdown("docs", "docs")
    new_texts = embedded(svc)[before:]
    assert third.files_changed == 1 and third.chunks == total + 1
    # only the changed file's new section is embedded; its unchanged sections keep their vectors
    assert third.chunks_embedded == 1 and len(new_texts) == VIEWS and "Upgrading" in new_texts[0]
    hits = svc.search("docs", "upgrading with pip install -U", 3)
    assert hits[0].chunk.path == "install.md" and "Upgrading" in hits[0].chunk.title


def _on_disk(svc: IndexService, name: str) -> dict[str, float]:
    """Every entry of the index's folder with its modification time."""
    d = svc.layout.dir(name)
    return {str(p.relative_to(d)): p.stat().st_mtime_ns for p in sorted(d.rglob("*"))}


def test_a_no_op_rebuild_keeps_the_generation(svc: IndexService, root: Path) -> None:
    """Nothing changed: the live generation is the rebuild's result, and nothing
    is written (a new generation would cost a full write and evict the one a
    concurrent search may still hold)."""
    first = svc.build_markdown("docs", "docs")
    live, files = svc.layout.current("docs"), _on_disk(svc, "docs")
    again = svc.build_markdown("docs", "docs")
    assert again.generation == first.generation and again.chunks == first.chunks
    assert svc.layout.current("docs") == live and _on_disk(svc, "docs") == files
    (root / "docs" / "install.md").write_text(DOCS["install.md"] + "\n## More\n\nText.\n")
    third = svc.build_markdown("docs", "docs")
    assert third.generation != first.generation and svc.layout.current("docs") != live


def test_deleted_file_leaves_the_index(svc: IndexService, root: Path) -> None:
    svc.build_markdown("docs", "docs")
    assert any(h.chunk.path == "guide/colors.md" for h in svc.search("docs", "colored text terminal styles", 5))
    (root / "docs" / "guide" / "colors.md").unlink()
    report = svc.build_markdown("docs", "docs")
    assert report.files_removed == 1 and report.chunks_embedded == 0 and report.files == 2
    for mode in ("hybrid", "lexical", "dense"):
        hits = svc.search("docs", "colored text terminal styles", 10, mode)  # type: ignore[arg-type]
        assert all(h.chunk.path != "guide/colors.md" for h in hits)
        assert hits or mode == "lexical"  # no word of the query is left in the other files


def test_code_index_hits_carry_path_lines_and_symbol(svc: IndexService) -> None:
    report = svc.build_code("src", "code")
    assert report.files == 2 and report.chunks >= 7
    hit = svc.search("code", "refuse a port number over 65535", 3)[0]
    assert (hit.chunk.path, hit.chunk.symbol, hit.chunk.start_line) == ("pkg/server.py", "parse_port", 21)
    hit = svc.search("code", "close the listening socket", 3)[0]
    assert hit.chunk.symbol == "Server.shutdown"
    assert svc.search("code", "addItem cart", 1)[0].chunk.symbol == "Cart.addItem"


def test_search_during_rebuilds_sees_a_consistent_index(svc: IndexService, root: Path) -> None:
    for i in range(150):
        write_tree(root / "docs" / "more", {f"page{i}.md": f"# Page {i}\n\nFiller about topic number {i}.\n"})
    svc.build_markdown("docs", "docs")
    errors: list[BaseException] = []
    results: list[int] = []
    done = threading.Event()

    def searcher() -> None:
        other = IndexService(svc.rt, svc.embedder)  # another reader, no shared cache
        while not done.is_set():
            try:
                hits = other.search("docs", "mark an option as required", 5)
                results.append(len(hits))
                assert hits[0].chunk.path == "guide/options.md"
            except BaseException as exc:
                errors.append(exc)
                return

    threads = [threading.Thread(target=searcher) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        for i in range(6):
            (root / "docs" / "more" / f"page{i}.md").write_text(f"# Page {i}\n\nChanged {i} times.\n")
            svc.build_markdown("docs", "docs")
    finally:
        done.set()
        for t in threads:
            t.join()
    assert not errors, errors[0]
    assert len(results) > 6 and all(n == 5 for n in results)
    gens = sorted(p.name for p in svc.layout.dir("docs").glob("gen-*"))
    assert len(gens) == 2  # the live one and the one before it; older ones are gone


def test_a_root_outside_the_workspace_is_refused(svc: IndexService, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    write_tree(outside, DOCS)
    with pytest.raises(ToolError) as exc:
        svc.build_markdown(str(outside), "docs")
    assert exc.value.code == "outside_roots"
    with pytest.raises(ToolError) as exc:
        svc.build_code("../elsewhere", "code")
    assert exc.value.code == "outside_roots"
    assert not svc.layout.dir("docs").exists() or svc.layout.current("docs") is None


def test_ignored_files_are_not_indexed(svc: IndexService, root: Path) -> None:
    (root / ".gitignore").write_text("docs/guide/\n")
    report = svc.build_markdown("docs", "docs")
    assert report.files == 1


def test_bad_index_names_are_refused(svc: IndexService) -> None:
    for bad in ("../x", "", "a/b", "x" * 200):
        with pytest.raises(ToolError) as exc:
            svc.build_markdown("docs", bad)
        assert exc.value.code == "invalid_arguments"
