"""Checking what git read from the working tree before it is shown.

git opens working-tree files by name. If a folder of the checkout is swapped
for a symbolic link while ``git diff`` runs, git can read a file outside the
checkout (it checks for leading symlinks, then opens the path later). That
is true of either side of a patch: the working tree's, and also a blob's,
which git reads from the working-tree file instead of its object store when
the index says the file is unchanged (``reuse_worktree_file``: a deleted
file's ``-`` lines were once the outside file's). So every side of a patch
is checked: a side with a blob id against that blob read from the object
store (:func:`blob_texts`), the working tree's side against the file read
again through tooldeck's safe path (:func:`tooldeck.workspace.content.read_lines`:
from the checkout's top, no link followed). A patch that disagrees is
replaced by a note, never shown.
"""

from __future__ import annotations

import hashlib
import os
import re
import zlib
from collections.abc import Iterable, Sequence
from typing import Any

from tooldeck.core.errors import ToolError
from tooldeck.workspace.content import read_lines

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_INDEX = re.compile(r"^index ([0-9a-f]+)\.\.([0-9a-f]+)", re.M)


def side_lines(patch: str, new: bool) -> dict[int, str] | None:
    """Line number → text of one side of a unified patch: the new side's
    context and ``+`` lines, or the old side's context and ``-`` lines; None
    when that side has nothing to check (a deleted or added file's empty
    side, a combined diff)."""
    if patch.startswith("diff --cc ") or ("\n+++ /dev/null" if new else "\n--- /dev/null") in patch:
        return None
    mine, other = ("+", "-") if new else ("-", "+")
    out: dict[int, str] = {}
    number = 0
    in_hunk = False
    group = 2 if new else 1
    for line in patch.split("\n"):
        first = line[:1]
        if first == "@":
            m = _HUNK.match(line)
            if m:
                number, in_hunk = int(m.group(group)), True
                continue
        if not in_hunk or not first or first == "\\":
            continue
        if first == " " or first == mine:
            out[number] = line[1:]
            number += 1
        elif first != other:
            in_hunk = False  # the next file's header or trailing text
    return out


def blob_ids(patch: str) -> tuple[str | None, str | None]:
    """The (old, new) blob ids of the patch's ``index`` line; None for a
    side git did not take from its object store (all zeros: the working tree)."""
    m = _INDEX.search(patch.split("\n@@", 1)[0])
    if m is None:
        return None, None
    old, new = m.groups()
    return (None if not old.strip("0") else old), (None if not new.strip("0") else new)


def side_matches_blob(patch: str, new: bool, blob: str) -> bool:
    """Whether one side of the patch equals ``blob`` (that side's content,
    read from the object store) line for line."""
    wanted = side_lines(patch, new)
    if not wanted:
        return True
    lines = blob.split("\n")
    return all(0 < n <= len(lines) and lines[n - 1] == text for n, text in wanted.items())


def patch_matches_worktree(toplevel: str, rel: str, patch: str) -> bool:
    """Whether the patch's new side equals the working-tree file read safely."""
    wanted = side_lines(patch, True)
    if not wanted:
        return True
    try:
        safe = read_lines(os.path.join(toplevel, rel), rel, set(wanted), root=toplevel)
    except (ToolError, OSError):
        return False
    # git prints the line's bytes; a CRLF file keeps its \r in both
    return all(safe.get(n) == text for n, text in wanted.items())


_HASHES = {40: hashlib.sha1, 64: hashlib.sha256}  # full id length -> the object format's hash
MAX_LOOSE_BYTES = 4 << 20  # a larger loose object is left to cat-file


def loose_blob(objects_dir: str, oid: str) -> str | None:
    """The content of blob ``oid`` (a full id) when it is a loose object of
    ``objects_dir``, else None. Authentic whatever file it came from: the
    object's own hash must be ``oid`` (so a planted or swapped file can only
    make it None, never change what is compared)."""
    hash_fn = _HASHES.get(len(oid))
    if hash_fn is None:
        return None
    try:
        fd = os.open(os.path.join(objects_dir, oid[:2], oid[2:]), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        # read its size (+1), not a 4 MB buffer: allocating that cost more than the read itself
        size = os.fstat(fd).st_size
        packed = os.read(fd, size + 1) if size <= MAX_LOOSE_BYTES else b""
        if not packed or len(packed) > MAX_LOOSE_BYTES:
            return None
        raw = zlib.decompressobj().decompress(packed, MAX_LOOSE_BYTES + 64)
    except (OSError, zlib.error):
        return None
    finally:
        os.close(fd)
    head, nul, body = raw.partition(b"\0")
    if not nul or head != b"blob %d" % len(body) or hash_fn(raw).hexdigest() != oid:
        return None
    return body.decode("utf-8", "replace")


def blob_texts(git: Any, ids: Iterable[str], objects_dir: str | None = None) -> dict[str, str]:
    """The content of each blob id, read from the object store: the loose
    objects of ``objects_dir`` directly (full ids), the rest in one ``git
    cat-file --batch`` (an id git cannot resolve is left out)."""
    out: dict[str, str] = {}
    wanted = sorted(set(ids))
    if objects_dir is not None:
        for oid in wanted:
            text = loose_blob(objects_dir, oid)
            if text is not None:
                out[oid] = text
        wanted = [oid for oid in wanted if oid not in out]
    if not wanted:
        return out
    data = git.run(["cat-file", "--batch"], input=("\n".join(wanted) + "\n").encode()).stdout
    pos = 0
    for oid in wanted:
        end = data.find(b"\n", pos)
        if end < 0:
            break
        header = data[pos:end].split()
        pos = end + 1
        if len(header) != 3 or header[1] != b"blob":
            continue  # "<id> missing" / "ambiguous": nothing follows
        size = int(header[2])
        out[oid] = data[pos : pos + size].decode("utf-8", "replace")
        pos += size + 1
    return out


def sides_match_blobs(
    git: Any,
    patches: Sequence[str],
    full_ids: Sequence[tuple[str, str]] | None = None,
    objects_dir: str | None = None,
) -> list[bool]:
    """Per single-file patch: whether every side git names by a blob id of
    its object store is that blob's content (read from the store, not the
    working tree). ``full_ids``: each patch's (old, new) ids from the raw
    listing; a patch's abbreviated id they extend is asked for in full (git
    then finds it without resolving an abbreviation among every loose object,
    and a loose one is read from ``objects_dir`` without a git process)."""
    ids = [blob_ids(p) for p in patches]
    if full_ids is not None:
        ids = [(_full(old, fo), _full(new, fn)) for (old, new), (fo, fn) in zip(ids, full_ids, strict=True)]
    blobs = blob_texts(git, [i for pair in ids for i in pair if i], objects_dir)
    out: list[bool] = []
    for patch, (old, new) in zip(patches, ids, strict=True):
        ok = True
        for side, oid in ((False, old), (True, new)):
            blob = blobs.get(oid) if oid is not None else None
            # no such blob: the side is the working tree's (git hashed it for the header): the caller
            # checks it against the safe read
            if blob is not None and ok:
                ok = side_matches_blob(patch, side, blob)
        out.append(ok)
    return out


def _full(abbrev: str | None, full: str) -> str | None:
    """``full`` when it is the object ``abbrev`` names, else ``abbrev``; None
    when the listing says this side is the working tree's (all zeros: not
    taken from the object store; the caller checks it against a safe read)."""
    if full and not full.strip("0"):
        return None
    if abbrev is not None and full.startswith(abbrev):
        return full
    return abbrev


def unverified_note(header: str) -> str:
    return header + "(this file changed while git read it; run the diff again)\n"
