"""The selection service: change and read the current tab's selection.

The programmatic face of ``manage_selection`` (and what ``context_builder``
builds on)::

    svc = selection_service(rt)
    svc.set([Item("src/app.py"), Item("src/big.py", "slices", (LineRange(10, 40, "parser"),)),
             Item("src/util.py", "codemap")])
    bd = svc.breakdown()          # tokens per file and per component, bd.total
    text = svc.package().text()   # the Markdown context package

Every change is: resolve the named paths (I/O, no lock) → apply a pure edit to
a copy of the stored selection → recompute automatic codemaps → save if no
other writer saved in between (optimistic, version-checked), else redo from a
fresh read; the last attempt holds the write lock throughout, so a change
always lands and never overwrites another process's change.

Automatic codemaps (while the tab's flag is on): the files related to the
full/slices files (:mod:`tooldeck.selection.related`) are kept as ``auto``
codemap entries, recomputed after every change. Changing codemap entries by
hand (adding or removing codemaps, promote, demote) turns the flag off; what
it had added stays, as ordinary entries. ``clear`` and ``set`` start a fresh
selection with the flag at its default (setting ``code_maps.auto_codemap``),
and any change may set it explicitly.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING

from tooldeck.codemap.languages import has_codemap
from tooldeck.core.errors import ErrorCode, ToolError, invalid_arguments
from tooldeck.selection.expand import expand
from tooldeck.selection.package import (
    Package,
    codemap_chunk,
    fenced,
    full_chunk,
    slices_chunk,
    split_lines,
    tree_text,
    unavailable_chunk,
)
from tooldeck.selection.related import codemap_api, related_files
from tooldeck.selection.types import Breakdown, Change, FileTokens, Item, label
from tooldeck.settings import setting
from tooldeck.state.selections import LineRange, Mode, SelectedFile, Selection, merge_ranges, subtract_ranges
from tooldeck.state.tables import ContextDB
from tooldeck.state.workspaces import workspace_service
from tooldeck.tokens import TokenCounter
from tooldeck.workspace.content import read_text

if TYPE_CHECKING:
    from tooldeck.runtime import Runtime

ATTEMPTS = 12


class SelectionService:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.workspaces = workspace_service(rt)
        self.db: ContextDB = self.workspaces.db
        self.counter = TokenCounter(self.db, lambda: str(setting(rt, "tokens.encoding")))
        self.conflicts = 0  # saves lost to another writer and redone (tests, benchmarks)

    # reading ---------------------------------------------------------------------
    def tab_id(self) -> str:
        return self.workspaces.current_tab_id()

    def snapshot(self) -> Selection:
        return self.db.load_selection(self.tab_id())[0]

    def selected_paths(self) -> list[str]:
        """Root-relative paths of the selected files inside the current roots
        (for get_file_tree's ``*`` and ``scope=selected`` consumers)."""
        ws = self.rt.workspace
        out: list[str] = []
        for p in self.db.selected_paths(self.tab_id()):
            root = ws.containing_root(p)
            if root is not None:
                out.append(root.relative(p))
        return out

    def prompt(self) -> str:
        return self.db.prompt(self.tab_id())

    def set_prompt(self, text: str) -> str:
        return self.db.set_prompt(self.tab_id(), text)

    def append_prompt(self, text: str) -> str:
        return self.db.append_prompt(self.tab_id(), text)

    # resolving -------------------------------------------------------------------
    def resolve(self, items: list[Item], notes: list[str]) -> list[SelectedFile]:
        """Items → selected files (folders expanded, slices checked against the file)."""
        ws = self.rt.workspace
        out: dict[str, SelectedFile] = {}
        for i, item in enumerate(items):
            if item.mode == "slices":
                rp = ws.resolve(item.path, field_name=f"slices.{i}.path")
                shown = ws.display(rp.abs)
                if not os.path.isfile(rp.abs):
                    raise invalid_arguments(f"field `slices.{i}.path`: {shown} is not a file; slices need a file")
                if not item.ranges:
                    raise invalid_arguments(f"field `slices.{i}.ranges`: give at least one range for {shown}")
                text, _ = read_text(rp.abs, shown, root=rp.root.path)
                total = len(split_lines(text))
                ranges: list[LineRange] = []
                for r in item.ranges:
                    if r.start > max(total, 1):
                        raise invalid_arguments(
                            f"field `slices.{i}.ranges`: {shown} has {total} lines; "
                            f"range {r.label()} starts past the end"
                        )
                    if r.end > total:
                        notes.append(f"{shown}: range {r.label()} cut to the last line ({total})")
                        r = replace(r, end=max(total, r.start))
                    ranges.append(r)
                prev = out.get(rp.abs)
                merged = merge_ranges(list(prev.ranges if prev and prev.mode == "slices" else ()) + ranges)
                out[rp.abs] = SelectedFile(rp.abs, "slices", merged)
                continue
            exp = expand(ws, [item.path], codemap_only=item.mode == "codemap", field_name=f"paths.{i}")
            notes.extend(exp.notes(ws))
            if not exp.files:
                notes.append(f"{item.path}: no selectable files")
            for p in exp.files:
                out[p] = SelectedFile(p, item.mode)
        return list(out.values())

    def _abs_targets(self, paths: list[str]) -> list[str]:
        """Paths to match against selected entries (need not exist any more)."""
        ws = self.rt.workspace
        out = []
        for i, p in enumerate(paths):
            if os.path.isabs(p) and ws.containing_root(os.path.realpath(p)) is None:
                out.append(os.path.normpath(p))  # an entry left outside the roots (folder removed)
                continue
            out.append(ws.resolve(p, must_exist=False, field_name=f"paths.{i}").abs)
        return out

    @staticmethod
    def _matching(sel: Selection, targets: list[str]) -> list[str]:
        hits: list[str] = []
        for t in targets:
            prefix = t.rstrip(os.sep) + os.sep
            hits.extend(p for p in sorted(sel.files) if (p == t or p.startswith(prefix)) and p not in hits)
        return hits

    # changing --------------------------------------------------------------------
    def _mutate(
        self, op: str, edit: Callable[[Selection, Change], None], *, dry_run: bool = False
    ) -> tuple[Change, Selection]:
        tab = self.tab_id()
        for attempt in range(ATTEMPTS):
            locked = attempt == ATTEMPTS - 1
            with self.db.store.transaction() if locked else nullcontext():
                sel, version = self.db.load_selection(tab)
                if version < 0:
                    raise ToolError(ErrorCode.NOT_FOUND, "the current tab was closed; call again")
                new = sel.copy()
                change = Change(op, auto_before=sel.auto_codemaps)
                edit(new, change)
                self._recompute_auto(new, change)
                change.auto_after = new.auto_codemaps
                if dry_run:
                    return change, new
                if self.db.save_selection(tab, new, None if locked else version):
                    return change, new
                self.conflicts += 1
            time.sleep(random.uniform(0.001, 0.004) * (attempt + 1))
        raise ToolError(ErrorCode.CONFLICT, "the selection kept changing under other writers; call again")

    def _recompute_auto(self, sel: Selection, change: Change) -> None:
        if not sel.auto_codemaps:
            return
        limit = int(setting(self.rt, "code_maps.auto_max_files"))
        targets = sorted(p for p, f in sel.files.items() if f.mode in ("full", "slices"))
        manual = sum(1 for f in sel.files.values() if not f.auto)
        ranked = related_files(self.rt, targets, limit + manual) if targets and limit else []
        want = [p for p in ranked if (p not in sel.files or sel.files[p].auto) and has_codemap(p)][:limit]
        keep = set(want)
        for p, f in list(sel.files.items()):
            if f.auto and p not in keep:
                del sel.files[p]
                change.auto_removed.append(p)
        for p in want:
            if p not in sel.files:
                sel.files[p] = SelectedFile(p, "codemap", auto=True)
                change.auto_added.append(p)

    @staticmethod
    def _hand_codemaps(sel: Selection, change: Change) -> None:
        if sel.auto_codemaps:
            sel.manual_off()
            change.notes.append("automatic codemaps are now off (codemaps changed by hand); auto_codemaps=true resumes")

    def _auto_flag(self, sel: Selection, value: bool | None) -> None:
        if value is True:
            sel.auto_codemaps = True
        elif value is False:
            sel.manual_off()

    @staticmethod
    def _put(sel: Selection, change: Change, entry: SelectedFile) -> None:
        old = sel.files.get(entry.path)
        if entry.mode == "slices" and old is not None and old.mode == "slices":
            entry = replace(entry, ranges=merge_ranges(old.ranges + entry.ranges))
        if old == entry:
            change.unchanged.append(entry.path)
        elif old is None:
            change.added.append(entry.path)
        else:
            change.updated.append(entry.path)
        sel.files[entry.path] = entry

    def add(
        self, items: list[Item], *, auto_codemaps: bool | None = None, dry_run: bool = False
    ) -> tuple[Change, Selection]:
        notes: list[str] = []
        entries = self.resolve(items, notes)

        def edit(sel: Selection, change: Change) -> None:
            change.notes.extend(notes)
            if any(e.mode == "codemap" for e in entries):
                self._hand_codemaps(sel, change)
            for e in entries:
                self._put(sel, change, e)
            self._auto_flag(sel, auto_codemaps)

        return self._mutate("preview" if dry_run else "add", edit, dry_run=dry_run)

    def set(self, items: list[Item], *, auto_codemaps: bool | None = None) -> tuple[Change, Selection]:
        notes: list[str] = []
        entries = self.resolve(items, notes)
        default_auto = bool(setting(self.rt, "code_maps.auto_codemap"))

        def edit(sel: Selection, change: Change) -> None:
            change.notes.extend(notes)
            before = dict(sel.files)
            sel.files.clear()
            sel.auto_codemaps = default_auto
            if any(e.mode == "codemap" for e in entries):
                self._hand_codemaps(sel, change)
            for e in entries:
                old = before.get(e.path)
                sel.files[e.path] = e
                (change.unchanged if old == e else change.updated if old else change.added).append(e.path)
            change.removed.extend(p for p in sorted(before) if p not in sel.files and not before[p].auto)
            self._auto_flag(sel, auto_codemaps)

        return self._mutate("set", edit)

    def clear(self, *, auto_codemaps: bool | None = None) -> tuple[Change, Selection]:
        default_auto = bool(setting(self.rt, "code_maps.auto_codemap"))

        def edit(sel: Selection, change: Change) -> None:
            change.removed.extend(sorted(sel.files))
            sel.files.clear()
            sel.auto_codemaps = default_auto
            self._auto_flag(sel, auto_codemaps)

        return self._mutate("clear", edit)

    def remove(
        self, paths: list[str], slices: list[Item] | None = None, *, auto_codemaps: bool | None = None
    ) -> tuple[Change, Selection]:
        targets = self._abs_targets(paths)
        cuts = [(self._abs_targets([s.path])[0], s) for s in slices or []]

        def edit(sel: Selection, change: Change) -> None:
            hits = self._matching(sel, targets)
            if not hits and not cuts:
                raise ToolError(
                    ErrorCode.NOT_FOUND,
                    "none of those paths is selected; see manage_selection op=get view=files",
                    {"field": "paths"},
                )
            if any(sel.files[p].mode == "codemap" for p in hits):
                self._hand_codemaps(sel, change)
            for p in hits:
                del sel.files[p]
                change.removed.append(p)
            for path, item in cuts:
                cur = sel.files.get(path)
                if cur is None or cur.mode != "slices":
                    raise ToolError(
                        ErrorCode.NOT_FOUND,
                        f"{self.rt.workspace.display(path)} is not selected as slices; nothing to cut",
                        {"field": "slices"},
                    )
                left = subtract_ranges(cur.ranges, list(item.ranges))
                if left:
                    sel.files[path] = replace(cur, ranges=left)
                    change.updated.append(path)
                else:
                    del sel.files[path]
                    change.removed.append(path)
            self._auto_flag(sel, auto_codemaps)

        return self._mutate("remove", edit)

    def promote(self, paths: list[str], *, auto_codemaps: bool | None = None) -> tuple[Change, Selection]:
        """Codemap entries under ``paths`` become full files."""
        return self._retype("promote", paths, ("codemap",), "full", auto_codemaps)

    def demote(self, paths: list[str], *, auto_codemaps: bool | None = None) -> tuple[Change, Selection]:
        """Full and slices entries under ``paths`` become codemaps."""
        return self._retype("demote", paths, ("full", "slices"), "codemap", auto_codemaps)

    def _retype(
        self, op: str, paths: list[str], source: tuple[Mode, ...], target: Mode, auto_codemaps: bool | None
    ) -> tuple[Change, Selection]:
        targets = self._abs_targets(paths)
        shown = self.rt.workspace.display

        def edit(sel: Selection, change: Change) -> None:
            hits = self._matching(sel, targets)
            movable = [p for p in hits if sel.files[p].mode in source]
            if target == "codemap":
                unsupported = [p for p in movable if not has_codemap(p)]
                if unsupported:
                    change.notes.append(
                        "no codemap language, left as they are: " + ", ".join(shown(p) for p in unsupported[:5])
                    )
                movable = [p for p in movable if has_codemap(p)]
            if not movable:
                what = "selected as codemaps" if target == "full" else "selected in full or as slices (with a codemap)"
                raise ToolError(
                    ErrorCode.NOT_FOUND,
                    f"nothing to {op}: none of those paths is {what}; see manage_selection op=get view=files",
                    {"field": "paths"},
                )
            self._hand_codemaps(sel, change)
            for p in movable:
                sel.files[p] = SelectedFile(p, target)
                change.updated.append(p)
            change.unchanged.extend(p for p in hits if p not in movable)
            self._auto_flag(sel, auto_codemaps)

        return self._mutate(op, edit)

    # the package and its tokens ----------------------------------------------------------
    def package(
        self,
        selection: Selection | None = None,
        prompt: str | None = None,
        *,
        include_tree: bool | None = None,
        include_codemaps: bool | None = None,
        line_numbers: bool | None = None,
    ) -> tuple[Package, dict[str, str]]:
        """The Markdown package of ``selection`` (default: the current one) and
        the status of files whose content could not be included."""
        rt = self.rt
        sel = selection if selection is not None else self.snapshot()
        text = prompt if prompt is not None else self.prompt()
        if include_tree is None:
            include_tree = bool(setting(rt, "prompt_packaging.include_tree"))
        if include_codemaps is None:
            include_codemaps = bool(setting(rt, "prompt_packaging.include_codemaps"))
        if line_numbers is None:
            line_numbers = bool(setting(rt, "prompt_packaging.line_numbers"))
        pkg, status = Package(), {}
        pkg.add("headings", "# Context")
        if text.strip():
            pkg.add("headings", "## Prompt")
            pkg.add("prompt", text.rstrip("\n"))
        files = sel.sorted()
        if include_tree and files:
            pkg.add("headings", "## File tree")
            pkg.add("tree", fenced(self.tree(sel), "text"))
        content = [f for f in files if f.mode != "codemap"]
        if content:
            pkg.add("headings", "## Files")
            for f in content:
                body, why = self._content_chunk(f, line_numbers)
                if why:
                    status[f.path] = why
                pkg.add("files" if f.mode == "full" else "slices", body, f.path)
        maps = [f for f in files if f.mode == "codemap"] if include_codemaps else []
        if maps:
            pkg.add("headings", "## Codemaps")
            api = codemap_api(rt)
            for f in maps:
                body, why = self._codemap_chunk(f, api)
                if why:
                    status[f.path] = why
                pkg.add("codemaps", body, f.path)
        return pkg, status

    def tree(self, sel: Selection) -> str:
        ws = self.rt.workspace
        groups: list[tuple[str, list[tuple[str, str]]]] = []
        placed: set[str] = set()
        for root in ws.roots:
            items = []
            for f in sel.sorted():
                if f.path not in placed and ws.containing_root(f.path) == root:
                    items.append((root.relative(f.path), label(f)))
                    placed.add(f.path)
            if items:
                groups.append((root.path, items))
        rest = [(f.path.lstrip("/"), label(f)) for f in sel.sorted() if f.path not in placed]
        if rest:
            groups.append(("(outside the roots)", rest))
        return tree_text(groups)

    def _located(self, f: SelectedFile) -> tuple[str, str | None]:
        ws = self.rt.workspace
        shown = ws.display(f.path)
        if ws.containing_root(f.path) is None:
            return shown, "outside the workspace roots"
        if not os.path.isfile(f.path):
            return shown, "missing: the file no longer exists"
        return shown, None

    def _content_chunk(self, f: SelectedFile, line_numbers: bool) -> tuple[str, str | None]:
        shown, why = self._located(f)
        if why:
            return unavailable_chunk(shown, why), why
        root = self.rt.workspace.containing_root(f.path)
        if root is None:
            return unavailable_chunk(shown, "outside the workspace roots"), "outside the workspace roots"
        try:
            text, _ = read_text(f.path, shown, root=root.path)
        except ToolError as exc:
            return unavailable_chunk(shown, f"unreadable: {exc.message}"), "unreadable"
        if f.mode == "slices":
            return slices_chunk(shown, text, f.ranges), None
        return full_chunk(shown, text, line_numbers=line_numbers), None

    def _codemap_chunk(self, f: SelectedFile, api: object | None) -> tuple[str, str | None]:
        shown, why = self._located(f)
        if why:
            return unavailable_chunk(shown, why), why
        if api is None:
            why = "codemaps unavailable (disabled in settings or not installed)"
            return unavailable_chunk(shown, why), "no codemap"
        root = self.rt.workspace.containing_root(f.path)
        assert root is not None
        try:
            cm = api.codemap(root, root.relative(f.path))  # type: ignore[attr-defined]
            rendered = api.render(cm) if cm is not None else None  # type: ignore[attr-defined]
        except ToolError as exc:
            return unavailable_chunk(shown, f"no codemap: {exc.message}"), "no codemap"
        if not rendered:
            return unavailable_chunk(shown, "no codemap for this file"), "no codemap"
        return codemap_chunk(shown, rendered), None

    def breakdown(self, selection: Selection | None = None, prompt: str | None = None) -> Breakdown:
        """Tokens of the package per chunk (cached by content hash), summed per
        file and per component."""
        sel = selection if selection is not None else self.snapshot()
        pkg, status = self.package(sel, prompt)
        return self.breakdown_of(pkg, sel, status)

    def breakdown_of(self, pkg: Package, sel: Selection, status: dict[str, str]) -> Breakdown:
        """The breakdown of a package already built from ``sel``."""
        counts = self.counter.count_many([c.text for c in pkg.chunks])
        bd = Breakdown()
        per_file: dict[str, int] = {}
        for chunk, n in zip(pkg.chunks, counts, strict=True):
            if chunk.path is not None:
                per_file[chunk.path] = per_file.get(chunk.path, 0) + n
            elif chunk.component == "prompt":
                bd.prompt += n
            elif chunk.component == "tree":
                bd.tree += n
            else:
                bd.framing += n
        bd.framing += len(pkg.chunks)  # a blank line between chunks (and the final newline): ~1 token each
        shown = self.rt.workspace.display
        for f in sel.sorted():
            bd.files.append(
                FileTokens(f.path, shown(f.path), f.mode, per_file.get(f.path, 0), f.auto, f.ranges, status.get(f.path))
            )
        return bd


def selection_service(rt: Runtime) -> SelectionService:
    return rt.service("selection", SelectionService)
