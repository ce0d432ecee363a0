"""Codemaps beside bare tree-sitter doing the same work, like for like.

Two corpora of DISTINCT content (files deduplicated by SHA-1 of their bytes,
so tooldeck's content cache never answers a file twice), copied into a temp
tree:

* python: ``.py`` files of this virtual environment's site-packages;
* mixed: Go, Rust, Java, TypeScript and JavaScript sources installed by
  ``bench/setup_corpora.sh`` (Debian's golang-1.19-src, librust-*-dev crates,
  openjdk-17-source; npm packages under bench/.corpora).

Each measured pass runs in a fresh process, four ways:

* baseline, 1 process: a plain script (no tooldeck) reading each file, parsing
  it with tree-sitter and running the grammar wheel's own ``TAGS_QUERY``
  (QueryCursor captures) — parse once, one definitions query;
* tooldeck, 1 process: ``CodemapService.codemaps`` with
  ``TOOLDECK_CODEMAP_WORKERS=0`` on an empty state directory;
* baseline, 2 workers: the same bare script in a 2-process spawn pool, files
  sent as bytes in groups of 8 (tooldeck's own shape);
* tooldeck, 2 workers: ``TOOLDECK_CODEMAP_WORKERS=2``.

Wall time AND CPU time (the process's own plus its workers', from
``getrusage``) are reported as min/median/max over ``--reps`` runs: the machine
may be shared, and CPU time is what the load average distorts least. Ratios use
medians. Then tokens: codemap tokens / full-file tokens per language, and a check
that every public Python definition (from ``ast``: public functions and classes
at module level, also inside module-level if/try/with blocks; in every public
class, nested ones too, its public methods, ``__init__``/``__new__``/``__call__``
and public nested classes) appears in its codemap on its line with its name,
and with its whole signature in order: every parameter's name, annotation and
default value as written (a method's untyped self/cls aside), the return
annotation, a class's bases and keywords. A signature cut for length is a miss
(the count of those is printed too).

Goals (issue 14): CPU per file <= 1.0x the baseline in one process; >= 900
files/s with 2 workers on distinct Python; tokens <= 0.10 Python, <= 0.12 mixed.
Files/s (wall, median) are shown for both sides: the bare 2-process pool's own
throughput is the ceiling of what parsing every file can reach on the machine.

Usage: ``python bench/codemap_bench.py [--files 3000] [--per-language 600] [--reps 3]``
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from goals import report  # bench/ is on sys.path when a script of it runs

HERE = Path(__file__).resolve().parent
SITE = Path(sys.prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
CORPORA = Path(os.environ.get("TOOLDECK_BENCH_CORPORA", HERE / ".corpora"))
# language -> (where its sources are, extensions)
MIXED: dict[str, tuple[list[Path], tuple[str, ...]]] = {
    "go": ([Path("/usr/share/go-1.19/src")], (".go",)),
    "rust": ([Path("/usr/share/cargo/registry")], (".rs",)),
    "java": ([CORPORA / "java"], (".java",)),
    "typescript": ([CORPORA / "npm" / "node_modules"], (".ts",)),
    "javascript": ([CORPORA / "npm" / "node_modules"], (".js",)),
}
# extension -> (grammar module, language function); the baseline needs no tooldeck
GRAMMARS = {
    ".py": ("tree_sitter_python", "language"),
    ".go": ("tree_sitter_go", "language"),
    ".rs": ("tree_sitter_rust", "language"),
    ".java": ("tree_sitter_java", "language"),
    ".ts": ("tree_sitter_typescript", "language_typescript"),
    ".js": ("tree_sitter_javascript", "language"),
}
GROUP = 8


# corpus ---------------------------------------------------------------------------


def _walk(top: Path, exts: tuple[str, ...]) -> list[Path]:
    out: list[Path] = []
    for dirpath, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "testdata"))
        for f in sorted(files):
            if f.endswith(exts) and not f.endswith((".d.ts", ".min.js")):
                out.append(Path(dirpath, f))
    return out


def distinct(paths: list[Path], limit: int, seen: set[str]) -> list[tuple[Path, bytes]]:
    """Up to ``limit`` files of distinct content (and under 1 MB: generated blobs aside)."""
    out: list[tuple[Path, bytes]] = []
    for p in paths:
        try:
            data = p.read_bytes()
        except OSError:
            continue
        digest = hashlib.sha1(data).hexdigest()
        if digest in seen or not data.strip() or len(data) > 1_000_000:
            continue
        seen.add(digest)
        out.append((p, data))
        if len(out) >= limit:
            break
    return out


def build_corpus(name: str, tree: Path, files: int, per_language: int) -> dict[str, int]:
    """Copy distinct files into ``tree``; returns files per language."""
    seen: set[str] = set()
    picked: dict[str, list[tuple[Path, bytes]]] = {}
    if name == "python":
        picked["python"] = distinct(_walk(SITE, (".py",)), files, seen)
    else:
        for lang, (tops, exts) in MIXED.items():
            paths = [p for top in tops if top.is_dir() for p in _walk(top, exts)]
            if not paths:
                raise SystemExit(f"no {lang} sources under {tops}: run bench/setup_corpora.sh first")
            picked[lang] = distinct(paths, per_language, seen)
    for lang, items in picked.items():
        for i, (src, data) in enumerate(items):
            dst = tree / lang / f"{i:05d}_{src.name}"
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(data)
    return {lang: len(items) for lang, items in picked.items()}


def list_rels(tree: Path) -> list[str]:
    return sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file())


# measured phases (each in its own process) ------------------------------------------


def cpu_seconds() -> float:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def bare_group(items: list[tuple[str, bytes]]) -> tuple[int, float]:
    """The baseline's work for a group: parse once, run the wheel's TAGS_QUERY
    once. Returns (captures, CPU seconds spent in ``Parser.parse`` alone)."""
    import importlib

    import tree_sitter

    cache: dict[str, tuple[object, object]] = getattr(bare_group, "cache", {})
    bare_group.cache = cache  # type: ignore[attr-defined]
    captures = 0
    parse_cpu = 0.0
    for ext, data in items:
        if ext not in cache:
            mod_name, fn = GRAMMARS[ext]
            mod = importlib.import_module(mod_name)
            lang = tree_sitter.Language(getattr(mod, fn)())
            cache[ext] = (tree_sitter.Parser(lang), tree_sitter.Query(lang, mod.TAGS_QUERY))
        parser, query = cache[ext]
        t0 = time.process_time()
        root = parser.parse(data).root_node  # type: ignore[attr-defined]
        parse_cpu += time.process_time() - t0
        captures += sum(len(v) for v in tree_sitter.QueryCursor(query).captures(root).values())
    return captures, parse_cpu


def phase_baseline(tree: str, rels: list[str], workers: int) -> dict:
    t0, c0 = time.perf_counter(), cpu_seconds()
    groups: list[list[tuple[str, bytes]]] = []
    for i in range(0, len(rels), GROUP):
        group = []
        for rel in rels[i : i + GROUP]:
            with open(os.path.join(tree, rel), "rb") as fh:
                group.append((os.path.splitext(rel)[1], fh.read()))
        groups.append(group)
    if workers < 2:
        results = [bare_group(g) for g in groups]
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as ex:
            results = list(ex.map(bare_group, groups))
    return {
        "wall": time.perf_counter() - t0,
        "cpu": cpu_seconds() - c0,
        "captures": sum(r[0] for r in results),
        "parse_cpu": sum(r[1] for r in results),
    }


def phase_tooldeck(tree: str, rels: list[str], workers: int, state: str) -> dict:
    os.environ["TOOLDECK_CODEMAP_WORKERS"] = str(workers)
    from tooldeck.codemap import pool
    from tooldeck.codemap.model import Codemap
    from tooldeck.codemap.service import CodemapService
    from tooldeck.runtime import Runtime

    t0, c0 = time.perf_counter(), cpu_seconds()
    svc = CodemapService(Runtime.for_dirs([tree], state_dir=state))
    out = svc.codemaps(svc.rt.workspace.primary, rels)
    if pool._pool is not None:  # wait for the workers to exit so their CPU time is counted
        pool._pool.shutdown(wait=True)
        pool._pool = None
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    return {
        "wall": wall,
        "cpu": cpu,
        "parsed": svc.parse_count,
        "mapped": sum(isinstance(r, Codemap) for r in out),
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "worker_peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }


_KEPT_DUNDERS = ("__init__", "__new__", "__call__")  # how an object is built and called: shown in full


def public_defs(module: ast.Module) -> list[tuple[str, int, ast.AST, bool]]:
    """Every public definition a codemap must show whole: public functions and
    classes at module level (also inside module-level ``if``/``try``/``with``
    blocks: ``if TYPE_CHECKING:``, version switches), and in every public class
    (nested ones too) its public methods, ``__init__``/``__new__``/``__call__``
    and public nested classes: (name, line, node, is_method)."""
    out: list[tuple[str, int, ast.AST, bool]] = []

    def visit(body: list[ast.stmt], in_class: bool) -> None:
        for node in body:
            if isinstance(node, ast.If | ast.Try | ast.With):
                blocks = [node.body, getattr(node, "orelse", []), getattr(node, "finalbody", [])]
                blocks += [h.body for h in getattr(node, "handlers", [])]
                for block in blocks:
                    visit(block, in_class)
                continue
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            kept = in_class and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in _KEPT_DUNDERS
            if node.name.startswith("_") and not kept:
                continue
            out.append((node.name, node.lineno, node, in_class and not isinstance(node, ast.ClassDef)))
            if isinstance(node, ast.ClassDef):
                visit(node.body, True)

    visit(module.body, False)
    return out


def _norm(text: str) -> str:
    """No comments, spaces or quotes, no trailing comma before a closing
    bracket (a multi-line header is squashed to one line without them)."""
    text = re.sub(r"(?<=[\s,(\[{])#[^\n]*", "", text)
    return re.sub(r"[\s'\"]", "", re.sub(r",\s*([)\]}])", r"\1", text))


class Source:
    """A module's text by line, to read a node's text as written
    (``ast.get_source_segment`` splits the whole text again on every call)."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines(keepends=True)

    def segment(self, node: ast.AST) -> str:
        first, last = getattr(node, "lineno", 0), getattr(node, "end_lineno", None)
        if not first or last is None or last > len(self.lines):
            return ast.unparse(node)
        # col offsets count UTF-8 bytes
        rows = [line.encode() for line in self.lines[first - 1 : last]]
        if len(rows) == 1:
            return rows[0][node.col_offset : node.end_col_offset].decode(errors="replace")  # type: ignore[attr-defined]
        rows[0], rows[-1] = rows[0][node.col_offset :], rows[-1][: node.end_col_offset]  # type: ignore[attr-defined]
        return b"".join(rows).decode(errors="replace")


