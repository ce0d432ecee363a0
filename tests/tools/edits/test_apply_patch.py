"""apply_patch through the Toolbox: every rule of SPEC §4 on real files."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tooldeck.workspace import atomic
from tooldeck.workspace.content import content_hash

if TYPE_CHECKING:
    from tests.conftest import Caller

Snap = Callable[[Path], dict[str, bytes]]


def P(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"]) + "\n"


def write(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(text.encode("utf-8"))
    return p


APP = 'def greet():\n    print("Hi")\n    return 1\n\n\ndef other():\n    return 2\n'


# --- success paths -----------------------------------------------------------


def test_update_add_delete_in_one_patch(root: Path, call: Caller) -> None:
    write(root, "app.py", APP)
    write(root, "old.txt", "bye\n")
    out = call.ok(
        "apply_patch",
        P(
            "*** Update File: app.py",
            "@@ def greet():",
            '-    print("Hi")',
            '+    print("Hello")',
            "*** Add File: docs/new.md",
            "+# New",
            "*** Delete File: old.txt",
        ),
    )
    assert (root / "app.py").read_text() == APP.replace('"Hi"', '"Hello"')
    assert (root / "docs/new.md").read_text() == "# New\n"
    assert not (root / "old.txt").exists()
    head = out.splitlines()[:4]
    assert head == ["Success. Updated the following files:", "A docs/new.md", "M app.py", "D old.txt"]
    assert '-    print("Hi")' in out and '+    print("Hello")' in out
    assert f"[hash={content_hash((root / 'app.py').read_bytes())}]" in out


def test_unicode_dashes_and_quotes_in_context_match_and_file_spelling_is_kept(root: Path, call: Caller) -> None:
    write(root, "t.md", "Intro \u2014 \u201cquoted\u201d text\nold line\n")
    out = call.ok("apply_patch", P("*** Update File: t.md", "@@", ' Intro - "quoted" text', "-old line", "+new line"))
    # the context line keeps the file's typographic characters, not the patch's ASCII
    assert (root / "t.md").read_text() == "Intro \u2014 \u201cquoted\u201d text\nnew line\n"
    assert "unicode punctuation normalised" in out


def test_trailing_whitespace_context_matches(root: Path, call: Caller) -> None:
    write(root, "w.txt", "alpha   \nbeta\t\ngamma\n")
    call.ok("apply_patch", P("*** Update File: w.txt", "@@", " alpha", "-beta", "+BETA"))
    assert (root / "w.txt").read_text() == "alpha   \nBETA\ngamma\n"


def test_indentation_differences_in_context_match_and_keep_the_file_indent(root: Path, call: Caller) -> None:
    write(root, "i.py", "class A:\n        x = 1\n        y = 2\n")
    call.ok("apply_patch", P("*** Update File: i.py", "@@", " x = 1", "-y = 2", "+        y = 3"))
    assert (root / "i.py").read_text() == "class A:\n        x = 1\n        y = 3\n"


def test_end_of_file_marker_targets_the_last_occurrence(root: Path, call: Caller) -> None:
    write(root, "e.txt", "x\nend\nx\nend\n")
    call.ok("apply_patch", P("*** Update File: e.txt", "@@", " x", "-end", "+END", "*** End of File"))
    assert (root / "e.txt").read_text() == "x\nend\nx\nEND\n"


def test_pure_addition_appends_at_end_of_file(root: Path, call: Caller) -> None:
    write(root, "p.txt", "one\ntwo\n")
    call.ok("apply_patch", P("*** Update File: p.txt", "@@", "+three", "+four"))
    assert (root / "p.txt").read_text() == "one\ntwo\nthree\nfour\n"


def test_pure_addition_under_an_anchor_goes_after_the_anchor(root: Path, call: Caller) -> None:
    write(root, "c.py", "class A:\n    a = 1\n\nclass B:\n    b = 1\n")
    call.ok("apply_patch", P("*** Update File: c.py", "@@ class B:", "+    first = 0"))
    assert (root / "c.py").read_text() == "class A:\n    a = 1\n\nclass B:\n    first = 0\n    b = 1\n"


def test_stacked_anchors_narrow_to_the_right_method(root: Path, call: Caller) -> None:
    src = "class A:\n    def run(self):\n        return 0\n\nclass B:\n    def run(self):\n        return 0\n"
    write(root, "s.py", src)
    patch = P("*** Update File: s.py", "@@ class B:", "@@     def run(self):", "-        return 0", "+        return 1")
    call.ok("apply_patch", patch)
    assert (root / "s.py").read_text() == src[: src.rindex("0")] + "1\n"


def test_chunks_out_of_order_still_apply(root: Path, call: Caller) -> None:
    write(root, "o.txt", "a\nb\nc\nd\n")
    call.ok("apply_patch", P("*** Update File: o.txt", "@@", "-d", "+D", "@@", "-a", "+A"))
    assert (root / "o.txt").read_text() == "A\nb\nc\nD\n"


def test_missing_trailing_newline_is_added(root: Path, call: Caller) -> None:
    write(root, "n.txt", "one\ntwo")
    call.ok("apply_patch", P("*** Update File: n.txt", "@@", "-one", "+ONE"))
    assert (root / "n.txt").read_text() == "ONE\ntwo\n"


def test_crlf_file_keeps_crlf_and_mode_is_kept(root: Path, call: Caller) -> None:
    p = write(root, "win.bat", "")
    p.write_bytes(b"@echo off\r\necho hi\r\nexit\r\n")
    p.chmod(0o751)
    call.ok("apply_patch", P("*** Update File: win.bat", "@@", " @echo off", "-echo hi", "+echo hello"))
    assert p.read_bytes() == b"@echo off\r\necho hello\r\nexit\r\n"
    assert stat.S_IMODE(p.stat().st_mode) == 0o751


def test_move_into_a_new_directory_keeps_content_changes_and_mode(root: Path, call: Caller) -> None:
    p = write(root, "old/name.sh", "echo a\necho b\n")
    p.chmod(0o755)
    out = call.ok(
        "apply_patch", P("*** Update File: old/name.sh", "*** Move to: renamed/dir/name.sh", "@@", "-echo b", "+echo c")
    )
    dest = root / "renamed/dir/name.sh"
    assert dest.read_text() == "echo a\necho c\n" and not p.exists()
    assert stat.S_IMODE(dest.stat().st_mode) == 0o755
    assert "M renamed/dir/name.sh" in out and "moved from old/name.sh" in out


def test_move_overwrites_its_destination(root: Path, call: Caller) -> None:
    write(root, "a.txt", "from a\n")
    write(root, "b.txt", "was b\n")
    call.ok("apply_patch", P("*** Update File: a.txt", "*** Move to: b.txt"))
    assert (root / "b.txt").read_text() == "from a\n" and not (root / "a.txt").exists()


def test_add_on_an_existing_file_replaces_it(root: Path, call: Caller) -> None:
    write(root, "dup.txt", "old content\n")
    out = call.ok("apply_patch", P("*** Add File: dup.txt", "+new content"))
    assert (root / "dup.txt").read_text() == "new content\n"
    assert "replaced an existing file" in out


def test_one_file_touched_twice_in_one_patch(root: Path, call: Caller) -> None:
    call.ok("apply_patch", P("*** Add File: twice.txt", "+a", "+b", "*** Update File: twice.txt", "@@", "-b", "+B"))
    assert (root / "twice.txt").read_text() == "a\nB\n"


def test_heredoc_wrapper_and_padded_markers(root: Path, call: Caller) -> None:
    write(root, "h.txt", "one\n")
    patch = "<<'EOF'\n *** Begin Patch \n  *** Update File: h.txt\n@@\n-one\n+two\n*** End Patch \nEOF\n"
    call.ok("apply_patch", patch)
    assert (root / "h.txt").read_text() == "two\n"


def test_input_forms_json_string_and_objects(root: Path, call: Caller) -> None:
    text = P("*** Add File: j1.txt", "+x")
    call.ok("apply_patch", json.dumps(text))
    call.ok("apply_patch", {"input": P("*** Add File: j2.txt", "+x")})
    call.ok("apply_patch", {"patch": P("*** Add File: j3.txt", "+x")})
    assert all((root / f"j{i}.txt").read_text() == "x\n" for i in (1, 2, 3))


def test_absolute_path_inside_the_root_is_accepted(root: Path, call: Caller) -> None:
    call.ok("apply_patch", P(f"*** Add File: {root / 'abs.txt'}", "+x"))
    assert (root / "abs.txt").read_text() == "x\n"


# --- failures change nothing -------------------------------------------------


def test_three_file_patch_whose_third_file_fails_leaves_all_three_untouched(
    root: Path, call: Caller, snapshot: Snap
) -> None:
    write(root, "one.txt", "1\n")
    write(root, "two.txt", "2\n")
    write(root, "three.txt", "3\n")
    before = snapshot(root)
    res = call.err(
        "apply_patch",
        P(
            "*** Update File: one.txt",
            "@@",
            "-1",
            "+one",
            "*** Update File: two.txt",
            "@@",
            "-2",
            "+two",
            "*** Update File: three.txt",
            "@@",
            "-not there",
            "+three",
        ),
        code="context_mismatch",
    )
    assert snapshot(root) == before
    assert "three.txt" in res.error.message and "Nothing was changed" in res.error.message


def test_injected_write_failure_on_the_second_file_restores_the_first(
    root: Path, call: Caller, snapshot: Snap, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(root, "first.txt", "first\n")
    write(root, "second.txt", "second\n")

    def fail(step: str, rel: str) -> None:
        if step == "apply" and rel == "second.txt":
            raise OSError(5, "injected failure")

    monkeypatch.setattr(atomic, "fault_hook", fail)
    before = snapshot(root)
    res = call.err(
        "apply_patch",
        P(
            "*** Update File: first.txt",
            "@@",
            "-first",
            "+FIRST",
            "*** Update File: second.txt",
            "@@",
            "-second",
            "+SECOND",
            "*** Add File: brand/new.txt",
            "+x",
        ),
        code="io_error",
    )
    assert snapshot(root) == before
    assert not (root / "brand").exists()
    assert "second.txt" in res.error.message


def test_stale_hash_gives_conflict(root: Path, call: Caller) -> None:
    p = write(root, "h.txt", "v1\n")
    stale = content_hash(p.read_bytes())
    p.write_text("v2\n")
    call.err("apply_patch", P(f"*** Update File: h.txt [hash={stale}]", "@@", "-v2", "+v3"), code="conflict")
    call.err(
        "apply_patch",
        {"input": P("*** Update File: h.txt", "@@", "-v2", "+v3"), "expected_hashes": {"h.txt": stale}},
        code="conflict",
    )
    assert p.read_text() == "v2\n"
    fresh = content_hash(p.read_bytes())
    call.ok("apply_patch", P(f"*** Update File: h.txt [hash={fresh}]", "@@", "-v2", "+v3"))
    assert p.read_text() == "v3\n"


def test_mismatch_error_names_file_chunk_nearest_lines_and_fuzz_levels(root: Path, call: Caller) -> None:
    write(root, "m.py", "def add(a, b):\n    total = a + b\n    return total\n")
    res = call.err(
        "apply_patch",
        P("*** Update File: m.py", "@@", " def add(a, b):", "-    total = a - b", "+    total = a * b"),
        code="context_mismatch",
    )
    msg = res.error.message
    assert "m.py: chunk 1 (patch line 3)" in msg
    assert "unicode punctuation normalised" in msg and "exact" in msg
    assert "1| def add(a, b):" in msg and "!     2|     total = a + b" in msg
    assert res.error.details["candidates"] == [1]


def test_missing_anchor_is_reported_with_similar_lines(root: Path, call: Caller) -> None:
    write(root, "a.py", "def compute_total():\n    return 1\n")
    patch = P("*** Update File: a.py", "@@ def compute_totals():", "-    return 1", "+    return 2")
    res = call.err("apply_patch", patch)
    assert res.error.code == "context_mismatch" and "1: 'def compute_total():'" in res.error.message


def test_deleting_a_directory_is_refused(root: Path, call: Caller, snapshot: Snap) -> None:
    write(root, "dir/foo.txt", "x\n")
    before = snapshot(root)
    res = call.err("apply_patch", P("*** Delete File: dir"), code="not_a_file")
    assert "directory" in res.error.message and snapshot(root) == before


def test_update_and_delete_of_missing_files_are_not_found(root: Path, call: Caller, snapshot: Snap) -> None:
    call.err("apply_patch", P("*** Delete File: ghost.txt"), code="not_found")
    call.err("apply_patch", P("*** Update File: ghost.txt", "@@", "-a", "+b"), code="not_found")
    assert snapshot(root) == {}


def test_empty_patch_is_an_error(root: Path, call: Caller) -> None:
    call.err("apply_patch", "*** Begin Patch\n*** End Patch\n", code="patch_syntax")
    call.err("apply_patch", "", code="patch_syntax")


def test_a_path_escaping_the_root_is_refused(root: Path, call: Caller, snapshot: Snap, tmp_path: Path) -> None:
    write(root, "inside.txt", "in\n")
    before = snapshot(root)
    res = call.err(
        "apply_patch",
        P("*** Update File: inside.txt", "@@", "-in", "+IN", "*** Add File: ../escape.txt", "+x"),
        code="outside_roots",
    )
    assert not (tmp_path / "escape.txt").exists() and snapshot(root) == before
    assert "patch line" in res.error.message
    call.err("apply_patch", P(f"*** Add File: {tmp_path / 'abs-escape.txt'}", "+x"), code="outside_roots")


def test_symlink_target_is_refused(root: Path, call: Caller, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    os.symlink(outside, root / "link.txt")
    res = call.err("apply_patch", P("*** Update File: link.txt", "@@", "-secret", "+pwned"), code="outside_roots")
    assert outside.read_text() == "secret\n" and "secret" not in res.text


def test_binary_file_update_is_refused(root: Path, call: Caller) -> None:
    (root / "b.bin").write_bytes(b"\x00\x01\x02\n")
    call.err("apply_patch", P("*** Update File: b.bin", "@@", "-x", "+y"), code="binary_file")


def test_overlapping_chunks_are_refused(root: Path, call: Caller, snapshot: Snap) -> None:
    write(root, "ov.txt", "a\nb\nc\n")
    before = snapshot(root)
    res = call.err("apply_patch", P("*** Update File: ov.txt", "@@", "-b", "+B", "@@", " a", "-b", "+X"))
    assert res.error is not None and res.error.code == "context_mismatch" and "chunk 2" in res.text
    assert snapshot(root) == before


def test_a_huge_patch_reports_compactly_within_the_budget(root: Path, call: Caller) -> None:
    body: list[str] = []
    for i in range(130):
        write(root, f"many/f{i}.txt", f"line {i}\n")
        body += [f"*** Update File: many/f{i}.txt", "@@", f"-line {i}", f"+LINE {i}"]
    out = call.ok("apply_patch", P(*body))
    assert out.count("\nM many/f") == 130 + 100  # every summary line, details for the first 100 files
    assert "... details of 30 more files not shown" in out and "[output truncated" not in out
    assert (root / "many/f129.txt").read_text() == "LINE 129\n"


def test_the_reply_never_waits_for_the_cleanup(
    root: Path, state_dir: Path, call: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Backups and the journal are removed after the reply: a cleanup that
    cannot start yet does not hold the reply back, and runs once released."""
    import threading

    from tooldeck.workspace import journal

    write(root, "a.txt", "a\n")
    write(root, "b.txt", "b\n")
    gate = threading.Event()
    started: list[str] = []

    def hold(step: str, rel: str) -> None:
        if step == "cleanup":
            started.append(threading.current_thread().name)
            gate.wait(10)

    journal.flush()  # cleanups an earlier test queued must not reach this test's hook
    monkeypatch.setattr(atomic, "fault_hook", hold)
    patch = P("*** Update File: a.txt", "@@", "-a", "+A", "*** Update File: b.txt", "@@", "-b", "+B")
    out = call.ok("apply_patch", patch)
    assert "M a.txt" in out and (root / "a.txt").read_text() == "A\n"
    assert any((state_dir / "journal").iterdir())  # the cleanup has not run yet
    gate.set()
    assert journal.flush()
    assert started == ["tooldeck-journal-cleanup"]  # on the cleanup worker, not the call's thread
    assert not any((state_dir / "journal").iterdir())
