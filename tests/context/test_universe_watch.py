"""A warm walk answered by the kernel's change queue: the tree is listed only
when the queue cannot say exactly what changed, and no change is missed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.require import require
from tooldeck.context.universe import Universe, Walked
from tooldeck.runtime import Runtime
from tooldeck.workspace import watch as watch_mod
from tooldeck.workspace.watch import events_reliable

pytestmark = pytest.mark.skipif(not events_reliable("/tmp"), reason="needs inotify on a local file system")


def backdate(path: Path, seconds: float = 600.0) -> None:
    t = time.time() - seconds
    os.utime(path, (t, t))


def rels(walked) -> list[str]:  # type: ignore[no-untyped-def]
    return [f.rel for f in walked.files]


def changed(walked) -> set[str]:  # type: ignore[no-untyped-def]
    return {rel for _root, rel in walked.changed}


def walk_after(runtime: Runtime, change: Callable[[], object]) -> tuple[Universe, Walked]:
    """A first walk, then ``change()``, then the walk under test."""
    uni = Universe()
    uni.walk(runtime.workspace)
    change()
    return uni, uni.walk(runtime.workspace)


@pytest.fixture
def tree(root: Path) -> Path:
    (root / "pkg").mkdir()
    for rel in ("a.py", "b.py", "pkg/c.py", "pkg/d.py"):
        (root / rel).write_text(f"# {rel}\nx = 1\n")
        backdate(root / rel)
    return root


def test_an_unchanged_tree_is_not_listed_again(runtime: Runtime, tree: Path) -> None:
    uni = Universe()
    first = uni.walk(runtime.workspace)
    assert uni.full_walks == 1
    for _ in range(3):
        again = uni.walk(runtime.workspace)
        assert rels(again) == rels(first) and again.changed == [] and again.same_files
    assert uni.full_walks == 1


def test_an_edit_a_stamp_cannot_see_is_still_reported(runtime: Runtime, tree: Path) -> None:
    """Same size, mtime put back: a stat walk would trust it; the event does not."""
    uni = Universe()
    uni.walk(runtime.workspace)
    before = os.stat(tree / "pkg/c.py")
    (tree / "pkg/c.py").write_text("# pkg/c.py\nx = 2\n")
    os.utime(tree / "pkg/c.py", ns=(before.st_atime_ns, before.st_mtime_ns))
    walked = uni.walk(runtime.workspace)
    assert changed(walked) == {"pkg/c.py"} and walked.same_files
    assert uni.full_walks == 1
    # a new size reaches the file's info
    (tree / "a.py").write_text("# a.py\nx = 1\ny = 2\n")
    walked = uni.walk(runtime.workspace)
    assert changed(walked) == {"a.py"}
    assert next(f.size for f in walked.files if f.rel == "a.py") == len("# a.py\nx = 1\ny = 2\n")
    assert uni.full_walks == 1


def test_a_removed_file_leaves_without_a_walk(runtime: Runtime, tree: Path) -> None:
    uni, walked = walk_after(runtime, (tree / "b.py").unlink)
    assert rels(walked) == ["a.py", "pkg/c.py", "pkg/d.py"]
    assert changed(walked) == {"b.py"} and not walked.same_files
    assert uni.full_walks == 1


def test_a_new_file_is_placed_by_a_walk(runtime: Runtime, tree: Path) -> None:
    uni, walked = walk_after(runtime, lambda: (tree / "pkg/bb.py").write_text("y = 1\n"))
    assert rels(walked) == ["a.py", "b.py", "pkg/bb.py", "pkg/c.py", "pkg/d.py"]
    assert "pkg/bb.py" in changed(walked)
    assert uni.full_walks == 2


def test_ignored_newcomers_cost_no_walk(runtime: Runtime, tree: Path) -> None:
    (tree / ".gitignore").write_text("*.log\n")

    def noise() -> None:
        (tree / "run.log").write_text("noise\n")
        (tree / "pkg" / "__pycache__").mkdir()
        (tree / "pkg" / "__pycache__" / "c.cpython-311.pyc").write_bytes(b"\0")

    uni, walked = walk_after(runtime, noise)
    assert "run.log" not in rels(walked) and walked.changed == []
    assert uni.full_walks == 1


def test_a_rule_file_change_walks_and_applies_the_new_rules(runtime: Runtime, tree: Path) -> None:
    uni, walked = walk_after(runtime, lambda: (tree / ".gitignore").write_text("pkg/d.py\n"))
    assert "pkg/d.py" not in rels(walked) and "pkg/d.py" in changed(walked)
    assert uni.full_walks == 2


def test_a_new_folder_is_walked_then_watched(runtime: Runtime, tree: Path) -> None:
    uni = Universe()
    uni.walk(runtime.workspace)
    (tree / "new").mkdir()
    (tree / "new" / "e.py").write_text("z = 1\n")
    walked = uni.walk(runtime.workspace)
    assert "new/e.py" in rels(walked) and uni.full_walks == 2
    backdate(tree / "new" / "e.py")
    uni.walk(runtime.workspace)
    (tree / "new" / "e.py").write_text("z = 3\n")
    assert changed(uni.walk(runtime.workspace)) == {"new/e.py"}
    assert uni.full_walks == 2


def test_a_renamed_folder_walks(runtime: Runtime, tree: Path) -> None:
    _uni, walked = walk_after(runtime, lambda: (tree / "pkg").rename(tree / "lib"))
    assert rels(walked) == ["a.py", "b.py", "lib/c.py", "lib/d.py"]
    assert changed(walked) >= {"pkg/c.py", "lib/c.py"}


def test_a_link_is_always_checked_again(runtime: Runtime, tree: Path) -> None:
    os.symlink("a.py", tree / "link.py")
    uni = Universe()
    uni.walk(runtime.workspace)
    assert changed(uni.walk(runtime.workspace)) == {"link.py"}
    assert uni.full_walks == 1


def test_an_overflowed_queue_falls_back_to_a_walk(runtime: Runtime, tree: Path) -> None:
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 200_000:
        pytest.skip(f"queue limit {limit} too large to overflow quickly")
    uni = Universe()
    uni.walk(runtime.workspace)
    a, b = os.open(tree / "a.py", os.O_WRONLY | os.O_APPEND), os.open(tree / "b.py", os.O_WRONLY | os.O_APPEND)
    try:
        for _ in range(limit // 2 + 100):  # alternate files: the kernel merges only identical neighbours
            os.write(a, b"#")
            os.write(b, b"#")
    finally:
        os.close(a)
        os.close(b)
    (tree / "pkg" / "c.py").write_text("# lost in the overflow\n")
    walked = uni.walk(runtime.workspace)
    assert uni.full_walks == 2
    assert {"a.py", "b.py", "pkg/c.py"} <= changed(walked)


def test_one_folder_under_two_paths_keeps_walking(runtime: Runtime, tree: Path) -> None:
    """A bind mount shows one folder twice; the kernel gives both paths one
    watch, so its events could name only one of them."""
    (tree / "mirror").mkdir()
    if subprocess.run(["mount", "--bind", str(tree / "pkg"), str(tree / "mirror")], capture_output=True).returncode:
        pytest.skip("cannot bind-mount here (needs root)")
    try:
        uni, _walked = walk_after(runtime, lambda: None)
        assert uni.full_walks == 2
    finally:
        subprocess.run(["umount", str(tree / "mirror")], check=True)


def test_too_many_folders_keep_walking(runtime: Runtime, tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watch_mod, "MAX_WATCHED_DIRS", 1)  # the root alone: pkg/ cannot be watched
    uni = Universe()
    uni.walk(runtime.workspace)
    uni.walk(runtime.workspace)
    assert uni.full_walks == 2


def test_new_roots_close_the_old_watches(runtime: Runtime, tree: Path, tmp_path: Path) -> None:
    uni = Universe()
    uni.walk(runtime.workspace)
    old = [w.watch for w in uni._walks.values()]
    other = tmp_path / "other"
    other.mkdir()
    (other / "z.py").write_text("z = 1\n")
    walked = uni.walk(Runtime.for_dirs([other], state_dir=tmp_path / "s2").workspace)
    assert rels(walked) == ["z.py"] and walked.changed is None
    assert all(w is not None and w._ino.closed for w in old)


def test_a_network_mount_inside_the_root_keeps_the_builds_walking(
    runtime: Runtime, tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = tmp_path / "mountinfo"
    info.write_text(f"22 1 8:1 / / rw - ext4 /dev/sda1 rw\n40 22 0:50 / {tree / 'pkg'} rw - nfs4 host:/x rw\n")
    monkeypatch.setattr(watch_mod, "MOUNTINFO", str(info))
    uni = Universe()
    uni.walk(runtime.workspace)
    uni.walk(runtime.workspace)
    assert uni.full_walks == 2  # pkg/ could change on another machine: no queue can say


def test_mount_types_that_hide_remote_changes_are_not_watched(tmp_path: Path) -> None:
    info = tmp_path / "mountinfo"
    info.write_text(
        "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
        "40 22 0:50 / /srv/nfs rw - nfs4 host:/x rw\n"
        "41 22 0:51 / /home/me/remote rw - fuse.sshfs me@host: rw\n"
        "42 40 8:2 / /srv/nfs/local rw - xfs /dev/sdb rw\n"
        "43 22 0:52 / /mnt/my\\040disk rw - 9p share rw\n"
    )
    m = str(info)
    assert events_reliable("/home/me/project", m)
    assert not events_reliable("/srv/nfs/project", m)
    assert not events_reliable("/home/me/remote/x", m)
    assert events_reliable("/srv/nfs/local/x", m)  # the deeper, local mount wins
    assert not events_reliable("/mnt/my disk/x", m)
    assert not events_reliable("/x", str(tmp_path / "missing"))


_LOCKED_SCENARIO = """
import json, sys
from tooldeck.context.universe import Universe
from tooldeck.runtime import Runtime
uni = Universe()
ws = Runtime.for_dirs([sys.argv[1]], state_dir=sys.argv[2]).workspace
for _ in range(2):
    walked = uni.walk(ws)