def signature_parts(node: ast.AST, is_method: bool, source: Source) -> list[str]:
    """What a shown signature must hold, in order: every parameter's name, its
    annotation and its default value as written (a method's self/cls aside:
    the codemap leaves it out), the return annotation; a class's bases and
    keywords (``metaclass=...``). Each normalised (no spaces or quotes)."""

    def seg(n: ast.AST) -> str:
        return _norm(source.segment(n))

    if isinstance(node, ast.ClassDef):
        return [seg(b) for b in node.bases] + [_norm(f"{k.arg}=") + seg(k.value) for k in node.keywords if k.arg]
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    a = node.args
    positional = [*a.posonlyargs, *a.args]
    with_default = positional[len(positional) - len(a.defaults) :]
    defaults: dict[int, ast.expr] = {id(p): d for p, d in zip(with_default, a.defaults, strict=True)}
    defaults.update({id(p): d for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None})
    params = [*positional, *([a.vararg] if a.vararg else []), *a.kwonlyargs, *([a.kwarg] if a.kwarg else [])]
    if is_method and positional and positional[0].arg in ("self", "cls") and positional[0].annotation is None:
        params.remove(positional[0])
    parts: list[str] = []
    for p in params:
        parts.append(p.arg)
        if p.annotation is not None:
            parts.append(seg(p.annotation))
        if id(p) in defaults:
            parts.append(seg(defaults[id(p)]))
    return parts + ([seg(node.returns)] if node.returns is not None else [])


