"""Issue 28: a forged journal intent must never make the next tooldeck process
create, replace or delete a file — outside the roots above all.

The attack as a model drives it: `tooldeck call` serves a root that holds
the state directory (``TOOLDECK_STATE_DIR`` inside it, as ``$HOME`` holds
``~/.local/state/tooldeck``); the model writes ``journal/<batch>/intent.json``
naming a folder outside the roots, plus the "backup" whose content it wants
there, and waits for the next call to "recover" it. The host then checks
that no file appeared or vanished outside the roots. The same forgeries are
then written straight to disk (as if by other means) and the next call runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tooldeck.runtime import Runtime
from tooldeck.workspace import journal
from tooldeck.workspace.atomic import AtomicBatch

pytestmark = pytest.mark.timeout(180)

STATE_REL = ".local/state/tooldeck"


def tooldeck(state: Path, root: Path, tool: str, args: dict | str) -> subprocess.CompletedProcess[str]:
    payload = args if isinstance(args, str) else json.dumps(args)
    return subprocess.run(
        [sys.executable, "-m", "tooldeck", "call", tool, payload, "--root", str(root)],
        capture_output=True,
        text=True,
        env={**os.environ, "TOOLDECK_STATE_DIR": str(state)},
        stdin=subprocess.DEVNULL,
        timeout=90,
        check=False,
    )


def forged_entries(outside: Path) -> dict[str, tuple[dict, dict[str, str]]]:
    """batch id -> (the intent's record, files the model puts beside it).
    ``plant``: a "delete" whose backup is renamed back = a new file outside.
    ``wipe``: a finished batch whose "temp file" is removed = a file deleted outside.
    ``climb``: a plain name in the root that climbs out with ``..``."""
    base = {"size": -1, "crc": 0, "created": []}
    return {
        "1-aaaaaaaaaa": (
            {"version": 1, "undoable": True, "entries": [
                {**base, "root": str(outside), "dirs": [], "name": "pwned.txt", "kind": "delete",
                 "tmp": None, "backup": "payload"}]},
            {"payload": "written by the model\n"},
        ),
        "1-bbbbbbbbbb": (
            {"version": 1, "undoable": False, "entries": [
                {**base, "root": str(outside), "dirs": [], "name": "x", "kind": "write",
                 "tmp": "victim.txt", "backup": None}]},
            {},
        ),
        "1-cccccccccc": (
            {"version": 1, "undoable": True, "entries": [
                {**base, "root": "/", "dirs": ["..", *outside.parts[1:]], "name": "climbed.txt", "kind": "delete",
                 "tmp": None, "backup": "payload"}]},
            {"payload": "climbed\n"},
        ),
    }  # fmt: skip


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    home = tmp_path / "home"
    (home / "src").mkdir(parents=True)
    (home / "src" / "a.txt").write_text("a\n")
    state = home / STATE_REL
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("the person's file\n")
    return home, state, outside


def outside_intact(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["victim.txt"]
    assert (outside / "victim.txt").read_text() == "the person's file\n"


def test_the_model_cannot_write_a_journal_and_a_forged_one_is_never_acted_on(
    setup: tuple[Path, Path, Path],
) -> None:
    home, state, outside = setup
    r = tooldeck(state, home, "file_actions", {"action": "create", "path": "src/b.txt", "content": "b"})
    assert r.returncode == 0, r.stderr  # a real write: the state directory, its journal and key exist
    forged = forged_entries(outside)

    # 1. through the tools, as the model would
    for batch, (record, extra) in forged.items():
        folder = f"{STATE_REL}/journal/{batch}"
        files = {"intent.json": json.dumps(record), **extra}
        for name, text in files.items():
            r = tooldeck(state, home, "file_actions", {"action": "create", "path": f"{folder}/{name}", "content": text})
            assert r.returncode == 1 and "outside_roots" in r.stderr, (r.stdout, r.stderr)
        lines = [f"*** Add File: {folder}/{name}\n" + "".join(f"+{ln}\n" for ln in text.splitlines())
                 for name, text in files.items()]  # fmt: skip
        r = tooldeck(state, home, "apply_patch", "*** Begin Patch\n" + "".join(lines) + "*** End Patch\n")
        assert r.returncode == 1 and "outside_roots" in r.stderr, (r.stdout, r.stderr)
        assert not (state / "journal" / batch).exists()
    r = tooldeck(state, home, "read_directory", {"path": "src"})  # the next call (recovery runs first)
    assert r.returncode == 0, r.stderr
    outside_intact(outside)

    # 2. the same, written straight to disk; and one in the new format with a made-up MAC
    for batch, (record, extra) in forged.items():
        folder = state / "journal" / batch
        folder.mkdir(parents=True)
        (folder / ("done.json" if not record["undoable"] else "intent.json")).write_text(json.dumps(record))
        for name, text in extra.items():
            (folder / name).write_text(text)
    record, extra = forged["1-aaaaaaaaaa"]
    v2 = state / "journal" / "1-dddddddddd"
    v2.mkdir()
    body = json.dumps({**record, "batch": "1-dddddddddd", "roots": [str(outside)]})
    (v2 / "intent.json").write_bytes(b"tooldeck-intent-v2 " + b"0" * 64 + b"\n" + body.encode())
    (v2 / "payload").write_text("written by the model\n")
    r = tooldeck(state, home, "read_directory", {"path": "src"})
    assert r.returncode == 0, r.stderr
    outside_intact(outside)
    assert "was not acted on" in r.stderr  # reported (the host check above is what matters)
    assert not list((state / "journal").iterdir())  # moved aside, not read again at every write
    assert len(list((state / "journal-quarantine").iterdir())) == 4
    r = tooldeck(state, home, "file_actions", {"action": "create", "path": "src/c.txt", "content": "c"})
    assert r.returncode == 0 and "was not acted on" not in r.stderr, r.stderr


def test_a_genuine_intent_with_a_bad_entry_acts_on_the_rest_only(tmp_path: Path) -> None:
    """Even under a valid MAC (a leaked key), entries that climb out of their
    root or name files that are not the batch's own temp files are ignored."""
    from tooldeck.workspace import intent

    root, state, outside = tmp_path / "root", tmp_path / "state", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "victim.txt").write_text("the person's file\n")
    (root / "kept.txt").write_text("old\n")
    batch = "1-eeeeeeeeee"
    good = {
        "root": str(root),
        "dirs": [],
        "name": "kept.txt",
        "kind": "write",
        "tmp": None,
        "backup": f".tooldeck-tmp-{batch}-0.bak",
        "size": 4,
        "crc": journal.crc_of(b"new\n"),
        "created": [],
    }
    bad = [
        {**good, "name": "victim.txt", "dirs": ["..", "outside"], "backup": None, "tmp": None},
        {**good, "root": str(outside), "name": "x", "tmp": "victim.txt", "backup": None},
        {**good, "name": "y", "kind": "write", "tmp": "../outside/victim.txt", "backup": None},
    ]  # fmt: skip
    folder = state / "journal" / batch
    folder.mkdir(parents=True)
    os.link(root / "kept.txt", folder / good["backup"])  # the old content, kept as the writer keeps it
    (root / "kept.txt").unlink()
    (root / "kept.txt").write_text("new\n")  # the batch's new content landed, then the writer died
    record = {"batch": batch, "undoable": True, "roots": [str(root)], "entries": [good, *bad]}
    (folder / "intent.json").write_bytes(intent.seal(str(state), batch, record))  # as if the key had leaked
    assert journal.recover(state) == 0  # reported as not (wholly) acted on
    assert (root / "kept.txt").read_text() == "old\n"  # the good entry was undone
    assert sorted(p.name for p in outside.iterdir()) == ["victim.txt"]
    assert (outside / "victim.txt").read_text() == "the person's file\n"


