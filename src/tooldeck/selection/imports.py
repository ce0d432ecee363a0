"""Resolving a file's import strings to files in the workspace.

Used by automatic codemaps: a file selected in full brings in the files it
imports. Best effort per language, never raising, with no parser of its own:
it reads the import strings a codemap already extracted, in whatever form the
extractor gives them (``from .x import y``, ``pkg.mod``, ``"./util"``,
``use crate::a::b``, ``#include "x.h"``):

* Python: absolute (``a.b``: tried under the root, ``src/`` and every folder
  above the file) and relative (``from ..x import y``) imports; ``from X
  import a`` also tries the submodule ``X/a``.
* JavaScript / TypeScript: relative specifiers with extension and ``index``
  resolution (``./x.js`` also finds ``x.ts``).
* Go: package paths under the module named in ``go.mod`` (the package's files).
* Rust: ``crate::``, ``super::``, ``self::`` paths and ``mod x;``.
* C / C++: includes found next to the file, at the root or under ``include/``
  or ``src/``.
"""

from __future__ import annotations

import os
import re

from tooldeck.core.errors import ToolError
from tooldeck.workspace.content import read_bytes
from tooldeck.workspace.roots import Root

JS_EXTS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".d.ts")
_QUOTED = re.compile(r"""["'`]([^"'`]+)["'`]""")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAX_PER_IMPORT = 8


def _file(path: str) -> str | None:
    return os.path.realpath(path) if os.path.isfile(path) else None


def resolve_import(root: Root, rel: str, language: str, spec: str) -> list[str]:
    """Absolute paths of the workspace files ``spec`` (imported by ``root/rel``) names."""
    try:
        if language == "python":
            found = _python(root, rel, spec)
        elif language in ("javascript", "typescript", "tsx"):
            found = _js(root, rel, spec)
        elif language == "go":
            found = _go(root, spec)
        elif language == "rust":
            found = _rust(root, rel, spec)
        elif language in ("c", "cpp"):
            found = _c(root, rel, spec)
        else:
            found = []
    except (OSError, ValueError):
        return []
    out: list[str] = []
    for f in found:
        if f and f not in out and root.contains(f):
            out.append(f)
    return out[:MAX_PER_IMPORT]


# Python ---------------------------------------------------------------------------
def _python_specs(spec: str) -> list[tuple[int, str, list[str]]]:
    """(level, module, imported names) triples from an import string."""
    s = " ".join(spec.replace("(", " ").replace(")", " ").replace("\\", " ").split())
    m = re.match(r"^from\s+(\.*)([\w.]*)\s+import\s+(.+)$", s)
    if m:
        names = [n.strip().split(" as ")[0].strip() for n in m.group(3).split(",")]
        return [(len(m.group(1)), m.group(2), [n for n in names if _IDENT.match(n)])]
    m = re.match(r"^import\s+(.+)$", s)
    if m:
        return [(0, part.strip().split(" as ")[0].strip(), []) for part in m.group(1).split(",")]
    m = re.match(r"^(\.*)([\w.]*)$", s)
    if m and (m.group(1) or m.group(2)):
        return [(len(m.group(1)), m.group(2), [])]
    return []


def _python_module(base: str, module: str) -> str | None:
    parts = [p for p in module.split(".") if p]
    target = os.path.join(base, *parts) if parts else base
    if parts:
        hit = _file(target + ".py") or _file(target + ".pyi")
        if hit:
            return hit
    return _file(os.path.join(target, "__init__.py"))


def _python(root: Root, rel: str, spec: str) -> list[str]:
    here = os.path.dirname(os.path.join(root.path, rel))
    out: list[str] = []
    for level, module, names in _python_specs(spec):
        if level:
            base = here
            for _ in range(level - 1):
                base = os.path.dirname(base)
            bases = [base]
        else:
            bases = [root.path, os.path.join(root.path, "src")]
            d = here
            while root.contains(d) and d not in bases:  # flat layouts: siblings of the file's packages
                bases.append(d)
                if d == root.path:
                    break
                d = os.path.dirname(d)
        # "a.b.name" (how codemaps write ``from a.b import name``) may name a
        # module or a name inside module a.b: try both, the longer first
        modules = [module]
        if not names and "." in module.strip("."):
            modules.append(module.rsplit(".", 1)[0])
        for base in bases:
            subs = [_python_module(base, f"{module}.{n}" if module else n) for n in names]
            if any(subs):  # ``from pkg import mod`` names the submodule, not the package
                out.extend(h for h in subs if h)
                break
            hit = next((h for h in (_python_module(base, m) for m in modules if m or level) if h), None)
            if hit:
                out.append(hit)
                break
    return out


