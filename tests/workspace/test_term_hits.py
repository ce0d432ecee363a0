"""term_hits: one rg pass counts each term (case-insensitive, whole word) per
file, each term's count capped at ``max_per_file``."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import pytest

from tests.support.require import require
from tooldeck.workspace import ripgrep
from tooldeck.workspace.ignore import IgnoreRules

WORDS = "order node Query cursor capture nested pattern wrong retry pool fixture setup".split()
FILLER = ["filler", "text", "ORDER", "Node", "orders", "node_id", "NoDe", "x.order", "(pool)"]


@pytest.fixture
def tree(root: Path) -> Path:
    rnd = random.Random(4)
    for i in range(30):
        lines = []
        for _ in range(rnd.randint(5, 200)):  # some files have far more than the cap's matching lines
            lines.append(" ".join(rnd.choice([*WORDS, *FILLER]) for _ in range(6)))
        (root / f"f{i}.txt").write_text("\n".join(lines) + "\n")
    return root


def expected(root: Path, terms: list[str], cap: int) -> dict[str, Counter[str]]:
    """The definition: every whole-word match in the file, each term's count capped at ``cap``."""
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, terms)) + r")\b", re.IGNORECASE)
    canon = {t.lower(): t for t in terms}
    out: dict[str, Counter[str]] = {}
    for path in sorted(root.glob("*.txt")):
        counts = Counter(canon[m.lower()] for m in pattern.findall(path.read_text()))
        if counts:
            out[path.name] = Counter({t: min(n, cap) for t, n in counts.items()})
    return out


@pytest.mark.parametrize("cap", [16, 64, 1000])
def test_counts_equal_the_definition(tree: Path, cap: int) -> None:
    if ripgrep.find_rg() is None:
        require("rg")
    terms = [w.lower() if i % 2 else w for i, w in enumerate(WORDS)]  # 12 terms, any case
    got = ripgrep.term_hits(IgnoreRules(str(tree)), terms, max_per_file=cap)
    assert got == expected(tree, terms, cap)
    assert any(len(c) > 6 for c in got.values())


def test_a_search_runs_while_the_caller_works(tree: Path) -> None:
    """TermSearch starts rg at once and gives term_hits' counts when collected."""
    if ripgrep.find_rg() is None:
        require("rg")
    rules = IgnoreRules(str(tree))
    search = ripgrep.TermSearch(rules, WORDS, max_per_file=16)
    assert search.result() == ripgrep.term_hits(rules, WORDS, max_per_file=16)
    assert ripgrep.TermSearch(rules, []).result() == {}


def test_the_python_fallback_counts_the_same_words(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without rg the counts come from Python, capped the same way."""
    monkeypatch.setattr(ripgrep, "find_rg", lambda: None)
    got = ripgrep.term_hits(IgnoreRules(str(tree)), WORDS, max_per_file=16)
    assert got == expected(tree, WORDS, 16)


def test_a_search_needs_no_unicode_folding(root: Path) -> None:
    """Case and word boundaries are ASCII: the Kelvin sign is not a k."""
    if ripgrep.find_rg() is None:
        require("rg")
    (root / "a.txt").write_text("Kelvin \u212aelvin kelvin KELVIN\n")
    assert ripgrep.term_hits(IgnoreRules(str(root)), ["kelvin"]) == {"a.txt": Counter({"kelvin": 3})}


def test_an_rg_that_refuses_the_search_falls_back_to_python(
    tree: Path, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An rg that exits with an error and prints nothing (an older rg without
    one of the flags) gives the Python counts, not an empty result."""
    fake = root.parent / "old-rg"
    fake.write_text("#!/bin/sh\necho 'unknown flag' >&2\nexit 2\n")
    fake.chmod(0o755)
    monkeypatch.setattr(ripgrep, "find_rg", lambda: str(fake))
    got = ripgrep.term_hits(IgnoreRules(str(tree)), WORDS, max_per_file=1000)
    assert got == expected(tree, WORDS, 1000) and got


def test_a_word_after_many_matching_lines_still_counts(root: Path) -> None:
    """The cap is per word: a word that first occurs after a hundred lines
    matching another is counted (a per-file line cap missed it)."""
    if ripgrep.find_rg() is None:
        require("rg")
    (root / "long.py").write_text("order = 1\n" * 100 + "retry()\n" * 3)
    got = ripgrep.term_hits(IgnoreRules(str(root)), ["order", "retry"], max_per_file=64)
    assert got == {"long.py": Counter({"order": 64, "retry": 3})}


def test_counted_adds_a_files_lines_wherever_they_come() -> None:
    """rg's lines are counted per (file, spelling); a file's lines usually
    come together, but one that comes back later adds to the same counts."""
    matches = Counter(
        {
            b"./a.txt\0Node": 2,
            b"./a.txt\0node": 3,
            b"b.txt\0ORDER": 1,
            b"./a.txt\0NODE": 4,
            b"b.txt\0order": 70,
            b"b.txt\0other": 5,
            b"no separator": 9,
        }
    )
    got = ripgrep._counted(matches, {"node": "node", "order": "Order"}, 64)
    assert got == {"a.txt": Counter({"node": 9}), "b.txt": Counter({"Order": 64})}