print(json.dumps([uni.full_walks, sorted(f.rel for f in walked.files)]), flush=True)
sys.stdin.readline()  # the folder is opened meanwhile
walked = uni.walk(ws)
print(json.dumps([uni.full_walks, sorted(f.rel for f in walked.files)]), flush=True)
"""


def test_a_folder_this_user_cannot_read_costs_no_walk_until_it_opens(tmp_path: Path) -> None:
    """The walk skips a folder it may not list, and no watch can be put on it;
    its parent's watch reports a change of its mode, which walks. Root reads
    every folder, so as root the scenario runs without the two capabilities
    that let it (``setpriv`` drops them from its bounding set)."""
    locked = tmp_path / "root" / "locked"
    locked.mkdir(parents=True)
    (tmp_path / "state").mkdir()
    (tmp_path / "root" / "a.py").write_text("a = 1\n")
    (locked / "b.py").write_text("b = 1\n")
    locked.chmod(0)
    command = [sys.executable, "-c", _LOCKED_SCENARIO, str(tmp_path / "root"), str(tmp_path / "state")]
    if os.geteuid() == 0:
        require("setpriv")  # as root, it gives up reading every folder
        command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        assert json.loads(proc.stdout.readline()) == [1, ["a.py"]]  # the second build did not walk
        locked.chmod(0o755)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline()) == [2, ["a.py", "locked/b.py"]]
        assert proc.wait(30) == 0
    finally:
        proc.kill()
        locked.chmod(0o755)