# JavaScript / TypeScript ----------------------------------------------------------------
def _js(root: Root, rel: str, spec: str) -> list[str]:
    m = _QUOTED.search(spec)
    target = m.group(1) if m else spec.strip()
    if not target.startswith((".", "/")):
        return []  # a package, not a workspace file
    base = os.path.normpath(os.path.join(os.path.dirname(os.path.join(root.path, rel)), target))
    stem = base
    for ext in (".js", ".jsx", ".mjs", ".cjs"):
        if base.endswith(ext):
            stem = base[: -len(ext)]
    for cand in (base, *(stem + e for e in JS_EXTS), *(os.path.join(base, "index" + e) for e in JS_EXTS)):
        hit = _file(cand)
        if hit:
            return [hit]
    return []


# Go -------------------------------------------------------------------------------
def _go_module(root: Root) -> str | None:
    try:  # through the safe path: a go.mod swapped for a link or a FIFO is skipped
        data = read_bytes(os.path.join(root.path, "go.mod"), "go.mod", 1 << 20, root=root.path).data
    except (ToolError, OSError):
        return None
    for line in data.decode("utf-8", "replace").splitlines():
        if line.startswith("module ") and len(line.split()) > 1:
            return line.split()[1].strip('"')
    return None


def _go(root: Root, spec: str) -> list[str]:
    m = _QUOTED.search(spec)
    path = m.group(1) if m else spec.strip().split()[-1]
    module = _go_module(root)
    if not module or not (path == module or path.startswith(module + "/")):
        return []
    folder = os.path.join(root.path, path[len(module) :].lstrip("/"))
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".go") and not n.endswith("_test.go"))
    except OSError:
        return []
    return [f for f in (_file(os.path.join(folder, n)) for n in names) if f]


# Rust ------------------------------------------------------------------------------
def _rust(root: Root, rel: str, spec: str) -> list[str]:
    s = spec.strip().rstrip(";").strip()
    here = os.path.dirname(os.path.join(root.path, rel))
    own = os.path.splitext(os.path.basename(rel))[0]
    # the folder holding this module's children: src/net/ for src/net/mod.rs, src/net/http/ for src/net/http.rs
    self_dir = here if own in ("mod", "lib", "main") else os.path.join(here, own)
    m = re.match(r"^(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)$", s)
    if m:
        name = m.group(1)
        folder = self_dir
        found = (_file(os.path.join(folder, name + ".rs")), _file(os.path.join(folder, name, "mod.rs")))
        return [f for f in found if f]
    s = re.sub(r"^(?:pub(?:\([^)]*\))?\s+)?use\s+", "", s)
    s = s.split("{", 1)[0].rstrip(":")
    parts = [p for p in s.split("::") if p]
    if not parts:
        return []
    if parts[0] == "crate":
        src = os.path.join(root.path, "src")
        d = here
        while root.contains(d):  # the nearest enclosing src/ (workspaces with several crates)
            if os.path.basename(d) == "src":
                src = d
                break
            if d == root.path:
                break
            d = os.path.dirname(d)
        base, parts = src, parts[1:]
    elif parts[0] in ("super", "self"):
        base = self_dir
        while parts and parts[0] in ("super", "self"):
            if parts[0] == "super":
                base = os.path.dirname(base)
            parts = parts[1:]
    else:
        return []
    for n in range(len(parts), 0, -1):
        target = os.path.join(base, *parts[:n])
        hit = _file(target + ".rs") or _file(os.path.join(target, "mod.rs"))
        if hit:
            return [hit]
    return []


# C / C++ ---------------------------------------------------------------------------
def _c(root: Root, rel: str, spec: str) -> list[str]:
    m = re.search(r'"([^"]+)"', spec)
    target = m.group(1) if m else spec.strip().removeprefix("#include").strip().strip('<>"')
    if not target or " " in target:
        return []
    here = os.path.dirname(os.path.join(root.path, rel))
    for base in (here, root.path, os.path.join(root.path, "include"), os.path.join(root.path, "src")):
        hit = _file(os.path.normpath(os.path.join(base, target)))
        if hit:
            return [hit]
    return []