def _in_order(text: str, parts: list[str]) -> bool:
    at = 0
    for part in parts:
        found = text.find(part, at)
        if found < 0:
            return False
        at = found + len(part)
    return True


_INNERMOST_LABEL = re.compile(r"«(\d+)=([^«»]*)»")


def unfold(shown: str) -> str:
    """A codemap with its repeats written out again: a long text shown a
    second time is ``«n»``, its first showing ``«n=text»``
    (codemap/repeats.py). Written here on its own, not with tooldeck's
    ``repeats.expand``, so that the check does not trust the code it checks."""
    while (m := _INNERMOST_LABEL.search(shown)) is not None:
        body = m.group(2)
        shown = shown[: m.start()] + body + shown[m.end() :]
        shown = shown.replace(f"«{m.group(1)}»", body)
    return shown


def check_definitions(shown: str, module: ast.Module, source: Source) -> tuple[int, int, int, int, list[str]]:
    """(public defs, found with name and line, with the whole signature in
    order, cut for length (counted as misses), examples of misses) — a
    definition line is ``<line><spaces or tabs><signature>``; a repeat shown
    as a reference counts with the text it refers to (:func:`unfold`)."""
    by_line: dict[int, list[str]] = {}
    for row in unfold(shown).splitlines():
        m = re.match(r"(\d+)\s(.*)", row)
        if m:
            by_line.setdefault(int(m.group(1)), []).append(m.group(2))
    total = found = complete = cut = 0
    misses: list[str] = []
    for name, line, node, is_method in public_defs(module):
        total += 1
        row = next((r for r in by_line.get(line, []) if re.search(rf"(?<!\w){re.escape(name)}(?!\w)", r)), None)
        if row is None:
            misses.append(f"{line} {name}")
            continue
        found += 1
        after = _norm(row.split(name, 1)[1])
        if _in_order(after, signature_parts(node, is_method, source)):
            complete += 1
        else:
            cut += row.endswith("…")
            misses.append(f"{line} {name}: signature {row!r}")
    return total, found, complete, cut, misses


