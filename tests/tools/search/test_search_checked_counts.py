"""The page pass runs while the files the engine counted are checked
(regular files reached from the root without a link): a page picked from a
name that fails the check is picked again, and the totals leave it out.
The engine here reports what a ripgrep fooled by a swapped link could."""

from __future__ import annotations

from pathlib import Path

from tooldeck.tools.search.content import count_matches, page_blocks
from tooldeck.tools.search.model import ContentQuery, Line
from tooldeck.tools.search.scope import Target
from tooldeck.workspace.roots import Root, make_root


class LyingEngine:
    """Counts ``a/link.txt`` (a link, not a regular file) before the real files."""

    name = "lying"

    def __init__(self) -> None:
        self.pages: list[list[str]] = []

    def count(self, target: Target, q: ContentQuery) -> tuple[list[tuple[str, int]], list[str]]:
        return [("b/real.txt", 2), ("a/link.txt", 3), ("c/real.txt", 1)], []

    def lines(self, root: Root, q: ContentQuery, rels: list[str], max_count: int) -> dict[str, list[Line]]:
        self.pages.append(list(rels))
        out: dict[str, list[Line]] = {}
        for rel in rels:
            text = (Path(root.path) / rel).read_text().splitlines()
            out[rel] = [Line(i + 1, t, True) for i, t in enumerate(text) if "needle" in t][:max_count]
        return out


def test_a_counted_name_that_is_not_a_regular_file_is_left_out_and_the_page_picked_again(tmp_path: Path) -> None:
    root_dir = tmp_path / "root"
    for folder in ("a", "b", "c"):
        (root_dir / folder).mkdir(parents=True)
    (root_dir / "b" / "real.txt").write_text("needle 1\nneedle 2\n")
    (root_dir / "c" / "real.txt").write_text("needle 3\n")
    (tmp_path / "outside.txt").write_text("needle secret\nneedle secret\nneedle secret\n")
    (root_dir / "a" / "link.txt").symlink_to(tmp_path / "outside.txt")
    engine = LyingEngine()
    target = Target(0, make_root(root_dir))
    search = count_matches(engine, [target], ContentQuery("needle", literal=True))
    blocks = page_blocks(engine, [target], search, 0, 2)
    assert [fc.rel for fc in search.counts.files] == ["b/real.txt", "c/real.txt"]
    assert search.counts.total == 3
    assert [(b.rel, [ln.text for ln in b.lines]) for b in blocks] == [("b/real.txt", ["needle 1", "needle 2"])]
    assert engine.pages[0] == ["a/link.txt"]  # picked before the check ended, then picked again
    assert engine.pages[-1] == ["b/real.txt"]
