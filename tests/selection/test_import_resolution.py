"""Import strings (as codemaps write them) resolved to workspace files."""

from __future__ import annotations

import os
from pathlib import Path

from tooldeck.selection.imports import resolve_import
from tooldeck.workspace.roots import make_root


def files(base: Path, spec: dict[str, str]) -> None:
    for rel, text in spec.items():
        p = base / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def rels(root: Path, found: list[str]) -> list[str]:
    return [os.path.relpath(f, os.path.realpath(root)) for f in found]


def test_python_absolute_relative_and_src_layout(tmp_path):
    files(
        tmp_path,
        {
            "src/pkg/__init__.py": "",
            "src/pkg/core.py": "",
            "src/pkg/sub/__init__.py": "",
            "src/pkg/sub/leaf.py": "",
            "src/pkg/app.py": "",
        },
    )
    root = make_root(tmp_path)

    def r(spec: str, rel: str = "src/pkg/app.py") -> list[str]:
        return rels(tmp_path, resolve_import(root, rel, "python", spec))

    assert r("pkg.core") == ["src/pkg/core.py"]
    assert r("pkg.core.Engine") == ["src/pkg/core.py"]  # a name inside a module
    assert r(".core.Engine") == ["src/pkg/core.py"]
    assert r(".sub.leaf") == ["src/pkg/sub/leaf.py"]
    assert r("..core", "src/pkg/sub/leaf.py") == ["src/pkg/core.py"]
    assert r(".sub") == ["src/pkg/sub/__init__.py"]
    assert r("from pkg.sub import leaf") == ["src/pkg/sub/leaf.py"]
    assert r("os.path") == [] and r("numpy") == []


def test_javascript_and_typescript_relative_specifiers(tmp_path):
    files(tmp_path, {"web/app.ts": "", "web/util.ts": "", "web/lib/index.tsx": "", "web/old.js": ""})
    root = make_root(tmp_path)

    def r(spec: str) -> list[str]:
        return rels(tmp_path, resolve_import(root, "web/app.ts", "typescript", spec))

    assert r("./util") == ["web/util.ts"]
    assert r("./util.js") == ["web/util.ts"]  # ESM-style .js specifier of a .ts file
    assert r("./lib") == ["web/lib/index.tsx"]
    assert r('import x from "./old.js"') == ["web/old.js"]
    assert r("react") == []


def test_go_packages_under_the_module(tmp_path):
    files(
        tmp_path,
        {"go.mod": "module example.com/shop\n\ngo 1.22\n", "cart/cart.go": "", "cart/cart_test.go": "", "main.go": ""},
    )
    root = make_root(tmp_path)
    assert rels(tmp_path, resolve_import(root, "main.go", "go", "example.com/shop/cart")) == ["cart/cart.go"]
    assert resolve_import(root, "main.go", "go", "fmt") == []


def test_rust_crate_super_and_mod(tmp_path):
    files(tmp_path, {"src/lib.rs": "", "src/net/mod.rs": "", "src/net/http.rs": "", "src/util.rs": ""})
    root = make_root(tmp_path)
    assert rels(tmp_path, resolve_import(root, "src/lib.rs", "rust", "crate::net::http::Client")) == ["src/net/http.rs"]
    assert rels(tmp_path, resolve_import(root, "src/net/http.rs", "rust", "super::super::util")) == ["src/util.rs"]
    assert rels(tmp_path, resolve_import(root, "src/lib.rs", "rust", "mod net;")) == ["src/net/mod.rs"]
    assert rels(tmp_path, resolve_import(root, "src/net/mod.rs", "rust", "self::http::get")) == ["src/net/http.rs"]
    assert rels(tmp_path, resolve_import(root, "src/net/mod.rs", "rust", "pub mod http;")) == ["src/net/http.rs"]
    assert resolve_import(root, "src/lib.rs", "rust", "std::collections::HashMap") == []


def test_c_includes(tmp_path):
    files(tmp_path, {"src/main.c": "", "src/util.h": "", "include/api.h": ""})
    root = make_root(tmp_path)
    assert rels(tmp_path, resolve_import(root, "src/main.c", "c", "util.h")) == ["src/util.h"]
    assert rels(tmp_path, resolve_import(root, "src/main.c", "c", '#include "api.h"')) == ["include/api.h"]
    assert resolve_import(root, "src/main.c", "c", "stdio.h") == []


def test_nothing_outside_the_root(tmp_path):
    files(tmp_path, {"proj/a.py": "", "secret.py": ""})
    root = make_root(tmp_path / "proj")
    assert resolve_import(root, "a.py", "python", "..secret") == []


def test_shown_paths_resolve_like_realpath_through_links(tmp_path):
    import os

    from tooldeck.selection.related import _Paths
    from tooldeck.workspace.roots import Workspace

    real = tmp_path / "root" / "pkg"
    real.mkdir(parents=True)
    (real / "a.py").write_text("x = 1\n")
    (real / "link.py").symlink_to(real / "a.py")
    (tmp_path / "root" / "alias").symlink_to(real)
    paths = _Paths(Workspace.from_dirs([tmp_path / "root"]))
    for p in ("pkg/a.py", "pkg/link.py", str(tmp_path / "root" / "alias" / "a.py"), str(real / "link.py")):
        full = p if os.path.isabs(p) else str(tmp_path / "root" / p)
        assert paths(p) == os.path.realpath(full)
    assert paths("pkg/missing.py") is None
