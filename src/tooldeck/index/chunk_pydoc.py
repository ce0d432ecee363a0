"""An installed Python package -> one chunk per documented API object.

The Python counterpart of ochat's ``odoc_search``: modules, classes,
functions and methods with their signature and docstring, read with ``ast``
from the package's source files. Nothing is imported, so reading a
package's documentation never runs its code (import side effects, slow
imports, missing optional dependencies). Private names (a leading
underscore, dunders other than ``__init__``/``__call__``) are left out.
"""

from __future__ import annotations

import ast

from tooldeck.ast_lock import parse
from tooldeck.index.model import Chunk

MAX_DOC = 1800
_KEEP_DUNDERS = frozenset({"__init__", "__call__"})


def _public(name: str) -> bool:
    return not name.startswith("_") or name in _KEEP_DUNDERS


def _signature(node: ast.AST) -> str:
    if isinstance(node, ast.ClassDef):
        bases = ", ".join(ast.unparse(b) for b in [*node.bases, *node.keywords])
        return f"class {node.name}({bases})" if bases else f"class {node.name}"
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    ret = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
    return f"{prefix} {node.name}({ast.unparse(node.args)}){ret}"


def module_name(rel: str) -> str:
    """``click/core.py`` -> ``click.core``; ``pkg/__init__.py`` -> ``pkg``."""
    mod = rel[:-3] if rel.endswith(".py") else rel
    mod = mod.replace("/", ".")
    return mod[: -len(".__init__")] if mod.endswith(".__init__") else mod


def chunk_pydoc(path: str, text: str) -> list[Chunk]:
    """Chunks of one module (``path`` relative to the folder holding the package)."""
    try:
        tree = parse(text, filename=path)  # not ast.parse: one thread at a time (ast_lock)
    except (SyntaxError, ValueError):
        return []
    mod = module_name(path)
    out: list[Chunk] = []
    doc = ast.get_docstring(tree)
    if doc:
        n = len(text.splitlines())
        out.append(
            Chunk(path, 1, max(1, min(n, len(doc.splitlines()) + 2)), f"module {mod}", doc[:MAX_DOC], mod, "module")
        )
    _walk(tree.body, mod, path, out, in_class=False)
    return out


def _walk(body: list[ast.stmt], qual: str, path: str, out: list[Chunk], *, in_class: bool) -> None:
    for node in body:
        if not isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) or not _public(node.name):
            continue
        name = f"{qual}.{node.name}"
        sig = _signature(node)
        doc = ast.get_docstring(node) or ""
        kind = "class" if isinstance(node, ast.ClassDef) else ("method" if in_class else "function")
        if doc or kind == "class" or not node.name.startswith("__"):
            text = f"{sig}\n\n{doc[:MAX_DOC]}" if doc else sig
            end = getattr(node, "end_lineno", None) or node.lineno
            out.append(Chunk(path, node.lineno, end, f"{kind} {name}", text, name, kind))
        if isinstance(node, ast.ClassDef):
            _walk(node.body, name, path, out, in_class=True)
