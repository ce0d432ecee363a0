"""The cache key's fingerprint covers every module that shapes a payload.

A cached blob is reused while its key matches; a change to any code the
extraction runs must change the key, or stale codemaps outlive it.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tooldeck.codemap import cache_key as cache

HERE = Path(cache.__file__).parent


def codemap_imports(module: str) -> set[str]:
    """The tooldeck.codemap modules ``module`` imports at its top level."""
    tree = ast.parse((HERE / f"{module}.py").read_text())
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "tooldeck.codemap":
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tooldeck.codemap."):
            found.add(node.module.rsplit(".", 1)[1])  # type: ignore[union-attr]
    return found


def test_every_module_the_extraction_runs_is_fingerprinted():
    seen: set[str] = set()
    todo = ["extract", "pool"]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(codemap_imports(name))
    shaping = {name.removesuffix(".py") for name in cache._SHAPING}
    assert seen - {"pool"} <= shaping, seen - shaping


def test_the_fingerprint_follows_the_code(tmp_path, monkeypatch):
    before = cache.extractor_version()
    fake = tmp_path / "codemap"
    (fake / "queries").mkdir(parents=True)
    for path in [*HERE.glob("*.py"), *(HERE / "queries").glob("*.scm")]:
        (fake / path.relative_to(HERE)).write_bytes(path.read_bytes())
    monkeypatch.setattr(cache, "__file__", str(fake / "cache.py"))
    cache.extractor_version.cache_clear()
    try:
        assert cache.extractor_version() == before
        (fake / "lexer.py").write_bytes((fake / "lexer.py").read_bytes() + b"\n# changed\n")
        cache.extractor_version.cache_clear()
        assert cache.extractor_version() != before
    finally:
        cache.extractor_version.cache_clear()
