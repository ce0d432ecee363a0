"""A codemap's CPU per file beside bare tree-sitter's, parse included, in one process.

``bench/codemap_bench.py`` compares whole processes (start-up, reading,
parsing, storing), which on a shared 2-core machine moves by more than a
round of extraction work is worth. This script isolates the part tooldeck
controls, on the same distinct-content corpora, file by file and interleaved
(so both sides see the same load): the baseline parses the file's bytes with
tree-sitter and runs the grammar wheel's ``TAGS_QUERY`` captures; tooldeck
runs ``pool.extract_one`` (its own parse, of the text with function bodies
hollowed out where it can — see ``codemap/hollow.py`` — then the outline
query, symbols and signatures, imports, references, the encoded blob).
Printed: ms per file of each side and their ratio, min/median/max over
``--reps`` passes.

The codemap goal (CPU per file <= 1.0x parse + tags query) holds when this
ratio, plus reading/hashing/storing (~0.1 ms per file), stays under 1.0.

Usage: ``python bench/codemap_extract_cost.py [--files 800] [--per-language 150] [--reps 5]``
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import codemap_bench  # the corpus builder, shared


def measure(tree: Path, reps: int) -> tuple[list[float], list[float], int]:
    """(baseline ms/file per pass, tooldeck ms/file per pass, files)."""
    import tree_sitter

    from tooldeck.codemap import grammars, pool
    from tooldeck.codemap.languages import language_for

    items = [(language, p.read_bytes()) for p in sorted(tree.rglob("*")) if (language := language_for(p.name))]
    bare: dict[str, tuple[object, object]] = {}
    for language in {language for language, _ in items}:
        module = importlib.import_module(grammars.spec(language).module)
        lang = grammars.language(language)
        bare[language] = (tree_sitter.Parser(lang), tree_sitter.Query(lang, module.TAGS_QUERY))
    pool.extract_group(items)  # queries compiled, kinds learnt: steady state
    clock = time.process_time
    cursor = tree_sitter.QueryCursor
    base_ms: list[float] = []
    tdk_ms: list[float] = []
    for _ in range(reps):
        t_base = t_tdk = 0.0
        for language, data in items:
            parser, query = bare[language]
            t0 = clock()
            cursor(query).captures(parser.parse(data).root_node)  # type: ignore[attr-defined]
            t1 = clock()
            pool.extract_one(language, data)
            t2 = clock()
            t_base += t1 - t0
            t_tdk += t2 - t1
        base_ms.append(1000 * t_base / len(items))
        tdk_ms.append(1000 * t_tdk / len(items))
    return base_ms, tdk_ms, len(items)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--files", type=int, default=800, help="distinct Python files")
    ap.add_argument("--per-language", type=int, default=150, help="distinct files per language, mixed corpus")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--corpus", choices=("python", "mixed", "both"), default="both")
    ns = ap.parse_args()
    print(f"CPU ms per file, parse included, min/median/max of {ns.reps} passes")
    print(f"{'corpus':<10}{'files':>7}{'parse + tags query':>22}{'tooldeck extract_one':>24}{'ratio (medians)':>17}")
    with tempfile.TemporaryDirectory(prefix="codemap-extract-") as tmp:
        for name in ("python", "mixed") if ns.corpus == "both" else (ns.corpus,):
            tree = Path(tmp) / name
            codemap_bench.build_corpus(name, tree, ns.files, ns.per_language)
            base_ms, tdk_ms, n = measure(tree, ns.reps)
            ratio = statistics.median(tdk_ms) / statistics.median(base_ms)
            base, tdk = codemap_bench.spread(base_ms, 3), codemap_bench.spread(tdk_ms, 3)
            print(f"{name:<10}{n:>7}{base:>22}{tdk:>24}{ratio:>17.2f}")


if __name__ == "__main__":
    main()
