"""Is the codemap output unchanged? A snapshot of extraction + rendering to compare.

Speed work on :mod:`tooldeck.codemap.extract` must not change what a codemap
says. This script takes the same distinct-content corpora as
``bench/codemap_bench.py`` (Python from this environment's site-packages; Go,
Rust, Java, TypeScript, JavaScript from the benchmark corpora), extracts every
file in-process and records, per file, the stored blob (imports, symbols with
signatures and lines, references, line count) and the rendered text.

    python bench/codemap_identity.py --save /tmp/before.json   # on the old code
    python bench/codemap_identity.py --compare /tmp/before.json  # on the new code

``--compare`` prints the files whose blob or rendering differs (the first
differences in full) and exits 1 if any does.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import codemap_bench  # the corpus builder, shared


def snapshot(files: int, per_language: int) -> dict[str, dict[str, str]]:
    from tooldeck.codemap import pool
    from tooldeck.codemap.entry import Entry, LazyCodemap
    from tooldeck.codemap.languages import language_for
    from tooldeck.codemap.render import render

    out: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory(prefix="codemap-identity-") as tmp:
        for name in ("python", "mixed"):
            tree = Path(tmp) / name
            codemap_bench.build_corpus(name, tree, files, per_language)
            for rel in codemap_bench.list_rels(tree):
                language = language_for(rel)
                if language is None:
                    continue
                blob = pool.extract_one(language, (tree / rel).read_bytes())
                entry = Entry(rel, data=blob)
                shown = "" if entry.skip else render(LazyCodemap(rel, language, "", "", entry), shown_path=rel)
                out[f"{name}/{rel}"] = {"blob": blob, "render": shown}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--files", type=int, default=300, help="distinct Python files")
    ap.add_argument("--per-language", type=int, default=60, help="distinct files per language, mixed corpus")
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--save", type=Path)
    group.add_argument("--compare", type=Path)
    ns = ap.parse_args()
    snap = snapshot(ns.files, ns.per_language)
    if ns.save:
        ns.save.write_text(json.dumps(snap, sort_keys=True), encoding="utf-8")
        print(f"saved {len(snap)} codemaps to {ns.save}")
        return
    before = json.loads(ns.compare.read_text(encoding="utf-8"))
    missing = sorted(set(before) ^ set(snap))
    differ = sorted(k for k in set(before) & set(snap) if before[k] != snap[k])
    for key in differ[:3]:
        for part in ("blob", "render"):
            if before[key][part] != snap[key][part]:
                print(f"--- {key} ({part}) before:\n{before[key][part]}\n+++ after:\n{snap[key][part]}\n")
    print(f"{len(snap)} codemaps: {len(differ)} differ, {len(missing)} only on one side")
    sys.exit(1 if differ or missing else 0)


if __name__ == "__main__":
    main()
