"""The patch check reads a loose blob without a git process, and only an
authentic one: its content must hash to the id asked for."""

from __future__ import annotations

import os
import zlib
from pathlib import Path

from tests.git.gitkit import GitCLI
from tooldeck.git.repo import open_repo
from tooldeck.git.worktree_check import loose_blob, sides_match_blobs


def _object_path(repo: GitCLI, oid: str) -> Path:
    return repo.path / ".git" / "objects" / oid[:2] / oid[2:]


def test_a_loose_blob_is_read_and_checked_against_its_id(repo: GitCLI) -> None:
    repo.commit("one", {"a.py": "alpha\nbeta\n"})
    oid = repo.sha("HEAD:a.py")
    objects = str(repo.path / ".git" / "objects")
    assert _object_path(repo, oid).is_file()
    assert loose_blob(objects, oid) == "alpha\nbeta\n"
    assert loose_blob(objects, oid[:7]) is None  # only full ids
    assert loose_blob(objects, "0" * 40) is None  # no such object


def test_a_planted_or_linked_object_file_is_not_believed(repo: GitCLI, tmp_path: Path) -> None:
    repo.commit("one", {"a.py": "alpha\n"})
    oid = repo.sha("HEAD:a.py")
    objects = str(repo.path / ".git" / "objects")
    path = _object_path(repo, oid)
    os.chmod(path, 0o644)
    forged = b"blob 7\0forged\n"
    path.write_bytes(zlib.compress(forged))  # well-formed, but not the content the id names
    assert loose_blob(objects, oid) is None
    outside = tmp_path / "outside"
    outside.write_bytes(zlib.compress(b"blob 6\0alpha\n"))
    path.unlink()
    path.symlink_to(outside)  # even the right content is not read through a link
    assert loose_blob(objects, oid) is None


def test_packed_blobs_are_still_checked_through_git(repo: GitCLI) -> None:
    repo.commit("one", {"a.py": "alpha\nbeta\n"})
    repo("gc", "-q")
    oid = repo.sha("HEAD:a.py")
    assert not _object_path(repo, oid).exists()
    r = open_repo(str(repo.path))
    objects = str(repo.path / ".git" / "objects")
    patch = (
        f"diff --git a/a.py b/a.py\ndeleted file mode 100644\nindex {oid[:7]}..0000000\n"
        "--- a/a.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-alpha\n-beta\n"
    )
    wrong = patch.replace("-beta", "-gamma")
    ids = [(oid, "0" * 40)] * 2
    assert sides_match_blobs(r.git, [patch, wrong], ids, objects) == [True, False]
    repo.commit("two", {"a.py": "alpha\nbeta\ndelta\n"})  # a loose blob beside the packed ones
    new = repo.sha("HEAD:a.py")
    loose = patch.replace(oid[:7], new[:7]).replace("-beta\n", "-beta\n-delta\n").replace("-1,2", "-1,3")
    assert sides_match_blobs(r.git, [loose, patch], [(new, "0" * 40), (oid, "0" * 40)], objects) == [True, True]