def phase_tokens(tree: str, rels: list[str], state: str) -> dict:
    os.environ["TOOLDECK_CODEMAP_WORKERS"] = "0"
    from tooldeck.codemap.model import Codemap
    from tooldeck.codemap.service import CodemapService
    from tooldeck.runtime import Runtime
    from tooldeck.tokens import count_tokens

    svc = CodemapService(Runtime.for_dirs([tree], state_dir=state))
    maps = svc.codemaps(svc.rt.workspace.primary, rels)
    per: dict[str, list[int]] = {}
    totals = [0, 0, 0, 0]  # public defs, found (name + line), complete signature, cut for length (misses)
    examples: list[str] = []
    for rel, cm in zip(rels, maps, strict=True):
        if not isinstance(cm, Codemap):
            continue
        text = Path(tree, rel).read_text(encoding="utf-8", errors="replace")
        shown = svc.render(cm)
        row = per.setdefault(cm.language, [0, 0])
        row[0] += count_tokens(text)
        row[1] += count_tokens(shown)
        if cm.language != "python":
            continue
        try:
            module = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        *counts, misses = check_definitions(shown, module, Source(text))
        totals = [t + c for t, c in zip(totals, counts, strict=True)]
        examples.extend(f"{rel}:{m}" for m in misses[: max(0, 4 - len(examples))])
    return {"per_language": per, "defs": totals, "examples": examples}


