"""find_symbol and find_references: the tree-sitter symbol index, for
repositories with no language server.

Both refresh the index first (unchanged files cost a stat; see
:meth:`CodemapService.index`). ``find_symbol`` lists definitions with their
signature; ``find_references`` lists the lines that use a name as an
identifier (comments and strings excluded), each with its enclosing
definition, grouped by file.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator

from tooldeck.codemap.model import KINDS
from tooldeck.core import Invocation, ToolInput, tool
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime

_NAME = re.compile(r"^[^\s]{1,200}$")
Kind = Literal[KINDS]  # type: ignore[valid-type]


def _check_name(value: str) -> str:
    value = value.strip()
    if not _NAME.match(value):
        raise ValueError("a symbol name without spaces is required (e.g. `Server` or `Server.start`)")
    return value


class FindSymbolInput(ToolInput):
    name: str = Field(description="Name to look up; `Parent.name` narrows to members of Parent.")
    kind: Kind | None = Field(None, description="Only definitions of this kind.")
    max_results: int = Field(50, ge=1, le=1000, description="Most definitions to list.")

    _name = field_validator("name")(_check_name)


class FindReferencesInput(ToolInput):
    name: str = Field(description="Identifier whose uses to list (for `Parent.name`, uses of `name`).")
    max_results: int = Field(100, ge=1, le=2000, description="Most referencing lines to list.")

    _name = field_validator("name")(_check_name)


def _progress(inv: Invocation) -> Any:
    def report(done: int, total: int) -> None:
        if inv.is_observed and total >= 200:
            inv.emit_text("activity", f"indexing: {done}/{total} files", replace=True)

    return report


def build(rt: Runtime) -> list[Tool]:
    def find_symbol(args: FindSymbolInput, inv: Invocation) -> str:
        # lazy: the codemap service (its parse pool, multiprocessing) waits for the first call
        from tooldeck.codemap.service import codemap_service

        idx = codemap_service(rt).index(progress=_progress(inv))
        found = idx.definitions(args.name, args.kind)
        kind_note = f" of kind {args.kind}" if args.kind else ""
        if not found:
            lines = [f"No definition of `{args.name}`{kind_note} in {len(idx)} indexed files."]
            similar = idx.similar(args.name.rsplit(".", 1)[-1])
            if similar:
                lines.append("Similar names: " + ", ".join(f"{n} ({c})" for n, c in similar))
            if args.kind and idx.definitions(args.name):
                lines.append(f"`{args.name}` is defined with other kinds: call again without `kind`.")
            return "\n".join(lines)
        shown = found[: args.max_results]
        head = f"{len(found)} definition(s) of `{args.name}`{kind_note}:"
        body = []
        for d in shown:
            member = f" (in {d.parent})" if d.parent else ""
            body.append(f"{d.path}:{d.line}  {d.kind}{member}  {d.signature}")
        tail = []
        if len(found) > len(shown):
            tail.append(f"[{len(found) - len(shown)} more not shown: raise max_results or pass `kind`]")
        if idx.truncated:
            tail.append("[the index stopped at its file limit; some files were not indexed]")
        return "\n".join([head, *body, *tail])

    def find_references(args: FindReferencesInput, inv: Invocation) -> str:
        # lazy: the codemap service (its parse pool, multiprocessing) waits for the first call
        from tooldeck.codemap.service import codemap_service

        idx = codemap_service(rt).index(progress=_progress(inv))
        word = args.name.rsplit(".", 1)[-1]
        refs = idx.references(word, limit=args.max_results + 1)
        defs = idx.definitions(word)
        where = ", ".join(f"{d.path}:{d.line}" for d in defs[:5]) + (" …" if len(defs) > 5 else "")
        head_defs = f" (defined at {where})" if defs else " (no definition found in the workspace)"
        if not refs:
            return f"No references to `{word}`{head_defs}."
        shown = refs[: args.max_results]
        files: dict[str, list[str]] = {}
        for r in shown:
            where_in = f"[in {r.enclosing}]  " if r.enclosing else ""
            files.setdefault(r.path, []).append(f"  L{r.line}  {where_in}{r.text}")
        lines = [f"{len(shown)} reference(s) to `{word}` in {len(files)} file(s){head_defs}:"]
        for path, hits in files.items():
            lines.append(path)
            lines.extend(hits)
        if len(refs) > len(shown):
            lines.append(f"[more references not shown: raise max_results (now {args.max_results})]")
        return "\n".join(lines)

    return [
        tool(
            find_symbol,
            description="Find where a name is defined (tree-sitter index over the workspace, no language server "
            "needed): each definition's path:line, kind and signature. `Parent.name` narrows to members; `kind` "
            f"filters ({', '.join(KINDS)}).",
            read_only=True,
            idempotent=True,
        ),
        tool(
            find_references,
            description="Find the lines that use an identifier (comments and strings excluded), grouped by file, "
            "each with its enclosing definition. Definitions themselves are not listed (see find_symbol).",
            read_only=True,
            idempotent=True,
        ),
    ]