def test_a_killed_batch_is_still_recovered_and_signed(tmp_path: Path) -> None:
    from tooldeck.workspace import intent

    root, state = tmp_path / "root", tmp_path / "state"
    root.mkdir()
    (root / "a.txt").write_text("old a\n")
    code = (
        "import os, sys\nfrom tooldeck.workspace import atomic\n"
        "atomic.fault_hook = lambda s, r: os._exit(9) if (s, r) == ('apply', 'b.txt') else None\n"
        "b = atomic.AtomicBatch(sys.argv[2])\n"
        "b.write(sys.argv[1], 'a.txt', b'new a\\n'); b.write(sys.argv[1], 'b.txt', b'new b\\n'); b.commit()\n"
    )
    assert subprocess.run([sys.executable, "-c", code, str(root), str(state)], check=False).returncode == 9
    [folder] = (state / "journal").iterdir()
    raw = (folder / "intent.json").read_bytes()
    assert raw.startswith(intent.MAGIC) and (state / intent.KEY_NAME).stat().st_mode & 0o777 == 0o600
    Runtime.for_dirs([root], state_dir=state)
    assert (root / "a.txt").read_text() == "old a\n" and not (root / "b.txt").exists()
    assert not list((state / "journal").iterdir())


def test_the_key_is_made_once_and_a_planted_link_is_not_followed(tmp_path: Path) -> None:
    from tooldeck.workspace import intent

    state = tmp_path / "state"
    state.mkdir()
    target = tmp_path / "elsewhere.key"
    target.write_bytes(b"k" * intent.KEY_BYTES)
    (state / intent.KEY_NAME).symlink_to(target)
    batch = AtomicBatch(state)
    root = tmp_path / "root"
    root.mkdir()
    batch.write(str(root), "f.txt", b"1")
    batch.commit()
    journal.flush()
    key = state / intent.KEY_NAME
    assert not key.is_symlink() and key.stat().st_mode & 0o777 == 0o600 and len(key.read_bytes()) == 32
    assert key.read_bytes() != b"k" * intent.KEY_BYTES and target.read_bytes() == b"k" * intent.KEY_BYTES