def run_phase(args: list[str]) -> dict:
    cmd = [sys.executable, __file__, "--phase", *args]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise SystemExit(f"phase {args[0]} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def spread(xs: list[float], digits: int = 2) -> str:
    """min/median/max of ``xs``."""
    return "/".join(f"{x:.{digits}f}" for x in (min(xs), statistics.median(xs), max(xs)))


def bench_corpus(name: str, tmp: Path, ns: argparse.Namespace) -> None:
    tree = tmp / name
    counts = build_corpus(name, tree, ns.files, ns.per_language)
    rels = list_rels(tree)
    listing = tmp / f"{name}.txt"
    listing.write_text("\n".join(rels), encoding="utf-8")
    size = sum((tree / r).stat().st_size for r in rels)
    n = len(rels)
    print(
        f"\ncorpus {name}: {n} distinct files, {size / 1e6:.1f} MB ({', '.join(f'{k} {v}' for k, v in counts.items())})"
    )
    print(
        f"{'pass':<22}{'baseline wall s':>20}{'tooldeck wall s':>20}{'base CPU s':>17}{'tdk CPU s':>17}"
        f"{'CPU ratio':>10}{'base files/s':>13}{'tdk files/s':>12}"
    )
    for workers in (0, 2):
        rows: dict[str, dict[str, list[float]]] = {"base": {"wall": [], "cpu": []}, "tdk": {"wall": [], "cpu": []}}
        parse_cpu: list[float] = []
        for rep in range(ns.reps):
            state = tmp / f"state-{name}-{workers}-{rep}"
            b = run_phase(["baseline", str(tree), str(listing), str(workers)])
            parse_cpu.append(b["parse_cpu"])
            t = run_phase(["tooldeck", str(tree), str(listing), str(workers), str(state)])
            if t["parsed"] != n:
                print(f"  (tooldeck parsed {t['parsed']} of {n} files)")
            for key, res in (("base", b), ("tdk", t)):
                rows[key]["wall"].append(res["wall"])
                rows[key]["cpu"].append(res["cpu"])
            shutil.rmtree(state, ignore_errors=True)
        med = {k: {m: statistics.median(v) for m, v in d.items()} for k, d in rows.items()}
        label = "1 process" if workers == 0 else f"{workers} workers each"
        print(
            f"{label:<22}{spread(rows['base']['wall']):>20}{spread(rows['tdk']['wall']):>20}"
            f"{spread(rows['base']['cpu']):>17}{spread(rows['tdk']['cpu']):>17}"
            f"{med['tdk']['cpu'] / med['base']['cpu']:>10.2f}"
            f"{n / med['base']['wall']:>13.0f}{n / med['tdk']['wall']:>12.0f}"
        )
        if not workers:  # the round-two goal: a codemap costs no more CPU than bare tree-sitter's tags
            ratio = med["tdk"]["cpu"] / med["base"]["cpu"]
            report("codemap_bench", f"{name}: CPU / bare tree-sitter, 1 process", ratio, "<=", 1.0)
        if workers:
            parse = statistics.median(parse_cpu)
            print(
                f"{'':<22}bare Parser.parse alone: {parse:.2f} s CPU ({1000 * parse / n:.2f} ms/file, "
                f"{parse / med['base']['cpu']:.0%} of the baseline): {workers} cores busy only parsing "
                f"would reach {workers * n / parse:.0f} files/s"
            )
    tok = run_phase(["tokens", str(tree), str(listing), "0", str(tmp / f"state-{name}-tokens")])
    full = sum(v[0] for v in tok["per_language"].values())
    mapped = sum(v[1] for v in tok["per_language"].values())
    parts = ", ".join(f"{k} {v[1] / max(1, v[0]):.3f}" for k, v in sorted(tok["per_language"].items()))
    print(f"codemap / full-file tokens: {mapped:,} / {full:,} = {mapped / max(1, full):.3f} ({parts})")
    limit = 0.10 if name == "python" else 0.12  # README: Python <= 0.10, the mixed corpus <= 0.12
    report("codemap_bench", f"{name}: codemap tokens / full-file tokens", mapped / max(1, full), "<=", limit, 3)
    total, found, complete, cut = tok["defs"]
    if total:
        print(
            f"public Python definitions (ast): {found}/{total} with name and line; {complete}/{total} with the "
            f"whole signature in order (every parameter with its annotation and default, return type, bases); "
            f"{total - complete} misses, {cut} of them cut for length"
            + (f"; misses e.g. {tok['examples']}" if tok["examples"] else "")
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--files", type=int, default=3000, help="distinct Python files")
    ap.add_argument("--per-language", type=int, default=600, help="distinct files per language, mixed corpus")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--corpus", choices=("python", "mixed", "both"), default="both")
    ap.add_argument("--phase", nargs="+")
    ns = ap.parse_args()
    if ns.phase:
        phase, tree, listing, workers, *rest = ns.phase
        rels = Path(listing).read_text(encoding="utf-8").splitlines()
        if phase == "baseline":
            print(json.dumps(phase_baseline(tree, rels, int(workers))))
        elif phase == "tooldeck":
            print(json.dumps(phase_tooldeck(tree, rels, int(workers), rest[0])))
        else:
            print(json.dumps(phase_tokens(tree, rels, rest[0])))
        return
    cpu = platform.processor() or platform.machine()
    print(
        f"codemap_bench — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; machine: {platform.node()}, {os.cpu_count()} CPUs "
        f"({cpu}), Python {platform.python_version()}; load average {os.getloadavg()[0]:.2f} at start"
    )
    print(f"spreads are min/median/max of {ns.reps} fresh-process runs; ratio = median CPU tooldeck / baseline")
    with tempfile.TemporaryDirectory(prefix="codemap-bench-") as tmp:
        for name in ("python", "mixed") if ns.corpus == "both" else (ns.corpus,):
            bench_corpus(name, Path(tmp), ns)
    print(
        f"load average at end {os.getloadavg()[0]:.2f}; baseline = tree-sitter Parser.parse + "
        "QueryCursor(wheel TAGS_QUERY).captures per file, no tooldeck import"
    )


if __name__ == "__main__":
    main()
