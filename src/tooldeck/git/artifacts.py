"""Diff snapshots on disk: ``MAP.txt`` plus one ``.patch`` per changed file,
under ``<state dir>/git-artifacts/<id>/``.

Why: a large diff does not fit a model's context, but an agent with a shell
(or a reviewer) can open the patches one by one. File
names are derived from the changed paths, flattened so nothing can land
outside the snapshot folder. Each file is written atomically
(:func:`~tooldeck.workspace.atomic.write_file`) into a fresh folder, MAP.txt
last, so a MAP.txt means a complete snapshot; on failure the folder is
removed (one descriptor at a time, so a thousand-file diff is fine).
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass

from tooldeck.git.changes import ChangeSet, FileChange
from tooldeck.workspace.atomic import write_file

ARTIFACTS_DIR = "git-artifacts"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True, slots=True)
class Snapshot:
    directory: str  # absolute
    map_path: str
    patches: list[tuple[FileChange, str]]  # (file, absolute patch path)


def patch_file_name(index: int, fc: FileChange) -> str:
    flat = _UNSAFE.sub("_", fc.path.replace("/", "__")).strip("._") or "file"
    return f"{index:03d}-{flat[:120]}.patch"


def stat_text(fc: FileChange) -> str:
    if fc.binary:
        return "binary"
    return f"+{fc.added} -{fc.deleted}"


def write_snapshot(
    state_dir: str,
    changes: ChangeSet,
    *,
    repo_label: str,
    show_path: Callable[[str], str],
) -> Snapshot:
    """Write MAP.txt and the patches (already loaded on ``changes.files``)."""
    snap_id = time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)
    rel_dir = f"{ARTIFACTS_DIR}/{snap_id}"
    os.makedirs(state_dir, exist_ok=True)
    entries: list[tuple[FileChange, str]] = []
    lines = [
        f"repository: {repo_label}",
        f"compare: {changes.spec.label} ({changes.spec.description})",
        f"created: {time.strftime('%Y-%m-%dT%H:%M:%S%z')}",
        f"{len(changes.files)} files changed, +{changes.added} -{changes.deleted}",
        "",
    ]
    try:
        for i, fc in enumerate(changes.files, 1):
            name = patch_file_name(i, fc)
            patch = (fc.patch or "").encode("utf-8", "surrogateescape")
            write_file(state_dir, f"{rel_dir}/{name}", patch, state_dir=state_dir)
            shown = show_path(fc.path)
            if fc.old_path:
                shown = f"{show_path(fc.old_path)} -> {shown}"
            lines.append(f"{fc.status}\t{stat_text(fc)}\t{shown}\t{name}")
            entries.append((fc, os.path.join(state_dir, rel_dir, name)))
        listing = ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")
        write_file(state_dir, f"{rel_dir}/MAP.txt", listing, state_dir=state_dir)
    except BaseException:
        shutil.rmtree(os.path.join(state_dir, rel_dir), ignore_errors=True)
        raise
    directory = os.path.join(state_dir, rel_dir)
    return Snapshot(directory, os.path.join(directory, "MAP.txt"), entries)
