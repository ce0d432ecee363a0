"""What a codemap costs beyond the parse, beside what the bare tags query costs.

``bench/codemap_bench.py`` compares whole processes (start-up, reading,
parsing, storing), which on a shared 2-core machine moves by more than a
round of extraction work is worth. This script isolates the part tooldeck
controls: each file of the same distinct-content corpora is parsed ONCE
beforehand, then, file by file and interleaved (so both sides see the same
load), the grammar wheel's ``TAGS_QUERY`` captures run on that tree, and
tooldeck's extraction (outline query, symbols and signatures, imports,
references, the encoded blob: ``pool.extract_one``) runs on the same tree
(``grammars.parse`` answers from the parsed trees, so no second parse is
counted). Printed: ms per file of each side and their ratio, min/median/max
over ``--reps`` passes.

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
    """(tags ms/file per pass, extraction ms/file per pass, files)."""
    import tree_sitter

    from tooldeck.codemap import grammars, pool
    from tooldeck.codemap.languages import language_for

    items = [(language, p.read_bytes()) for p in sorted(tree.rglob("*")) if (language := language_for(p.name))]
    trees = {id(data): grammars.parse(language, data) for language, data in items}
    parse = grammars.parse
    grammars.parse = lambda _language, data: trees[id(data)]  # type: ignore[assignment]
    try:
        tags = {}
        for language in {language for language, _ in items}:
            module = importlib.import_module(grammars.spec(language).module)
            tags[language] = tree_sitter.Query(grammars.language(language), module.TAGS_QUERY)
        pool.extract_group(items)  # queries compiled, kinds learnt: steady state
        clock = time.process_time
        cursor = tree_sitter.QueryCursor
        tag_ms: list[float] = []
        ext_ms: list[float] = []
        for _ in range(reps):
            t_tags = t_ext = 0.0
            for language, data in items:
                t0 = clock()
                cursor(tags[language]).captures(trees[id(data)].root_node)
                t1 = clock()
                pool.extract_one(language, data)
                t2 = clock()
                t_tags += t1 - t0
                t_ext += t2 - t1
            tag_ms.append(1000 * t_tags / len(items))
            ext_ms.append(1000 * t_ext / len(items))
        return tag_ms, ext_ms, len(items)
    finally:
        grammars.parse = parse  # type: ignore[assignment]


def spread(xs: list[float], digits: int = 3) -> str:
    return "/".join(f"{x:.{digits}f}" for x in (min(xs), statistics.median(xs), max(xs)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--files", type=int, default=800, help="distinct Python files")
    ap.add_argument("--per-language", type=int, default=150, help="distinct files per language, mixed corpus")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--corpus", choices=("python", "mixed", "both"), default="both")
    ns = ap.parse_args()
    print(f"ms per file, min/median/max of {ns.reps} passes; trees parsed beforehand (parse not counted)")
    print(f"{'corpus':<10}{'files':>7}{'tags query':>22}{'tooldeck extraction':>24}{'ratio (medians)':>17}")
    with tempfile.TemporaryDirectory(prefix="codemap-extract-") as tmp:
        for name in ("python", "mixed") if ns.corpus == "both" else (ns.corpus,):
            tree = Path(tmp) / name
            codemap_bench.build_corpus(name, tree, ns.files, ns.per_language)
            tag_ms, ext_ms, n = measure(tree, ns.reps)
            ratio = statistics.median(ext_ms) / statistics.median(tag_ms)
            print(f"{name:<10}{n:>7}{spread(tag_ms):>22}{spread(ext_ms):>24}{ratio:>17.2f}")


if __name__ == "__main__":
    main()
