"""apply_edits through the Toolbox: modes, the matching ladder, re-indentation,
argument recovery, atomic batches, hashes."""

from __future__ import annotations

import json
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tooldeck.workspace.content import content_hash

if TYPE_CHECKING:
    from tests.conftest import Caller

Snap = Callable[[Path], dict[str, bytes]]

PY = """class Greeter:
    def greet(self, name):
        if name:
            return f"hi {name}"
        return "hi"


def main():
    print(Greeter().greet("x"))
"""


def put(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(text.encode("utf-8"))
    return p


def test_exact_search_replace(root: Path, call: Caller) -> None:
    p = put(root, "g.py", PY)
    out = call.ok("apply_edits", {"path": "g.py", "search": 'return "hi"', "replace": 'return "hello"'})
    assert p.read_text() == PY.replace('return "hi"\n', 'return "hello"\n')
    assert out.startswith("Applied 1 edit to g.py: +1 -1 lines") and f"[hash={content_hash(p.read_bytes())}]" in out


def test_several_matches_without_all_are_ambiguous_naming_lines(root: Path, call: Caller, snapshot: Snap) -> None:
    put(root, "d.txt", "x = 1\ny = 2\nx = 1\n")
    before = snapshot(root)
    res = call.err("apply_edits", {"path": "d.txt", "search": "x = 1", "replace": "x = 9"}, code="ambiguous")
    assert "lines 1, 3" in res.error.message and res.error.details["lines"] == [1, 3]
    assert snapshot(root) == before
    call.ok("apply_edits", {"path": "d.txt", "search": "x = 1", "replace": "x = 9", "all": True})
    assert (root / "d.txt").read_text() == "x = 9\ny = 2\nx = 9\n"


def test_escape_decoded_retry(root: Path, call: Caller) -> None:
    p = put(root, "e.py", "a = 1\nb = 2\n")
    out = call.ok("apply_edits", {"path": "e.py", "search": "a = 1\\nb = 2", "replace": "a = 10\\nb = 20"})
    assert p.read_text() == "a = 10\nb = 20\n" and "escape-decoded" in out


def test_indentation_flexible_match_reindents_the_replacement(root: Path, call: Caller) -> None:
    p = put(root, "g.py", PY)
    search = 'if name:\n    return f"hi {name}"'  # the model lost the method's indentation
    replace = 'if name:\n    return f"hello {name}"\nelif name is None:\n    return "nobody"'
    out = call.ok("apply_edits", {"path": "g.py", "search": search, "replace": replace})
    expected = PY.replace(
        '        if name:\n            return f"hi {name}"\n',
        '        if name:\n            return f"hello {name}"\n'
        '        elif name is None:\n            return "nobody"\n',
    )
    assert p.read_text() == expected
    assert "whitespace-flexible match at lines 3-4" in out and "re-indented" in out


def test_tab_indented_file_keeps_tabs(root: Path, call: Caller) -> None:
    p = put(root, "t.go", "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n")
    call.ok("apply_edits", {"path": "t.go", "search": "    return 1", "replace": "    y := 2\n    return y"})
    assert p.read_text() == "func f() {\n\tif x {\n\t\ty := 2\n\t\treturn y\n\t}\n}\n"


def test_fuzzy_match_above_threshold(root: Path, call: Caller) -> None:
    p = put(root, "f.py", "def total(items):\n    s = 0\n    for it in items:\n        s += it.price\n    return s\n")
    search = "    s = 0\n    for it in items:\n        s += it.prices\n    return s"
    replace = "    return sum(it.price for it in items)"
    out = call.ok("apply_edits", {"path": "f.py", "search": search, "replace": replace})
    assert p.read_text() == "def total(items):\n    return sum(it.price for it in items)\n"
    assert "fuzzy" in out and "% similar" in out


def test_two_equally_similar_fuzzy_candidates_are_ambiguous(root: Path, call: Caller, snapshot: Snap) -> None:
    block = "def f{n}():\n    value = compute(1, 2, 3)\n    return value\n\n"
    put(root, "amb.py", block.format(n=1) + block.format(n=2))
    before = snapshot(root)
    search = "    value = compute(1, 2, 4)\n    return value"
    res = call.err("apply_edits", {"path": "amb.py", "search": search, "replace": "    pass"}, code="ambiguous")
    assert res.error.details["lines"] == [2, 6]
    assert snapshot(root) == before


def test_no_match_shows_the_closest_lines(root: Path, call: Caller) -> None:
    put(root, "g.py", PY)
    search = "def main():\n    print(Welcomer().welcome('y'))\n    sys.exit(1)"
    res = call.err("apply_edits", {"path": "g.py", "search": search, "replace": ""}, code="no_match")
    assert "8| def main():" in res.error.message and "fuzzy" in res.error.message


def test_edits_batch_is_atomic(root: Path, call: Caller, snapshot: Snap) -> None:
    put(root, "b.txt", "one\ntwo\nthree\n")
    before = snapshot(root)
    edits = [{"search": "one", "replace": "1"}, {"search": "missing line", "replace": "x"}]
    res = call.err("apply_edits", {"path": "b.txt", "edits": edits}, code="no_match")
    assert res.error.message.startswith("edit 2 of 2:")
    assert snapshot(root) == before
    edits = [{"search": "one", "replace": "1"}, {"search": "1\ntwo", "replace": "1\n2"}]
    out = call.ok("apply_edits", {"path": "b.txt", "edits": edits})
    assert (root / "b.txt").read_text() == "1\n2\nthree\n" and "Applied 2 edits" in out


def test_deleting_lines_with_an_empty_replacement(root: Path, call: Caller) -> None:
    p = put(root, "del.py", "a = 1\n    b = 2\nc = 3\n")
    call.ok("apply_edits", {"path": "del.py", "search": "b = 2\n", "replace": ""})
    assert p.read_text() == "a = 1\n    c = 3\n"  # exact match: literal semantics
    p.write_text("a = 1\n    b = 2\nc = 3\n")
    call.ok("apply_edits", {"path": "del.py", "search": "  b = 2", "replace": ""})
    assert p.read_text() == "a = 1\n  \nc = 3\n"  # exact beats line-level: only the found text goes
    p.write_text("a = 1\n    b = 2\nc = 3\n")
    call.ok("apply_edits", {"path": "del.py", "search": "b  =  2", "replace": ""})  # whole-line removal
    assert p.read_text() == "a = 1\nc = 3\n"


def test_rewrite_and_on_missing(root: Path, call: Caller) -> None:
    res = call.err("apply_edits", {"path": "new/r.txt", "rewrite": "hello\n"}, code="not_found")
    assert 'on_missing="create"' in res.error.message
    out = call.ok("apply_edits", {"path": "new/r.txt", "rewrite": "hello\n", "on_missing": "create"})
    assert (root / "new/r.txt").read_text() == "hello\n" and out.startswith("Created new/r.txt")
    p = put(root, "x.sh", "old\n")
    p.chmod(0o750)
    call.ok("apply_edits", {"path": "x.sh", "rewrite": "new\n"})
    assert p.read_text() == "new\n" and stat.S_IMODE(p.stat().st_mode) == 0o750


def test_crlf_file_stays_crlf(root: Path, call: Caller) -> None:
    p = root / "w.txt"
    p.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    call.ok("apply_edits", {"path": "w.txt", "search": "one\ntwo", "replace": "1\n2\n2b"})
    assert p.read_bytes() == b"1\r\n2\r\n2b\r\nthree\r\n"
    call.ok("apply_edits", {"path": "w.txt", "rewrite": "a\nb\n"})
    assert p.read_bytes() == b"a\r\nb\r\n"


def test_stale_hash_gives_conflict(root: Path, call: Caller) -> None:
    p = put(root, "h.txt", "v1\n")
    stale = content_hash(p.read_bytes())
    p.write_text("v2\n")
    call.err("apply_edits", {"path": "h.txt", "search": "v2", "replace": "v3", "expected_hash": stale}, code="conflict")
    assert p.read_text() == "v2\n"
    fresh = content_hash(p.read_bytes())
    call.ok("apply_edits", {"path": "h.txt", "search": "v2", "replace": "v3", "expected_hash": fresh})


def test_verbose_adds_a_unified_diff(root: Path, call: Caller) -> None:
    put(root, "v.txt", "a\nb\nc\n")
    out = call.ok("apply_edits", {"path": "v.txt", "search": "b", "replace": "B", "verbose": True})
    assert "--- a/v.txt" in out and "+++ b/v.txt" in out and "-b" in out.splitlines() and "+B" in out.splitlines()
    quiet = call.ok("apply_edits", {"path": "v.txt", "search": "B", "replace": "b"})
    assert "--- a/v.txt" not in quiet


def test_argument_recovery(root: Path, call: Caller) -> None:
    p = put(root, "r.txt", "alpha\nbeta\n")
    call.ok("apply_edits", {"file_path": "r.txt", "old_string": "alpha", "new_string": "ALPHA"})
    call.ok("apply_edits", {"file": "r.txt", "edits": json.dumps([{"search": "beta", "replace": "BETA"}])})
    call.ok("apply_edits", {"apply_edits": {"path": "r.txt", "edits": {"search": "ALPHA", "replace": "a"}}})
    # raw newline inside a JSON string (not valid strict JSON) is repaired
    call.ok("apply_edits", '{"path": "r.txt", "search": "a\nBETA", "replace": "a\nb"}')
    assert p.read_text() == "a\nb\n"
    res = call.err("apply_edits", {"path": "r.txt", "file": "other.txt", "search": "a", "replace": "b"})
    assert res.error.code == "invalid_arguments" and "`file`" in res.error.message


def test_exactly_one_mode(root: Path, call: Caller) -> None:
    put(root, "m.txt", "x\n")
    for args in (
        {"path": "m.txt"},
        {"path": "m.txt", "search": "x", "replace": "y", "rewrite": "z"},
        {"path": "m.txt", "search": "x"},
        {"path": "m.txt", "edits": []},
        {"path": "m.txt", "search": "x", "replace": "y", "bogus": 1},
    ):
        call.err("apply_edits", args, code="invalid_arguments")
    assert (root / "m.txt").read_text() == "x\n"


def test_path_outside_roots_is_refused(root: Path, call: Caller, tmp_path: Path) -> None:
    (tmp_path / "out.txt").write_text("x\n")
    call.err("apply_edits", {"path": "../out.txt", "search": "x", "replace": "y"}, code="outside_roots")
    assert (tmp_path / "out.txt").read_text() == "x\n"
