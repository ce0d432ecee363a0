"""Test <-> source pairing: a best-ranked file lifts its counterpart."""

from __future__ import annotations

from pathlib import Path

from tooldeck.context.builder import ContextBuilder
from tooldeck.context.pairs import PAIR_TOP, Pairs, lift_pairs, lift_test_pairs, side_of
from tooldeck.runtime import Runtime


def test_stems_strip_test_affixes_per_language_convention():
    assert side_of("tests/test_formatting.py").stem == "formatting"  # type: ignore[union-attr]
    assert side_of("src/terminal_test.go").is_test  # type: ignore[union-attr]
    assert side_of("src/terminal.go").is_test is False  # type: ignore[union-attr]
    assert side_of("web/button.spec.ts").stem == "button"  # type: ignore[union-attr]
    assert side_of("src/test/java/PagerTest.java").stem == "pager"  # type: ignore[union-attr]
    assert side_of("pkg/__init__.py") is None  # a generic stem says nothing
    assert side_of("Makefile") is None


def test_counterparts_prefer_the_same_directory_and_skip_common_stems():
    pairs = Pairs(
        (k, k)
        for k in [
            "src/a/terminal.go",
            "src/a/terminal_test.go",
            "src/b/terminal.go",
            "src/b/terminal_test.go",
            "src/click/formatting.py",
            "tests/test_formatting.py",
            *[f"pkg{i}/model.py" for i in range(5)],
            "tests/test_model.py",
        ]
    )
    assert pairs.counterparts("src/a/terminal.go") == ["src/a/terminal_test.go"]
    assert pairs.counterparts("src/b/terminal_test.go") == ["src/b/terminal.go"]
    assert pairs.counterparts("src/click/formatting.py") == ["tests/test_formatting.py"]
    assert pairs.counterparts("tests/test_formatting.py") == ["src/click/formatting.py"]
    assert pairs.counterparts("tests/test_model.py") == []  # five model.py: which one?


def test_lift_raises_counterparts_of_the_top_files_only():
    pairs = Pairs((k, k) for k in ["a.py", "test_a.py", "b.py", "test_b.py", "c.py"])
    ranked = [("a.py", 1.0), ("c.py", 0.8), ("b.py", 0.6), ("test_b.py", 0.1)]
    out, lifted = lift_pairs(ranked, pairs, top=2, weight=0.5)
    scores = dict(out)
    assert scores["test_a.py"] == 0.5 and lifted == {"test_a.py": "a.py"}
    assert scores["test_b.py"] == 0.1  # b.py is not among the top 2: its test stays where it was
    assert [k for k, _ in out] == ["a.py", "c.py", "b.py", "test_a.py", "test_b.py"]
    # never lowered: a counterpart already above the share keeps its score
    out, lifted = lift_pairs([("a.py", 1.0), ("test_a.py", 0.9)], pairs, top=2, weight=0.5)
    assert dict(out)["test_a.py"] == 0.9 and "test_a.py" not in lifted


def test_builder_brings_in_the_test_that_names_nothing_of_the_task(runtime: Runtime, root: Path) -> None:
    """The test drives the program through its command line: no word of the
    task, no reference to the source's names. Lexical ranking (and the
    reference graph) cannot find it; its pairing with the source does."""
    (root / "src").mkdir()
    (root / "tests").mkdir()
    (root / "src" / "billing.py").write_text("def render_invoice_total(lines):\n    return round(sum(lines), 2)\n")
    (root / "tests" / "test_billing.py").write_text(
        "import subprocess\n\n\ndef test_cli():\n    out = subprocess.run(['tool', 'x'], capture_output=True)\n"
        "    assert out.returncode == 0\n"
    )
    for i in range(6):  # decoys that share the task's words, to fill a small budget
        (root / "src" / f"ledger{i}.py").write_text(
            f"def ledger_{i}(invoice):\n    # the invoice total, rounded\n    return invoice\n" * 3
        )
    task = "render_invoice_total rounds the invoice total wrongly"
    builder = ContextBuilder(runtime)
    lexical = {c.candidate.shown for c in builder.build(task, 400, strategy="lexical", apply=False).selected}
    graph = builder.build(task, 400, apply=False)
    chosen = {c.candidate.shown: c for c in graph.selected}
    assert not any(p.endswith("test_billing.py") for p in lexical)
    test_choice = next(c for p, c in chosen.items() if p.endswith("test_billing.py"))
    assert any("paired with billing.py" in r for r in test_choice.candidate.reasons)


def test_indexing_only_the_top_stems_gives_the_same_lift_as_indexing_all():
    rels = [(f"/r/{p}", p) for p in ["src/a.py", "tests/test_a.py", "src/b.py", "tests/test_b.py", "src/c.go"]]
    rels += [(f"/r/pkg{i}/a.py", f"pkg{i}/a.py") for i in range(2)]  # three a.py: still few enough to pair
    rels += [(f"/r/src/c_{i}.go", f"src/c_{i}.go") for i in range(50)]
    ranked = [(k, 1.0 / (i + 1)) for i, (k, _) in enumerate(rels) if not k.startswith("/r/tests/")]
    full = lift_pairs(ranked, Pairs(rels), top=PAIR_TOP)
    assert lift_test_pairs(ranked, rels) == full
    assert full[1] == {"/r/tests/test_a.py": "/r/src/a.py", "/r/tests/test_b.py": "/r/src/b.py"}


def test_best_first_orders_as_the_key_function_does() -> None:
    import random

    from tooldeck.context.pairs import best_first

    rnd = random.Random(2)
    for _ in range(50):
        scores = {f"k{rnd.randint(0, 999)}": rnd.choice([0.0, 0.5, 1.0, rnd.random()]) for _ in range(200)}
        assert best_first(scores) == sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
