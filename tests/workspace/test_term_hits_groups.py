"""term_hits splits many case-insensitive terms over concurrent rg processes
(rg drops its literal prefilter past ~10 of them) and merges their numbered
matches into exactly the counts of one pass, the 64-line cap included."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tooldeck.workspace import ripgrep
from tooldeck.workspace.ignore import IgnoreRules

WORDS = "order node Query cursor capture nested pattern wrong retry pool fixture setup".split()


@pytest.fixture
def tree(root: Path) -> Path:
    rnd = random.Random(4)
    for i in range(30):
        lines = []
        for _ in range(rnd.randint(5, 200)):  # some files have far more than 64 matching lines
            words = [rnd.choice([*WORDS, "filler", "text", "ORDER", "Node", "orders", "node_id"]) for _ in range(6)]
            lines.append(" ".join(words))
        (root / f"f{i}.txt").write_text("\n".join(lines) + "\n")
    return root


def test_grouped_counts_equal_one_pass(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if ripgrep.find_rg() is None:
        pytest.skip("rg not installed")
    rules = IgnoreRules(str(tree))
    terms = [w.lower() if i % 2 else w for i, w in enumerate(WORDS)]
    grouped = ripgrep.term_hits(rules, terms, max_per_file=16)
    monkeypatch.setattr(ripgrep, "GROUP_TERMS", 1000)
    single = ripgrep.term_hits(rules, terms, max_per_file=16)
    assert grouped == single
    assert any(sum(c.values()) > 16 for c in single.values())  # the cap was reached somewhere
    assert any(len(c) > 6 for c in single.values())  # terms of several groups counted in one file


def test_groups_really_run_and_terms_with_dots_stay_in_one_pass(tree: Path, monkeypatch) -> None:
    if ripgrep.find_rg() is None:
        pytest.skip("rg not installed")
    seen: list[list[list[str]]] = []
    real = ripgrep._run_rg

    def spy(exe, rules, groups, max_per_file, timeout):  # type: ignore[no-untyped-def]
        seen.append(groups)
        return real(exe, rules, groups, max_per_file, timeout)

    monkeypatch.setattr(ripgrep, "_run_rg", spy)
    rules = IgnoreRules(str(tree))
    ripgrep.term_hits(rules, WORDS)
    ripgrep.term_hits(rules, [*WORDS, "node.id"])
    assert [len(g) for g in seen[0]] == [6, 6] and sorted(t for g in seen[0] for t in g) == sorted(WORDS)
    assert len(seen[1]) == 1  # a dotted term may overlap a word's match: no split
