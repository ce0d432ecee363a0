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

``--split`` also times each stage of the extraction on its own (the same
steps as ``extract.extract_rows``, spelt out here with a clock between them;
each file's blob is checked equal to ``pool.extract_one``'s, so the split
cannot drift from the real code unnoticed): the outline query's first pass
(engine and the Python that reads its matches), the deeper passes, symbols
and signatures, imports, the lexer's blanking, the reference words, the
JSON blob.

Usage: ``python bench/codemap_extract_cost.py [--files 800] [--per-language 150] [--reps 5] [--split]``
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


STAGES = ("first pass", "deeper passes", "symbols", "imports", "blank", "words", "blob")


def split_one(language: str, data: bytes, acc: list[float]) -> str:
    """``extract_one`` stage by stage (CPU seconds added to ``acc`` in
    ``STAGES`` order); returns the blob."""
    from tooldeck.codemap import extract as x
    from tooldeck.codemap import grammars, lexer
    from tooldeck.codemap.blob import encode_rows

    clock = time.process_time
    t0 = clock()
    root = grammars.parse(language, data).root_node
    query, spec = grammars.definitions_query(language), grammars.spec(language)
    defs: dict = {}
    imports: list = []
    kinds = x._KINDS.setdefault(language, {})
    deep = x._collect(query, root, spec, defs, imports, kinds, data)
    t1 = clock()
    done: set[int] = set()
    while deep:
        node = deep.pop()
        if node.start_byte not in done:
            done.add(node.start_byte)
            deep.extend(x._collect(query, node, spec, defs, imports, kinds, data))
    t2 = clock()
    rows = x._symbols(sorted(defs.values(), key=x._BY_POSITION), data, spec)
    t3 = clock()
    names = x._imports(imports, data, spec)
    t4 = clock()
    if lexer.has_lexer(language):
        code, skips = lexer.blank(language, data), []
    else:
        code, skips = data, [(n.start_byte, n.end_byte) for n in grammars.skip_captures(language, root)]
    t5 = clock()
    refs = x._references(code, skips)
    t6 = clock()
    blob = encode_rows(names, rows, refs, x.count_lines(data))
    t7 = clock()
    for i, (a, b) in enumerate(((t0, t1), (t1, t2), (t2, t3), (t3, t4), (t4, t5), (t5, t6), (t6, t7))):
        acc[i] += b - a
    return blob


def measure_split(tree: Path, reps: int) -> tuple[list[list[float]], int]:
    """Per stage, ms per file of each pass (trees parsed beforehand)."""
    from tooldeck.codemap import grammars, pool
    from tooldeck.codemap.languages import language_for

    items = [(language, p.read_bytes()) for p in sorted(tree.rglob("*")) if (language := language_for(p.name))]
    trees = {id(data): grammars.parse(language, data) for language, data in items}
    parse = grammars.parse
    grammars.parse = lambda _language, data: trees[id(data)]  # type: ignore[assignment]
    try:
        for language, data in items:  # queries compiled, kinds learnt; and the split is the real code
            acc = [0.0] * len(STAGES)
            if split_one(language, data, acc) != pool.extract_one(language, data):
                raise SystemExit("the split's blob differs from extract_one's: update split_one")
        out: list[list[float]] = [[] for _ in STAGES]
        for _ in range(reps):
            acc = [0.0] * len(STAGES)
            for language, data in items:
                split_one(language, data, acc)
            for i, total in enumerate(acc):
                out[i].append(1000 * total / len(items))
        return out, len(items)
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
    ap.add_argument("--split", action="store_true", help="also time each extraction stage on its own")
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
            if ns.split:
                stages, _ = measure_split(tree, ns.reps)
                parts = ", ".join(f"{s} {spread(ms)}" for s, ms in zip(STAGES, stages, strict=True))
                total = sum(statistics.median(ms) for ms in stages)
                print(f"{'':<17}stages (ms per file, min/median/max; sum of medians {total:.3f}): {parts}")


if __name__ == "__main__":
    main()
