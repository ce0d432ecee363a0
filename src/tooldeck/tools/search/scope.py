"""Where a search looks: the roots and, with ``filter.paths``, the folders and
files inside them, resolved under the workspace path rules.

A target is one root plus relative search paths (none = the whole root).
Explicit files are kept apart because both engines treat them like ripgrep
does: a file named explicitly is searched even if a filter or an ignore rule
would have skipped it while walking.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from pathspec import GitIgnoreSpec

from tooldeck.core import ToolError
from tooldeck.workspace.roots import Root, Workspace


@dataclass(frozen=True, slots=True)
class Target:
    index: int  # position of the root in the workspace (display order)
    root: Root
    dirs: tuple[str, ...] = ()  # relative folders; () with no files = the whole root
    files: tuple[str, ...] = ()  # relative files named explicitly

    @property
    def whole_root(self) -> bool:
        return not self.dirs and not self.files

    @property
    def rels(self) -> tuple[str, ...]:
        return (*self.dirs, *self.files)


def path_key(rel: str) -> str:
    """Sort key giving the workspace walker's order (depth-first, names
    sorted): the components compared in turn, as a tuple of them would be,
    but as one string (a fifth of the cost): "\0" separates them, and sorts
    before any character a name can hold, so a name sorts before the longer
    names it begins."""
    return rel.replace("/", "\0")


def _inside(rel: str, folder: str) -> bool:
    return rel == folder or rel.startswith(folder + "/")


def resolve_targets(ws: Workspace, paths: list[str] | None) -> list[Target]:
    """Targets for ``filter.paths`` (every root when None). Errors name the field."""
    if not paths:
        return [Target(i, r) for i, r in enumerate(ws.roots)]
    index = {r.id: i for i, r in enumerate(ws.roots)}
    whole: set[int] = set()
    dirs: dict[int, list[str]] = {}
    files: dict[int, list[str]] = {}
    for n, raw in enumerate(paths):
        name = f"filter.paths.{n}"
        try:
            rp = ws.resolve(raw, field_name=name)
        except ToolError as exc:
            raise ToolError(exc.code, f"field `{name}`: {exc.message}", {"field": name}) from exc
        i = index[rp.root.id]
        if rp.rel == ".":
            whole.add(i)
        elif os.path.isdir(rp.abs):
            dirs.setdefault(i, []).append(rp.rel)
        else:
            files.setdefault(i, []).append(rp.rel)
    out: list[Target] = []
    for i, root in enumerate(ws.roots):
        if i in whole:
            out.append(Target(i, root))
            continue
        ds = sorted(set(dirs.get(i, ())), key=path_key)
        kept: list[str] = []
        for d in ds:  # a folder inside another listed folder adds nothing
            if not any(_inside(d, k) for k in kept):
                kept.append(d)
        fs = sorted({f for f in files.get(i, ()) if not any(_inside(f, k) for k in kept)}, key=path_key)
        if kept or fs:
            out.append(Target(i, root, tuple(kept), tuple(fs)))
    return out


def exclude_spec(globs: tuple[str, ...]) -> GitIgnoreSpec | None:
    """The exclude globs as gitignore rules (the Python side of ``rg -g '!glob'``)."""
    return GitIgnoreSpec.from_lines(globs) if globs else None


def extension_ok(name: str, extensions: tuple[str, ...]) -> bool:
    return not extensions or any(name.endswith("." + ext) for ext in extensions)
