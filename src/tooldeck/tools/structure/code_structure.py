"""get_code_structure: codemaps of files and folders (seed 004).

``{scope: selected|paths, paths, max_results (25), offset}``. Folders are
walked recursively under the ignore rules; a file named explicitly is mapped
even if ignored. Files without a grammar are reported, not silently dropped;
so are files that have one but no codemap (binary, minified, too large).
Results beyond ``max_results`` or the output budget are left out with a note
naming the ``offset`` that continues.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field, model_validator

from tooldeck.codemap.languages import language_for
from tooldeck.codemap.model import Codemap
from tooldeck.core import Invocation, ToolError, ToolInput, invalid_arguments, tool
from tooldeck.core.tool import Tool
from tooldeck.runtime import Runtime
from tooldeck.workspace.roots import Root, Workspace
from tooldeck.workspace.walk import walk_files

MAX_LISTED = 30  # names listed per "no codemap" group
BUDGET_RESERVE = 400  # tokens kept for the notes


class CodeStructureInput(ToolInput):
    scope: Literal["selected", "paths"] | None = Field(
        None, description="paths: the files/folders in `paths`; selected: the selected files. Default: paths if given."
    )
    paths: list[str] | None = Field(None, description="Files or folders; folders are processed recursively.")
    max_results: int = Field(25, ge=1, le=500, description="Most codemaps to return.")
    offset: int = Field(0, ge=0, description="Skip this many files with a grammar (to continue a long listing).")

    @model_validator(mode="after")
    def _paths_for_scope(self) -> CodeStructureInput:
        if self.scope == "paths" and not self.paths:
            raise ValueError("field `paths` is required when scope is 'paths' (or use scope='selected')")
        return self


@dataclass
class Targets:
    files: list[tuple[Root, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _add(targets: Targets, seen: set[tuple[str, str]], root: Root, rel: str) -> None:
    key = (root.path, rel)
    if key not in seen:
        seen.add(key)
        targets.files.append((root, rel))


def collect(ws: Workspace, paths: list[str]) -> Targets:
    """Expand ``paths`` into (root, rel) files: folders recursively, under the
    ignore rules; unresolvable paths are noted, not fatal (unless all fail)."""
    targets = Targets()
    seen: set[tuple[str, str]] = set()
    first_error: ToolError | None = None
    for path in paths:
        try:
            rp = ws.resolve(path)
        except ToolError as exc:
            first_error = first_error or exc
            targets.problems.append(f"{path}: {exc.message}")
            continue
        if os.path.isdir(rp.abs):
            start = "" if rp.rel == "." else rp.rel
            for rel in walk_files(ws.rules(rp.root), start):
                _add(targets, seen, rp.root, rel)
        else:
            _add(targets, seen, rp.root, rp.rel)
    if not targets.files and first_error is not None and len(targets.problems) == len(paths):
        raise first_error
    return targets


def _listing(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_LISTED])
    return shown + (f", … (+{len(names) - MAX_LISTED} more)" if len(names) > MAX_LISTED else "")


SELECT_FIRST = (
    "Nothing is selected, so there are no codemaps to show. Select files with manage_selection, "
    "or call get_code_structure with scope='paths' and `paths`."
)


@dataclass
class Page:
    """The files of one call: those with a grammar (``mapped``, of which ``page``
    is shown from ``offset``), those without, and paths that did not resolve."""

    targets: Targets
    mapped: list[tuple[Root, str]]
    no_grammar: list[str]
    offset: int
    page: list[tuple[Root, str]]


def plan_page(rt: Runtime, args: CodeStructureInput) -> Page | None:
    """Stage 1: which files, in which order, this call covers (None: nothing selected)."""
    ws = rt.workspace
    scope = args.scope or ("paths" if args.paths else "selected")
    if scope == "selected":
        provider = rt.provider("selected_paths")
        selected = list(provider()) if provider is not None else []
        if not selected:
            return None
        targets = collect(ws, selected)
    else:
        targets = collect(ws, args.paths or [])
    mapped = [(root, rel) for root, rel in targets.files if language_for(rel) is not None]
    no_grammar = [ws.display(os.path.join(root.path, rel)) for root, rel in targets.files if language_for(rel) is None]
    if args.offset and args.offset >= len(mapped) and mapped:
        raise invalid_arguments(
            f"offset {args.offset} is past the end: {len(mapped)} files have a grammar", field="offset"
        )
    page = mapped[args.offset : args.offset + args.max_results]
    return Page(targets, mapped, no_grammar, args.offset, page)


def compute(rt: Runtime, page: list[tuple[Root, str]], inv: Invocation) -> dict[tuple[str, str], object]:
    """Stage 2: the codemap (or the reason there is none) of every file of the page,
    root by root, through the cached codemap service."""
    # lazy: the codemap service (its parse pool, multiprocessing) waits for the first call
    from tooldeck.codemap.service import codemap_service

    svc = codemap_service(rt)
    by_root: dict[str, list[str]] = {}
    roots: dict[str, Root] = {}
    for root, rel in page:
        by_root.setdefault(root.path, []).append(rel)
        roots[root.path] = root

    def progress(done: int, total: int) -> None:
        if inv.is_observed and total >= 50:
            inv.emit_text("activity", f"codemaps: {done}/{total} files", replace=True)

    results: dict[tuple[str, str], object] = {}
    for root_path, rels in by_root.items():
        inv.check_cancelled()
        for rel, res in zip(rels, svc.codemaps(roots[root_path], rels, progress=progress), strict=True):
            results[(root_path, rel)] = res
    return results


def render(rt: Runtime, plan: Page, results: dict[tuple[str, str], object], max_results: int) -> str:
    """Stage 3: codemap blocks within the output budget, then notes naming what
    was left out and the offset that continues."""
    # lazy: the codemap service (its parse pool, multiprocessing) waits for the first call
    from tooldeck.codemap.service import codemap_service

    ws, svc = rt.workspace, codemap_service(rt)
    budget = max(1000, rt.budget_tokens - BUDGET_RESERVE)
    blocks: list[str] = []
    skipped: list[str] = []
    used = shown_files = 0
    cut_at: int | None = None
    for i, (root, rel) in enumerate(plan.page):
        res = results[(root.path, rel)]
        if not isinstance(res, Codemap):
            skipped.append(f"{ws.display(os.path.join(root.path, rel))} ({getattr(res, 'reason', 'unreadable')})")
            shown_files = i + 1
            continue
        text = svc.render(res)
        cost = rt.count_tokens(text) + 1
        if used + cost > budget and blocks:
            cut_at = i
            break
        blocks.append(text)
        used += cost
        shown_files = i + 1

    notes: list[str] = []
    if plan.targets.problems:
        notes.append("[not found: " + "; ".join(plan.targets.problems) + "]")
    if skipped:
        notes.append("[no codemap for: " + _listing(skipped) + "]")
    if plan.no_grammar:
        notes.append(
            f"[{len(plan.no_grammar)} file(s) have no codemap support (no grammar): {_listing(plan.no_grammar)}]"
        )
    consumed, total = plan.offset + shown_files, len(plan.mapped)
    if consumed < total:
        why = f"the {rt.budget_tokens}-token output budget" if cut_at is not None else f"max_results={max_results}"
        notes.append(
            f"[files {plan.offset + 1}-{consumed} of {total} with a grammar shown; {total - consumed} "
            f"more left out ({why}): call again with offset={consumed}, or narrow `paths`]"
        )
    if not blocks and not notes:
        return "No files found under the given paths."
    body = "\n\n".join(blocks) if blocks else "(no codemaps)"
    return body + ("\n\n" + "\n".join(notes) if notes else "")


def build(rt: Runtime) -> Tool:
    def get_code_structure(args: CodeStructureInput, inv: Invocation) -> str:
        plan = plan_page(rt, args)
        if plan is None:
            return SELECT_FIRST
        return render(rt, plan, compute(rt, plan.page, inv), args.max_results)

    return tool(
        get_code_structure,
        description=(
            "Codemaps: the outline of files or folders, every public class, function, method and type signature "
            "(never bodies), one per line as `<line> <signature>` (members a tab deeper; a long text shown again "
            "is `«n»`, labelled `«n=...»` first). Private names only counted. 17 languages. Pages with `offset`."
        ),
        read_only=True,
        idempotent=True,
    )
