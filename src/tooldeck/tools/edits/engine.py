"""Apply a V4A patch to a workspace: resolve, read, check, plan, write once.

The only module of the patch pipeline that touches the disk. Order matters and
is the point of the design: every path is resolved and every file read and
checked before :func:`plan.plan_patch` computes all new contents; only then
does one :class:`AtomicBatch` write them (temp files renamed in place; any
failure restores every file already changed and removes every file added).
An error at any step leaves the tree exactly as it was.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass

from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.tools.edits.plan import Content, Event, Plan, plan_patch
from tooldeck.tools.edits.v4a_parser import AddFile, DeleteFile, Patch, UpdateFile, parse_patch
from tooldeck.workspace.atomic import AtomicBatch, StaleWrite, retrying
from tooldeck.workspace.content import content_hash, decode_text, hash_matches, looks_binary, read_bytes
from tooldeck.workspace.roots import ResolvedPath, Workspace


@dataclass(frozen=True, slots=True)
class Written:
    """What one file became: for the summary and the annotated diff."""

    event: Event
    shown: str
    before: Content  # text, or the UTF-8 bytes read or written
    after: Content
    digest: str | None  # content hash of the new bytes (None when deleted)
    moved_from: str | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    files: list[Written]

    def summary(self) -> list[str]:
        """``A``/``M``/``D`` lines, grouped in that order like Codex prints them."""
        seen: set[tuple[str, str]] = set()
        out: list[str] = []
        for kind in "AMD":
            for w in self.files:
                if w.event.kind == kind and (kind, w.shown) not in seen:
                    seen.add((kind, w.shown))
                    out.append(f"{kind} {w.shown}")
        return out


def apply_patch_text(
    ws: Workspace,
    text: str,
    expected_hashes: Mapping[str, str] | None = None,
    *,
    show: str = "workspace",
    state_dir: str | os.PathLike[str] | None = None,
) -> Outcome:
    """Parse and apply ``text``; raise ToolError (nothing changed) on any failure.

    ``expected_hashes`` maps paths to the content hash the caller read; a file
    whose content differs is refused with ``conflict``. ``show="cwd"`` names
    files relative to the current directory (the console script). When
    another writer changes a file between this call's read and its commit,
    the patch is planned again on the new content (``conflict`` if it no
    longer applies there). ``state_dir`` holds the write locks and journal."""
    patch = parse_patch(text)
    return retrying(lambda _attempt: _apply(ws, patch, expected_hashes or {}, show, state_dir))


def _apply(
    ws: Workspace,
    patch: Patch,
    expected_hashes: Mapping[str, str],
    show: str,
    state_dir: str | os.PathLike[str] | None,
) -> Outcome:
    resolved = _resolve_all(ws, patch)
    by_key = {rp.abs: rp for rp in resolved.values()}

    def shown_of(rp: ResolvedPath) -> str:
        if show == "cwd":
            rel = os.path.relpath(rp.abs)
            return rel if not rel.startswith("..") else rp.abs
        return ws.display(rp.abs)

    names = {key: shown_of(rp) for key, rp in by_key.items()}
    raw, modes = _read_all(patch, resolved, names)
    _check_hashes(ws, patch, resolved, raw, names, expected_hashes)
    keys = {path: rp.abs for path, rp in resolved.items()}
    plan = plan_patch(patch, keys, raw, names)
    written = _commit(plan, by_key, raw, modes, names, state_dir)
    return _outcome(plan, names, written)


# ---------------------------------------------------------------------------
# steps


def _paths(patch: Patch) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for op in patch.ops:
        out.append((op.path, op.line))
        if isinstance(op, UpdateFile) and op.move_to is not None:
            out.append((op.move_to, op.line))
    return out


def _resolve_all(ws: Workspace, patch: Patch) -> dict[str, ResolvedPath]:
    resolved: dict[str, ResolvedPath] = {}
    folders: dict[str, str] = {}  # a patch's files share a few folders: each is resolved once
    for path, line in _paths(patch):
        if path in resolved:
            continue
        try:
            resolved[path] = ws.resolve(path, must_exist=False, write=True, field_name="path", folders=folders)
        except ToolError as exc:
            raise ToolError(
                exc.code, f"patch line {line} ({path}): {exc.message}. Nothing was changed.", exc.details
            ) from exc
    return resolved


def _read_all(
    patch: Patch, resolved: Mapping[str, ResolvedPath], names: Mapping[str, str]
) -> tuple[dict[str, bytes | None], dict[str, int]]:
    """Bytes and modes of every file the patch names; a file an Update reads
    must be UTF-8 text (checked here, before anything is planned)."""
    raw: dict[str, bytes | None] = {}
    modes: dict[str, int] = {}
    needs_text = {resolved[op.path].abs for op in patch.ops if isinstance(op, UpdateFile)}
    for op in patch.ops:
        targets = [(op.path, op)]
        if isinstance(op, UpdateFile) and op.move_to is not None:
            targets.append((op.move_to, op))
        for path, owner in targets:
            rp = resolved[path]
            key = rp.abs
            if key in raw:
                continue
            name = names[key]
            try:
                st = os.lstat(rp.abs)
            except (FileNotFoundError, NotADirectoryError):  # the write step says why it cannot be created
                raw[key] = None
                continue
            if stat.S_ISDIR(st.st_mode):
                verb = {AddFile: "add", DeleteFile: "delete", UpdateFile: "update"}[type(owner)]
                raise ToolError(
                    ErrorCode.NOT_A_FILE,
                    f"patch line {owner.line}: cannot {verb} {name}: it is a directory; apply_patch changes files "
                    "only. Nothing was changed.",
                    {"path": name, "line": owner.line},
                )
            fb = read_bytes(rp.abs, name, root=rp.root.path)
            raw[key] = fb.data
            modes[key] = fb.mode
            # binary_file unless UTF-8 text; ASCII without NUL is, and is checked without a decoded copy
            if key in needs_text and (not fb.data.isascii() or looks_binary(fb.data)):
                decode_text(fb.data, name)
    return raw, modes


def _check_hashes(
    ws: Workspace,
    patch: Patch,
    resolved: Mapping[str, ResolvedPath],
    raw: Mapping[str, bytes | None],
    names: Mapping[str, str],
    expected: Mapping[str, str],
) -> None:
    wanted: dict[str, str] = {}
    for path, digest in expected.items():
        rp = resolved.get(path) or ws.resolve(path, must_exist=False, field_name="expected_hashes")
        wanted[rp.abs] = digest
    for op in patch.ops:
        if op.expected_hash:
            wanted[resolved[op.path].abs] = op.expected_hash
    for key, digest in wanted.items():
        name = names.get(key, ws.display(key))
        data = raw.get(key)
        if key not in raw:
            raise ToolError(
                ErrorCode.INVALID_ARGUMENTS,
                f"expected_hashes names {name}, which the patch does not touch",
                {"path": name},
            )
        if data is None:
            raise ToolError(
                ErrorCode.CONFLICT,
                f"{name} no longer exists (expected hash {digest}); read the directory again. Nothing was changed.",
                {"path": name},
            )
        if not hash_matches(digest, data):
            raise ToolError(
                ErrorCode.CONFLICT,
                f"{name} changed since it was read (expected hash {digest}, now {content_hash(data)}); read it "
                "again and redo the patch. Nothing was changed.",
                {"path": name, "expected": digest, "actual": content_hash(data)},
            )


def _commit(
    plan: Plan,
    by_key: Mapping[str, ResolvedPath],
    raw: Mapping[str, bytes | None],
    modes: Mapping[str, int],
    names: Mapping[str, str],
    state_dir: str | os.PathLike[str] | None,
) -> dict[str, bytes]:
    """Write the plan in one batch; returns the bytes written per key (the
    outcome hashes them: each new content is encoded once)."""
    batch = AtomicBatch(state_dir)
    written: dict[str, bytes] = {}
    for ch in plan.changes:
        rp = by_key[ch.key]
        before = raw.get(ch.key)
        if ch.after is None:
            batch.delete(rp.root.path, rp.rel, expect=before)
        else:
            mode = modes.get(ch.mode_from) if ch.mode_from else None
            after = ch.after
            data = written[ch.key] = after if isinstance(after, bytes) else after.encode("utf-8")
            batch.write(rp.root.path, rp.rel, data, mode, expect=before, expect_absent=before is None)
    try:
        batch.commit()
    except StaleWrite:
        raise  # planned again on the new content by apply_patch_text
    except ToolError as exc:
        raise ToolError(exc.code, f"{exc.message}. No file was changed.", exc.details) from exc
    except OSError as exc:
        who = next((names[k] for k, rp in by_key.items() if rp.rel == batch.failed_rel), "a file")
        raise ToolError(
            ErrorCode.IO_ERROR,
            f"writing {who} failed ({exc.strerror or exc}); every file already written was restored, so nothing "
            "was changed",
            {"path": who},
        ) from exc
    return written


def _outcome(plan: Plan, names: Mapping[str, str], written: Mapping[str, bytes]) -> Outcome:
    finals = {c.key: c for c in plan.changes}
    digests = {key: content_hash(data) for key, data in written.items()}  # once per file, on the bytes written
    files: list[Written] = []
    for ev in plan.events:
        ch = finals.get(ev.key)
        before = ch.before if ch else None
        after = ch.after if ch else None
        digest = digests[ev.key] if after is not None else None
        moved = names[ev.moved_from] if ev.moved_from else None
        files.append(Written(ev, names[ev.key], before, after, digest, moved))
    return Outcome(files)
