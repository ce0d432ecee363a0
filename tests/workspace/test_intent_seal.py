"""Journal intents on their own: only an intent sealed under this state
directory's key, for this batch, unaltered, reads back (scripts/mutation.py
found the MAC check removable without a failing test: the end-to-end forgery
tests are also stopped by the entry checks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tooldeck.workspace import intent

RECORD = {"batch": "b1", "undoable": True, "roots": ["/r"], "entries": []}


def test_a_sealed_intent_reads_back(tmp_path: Path) -> None:
    state = str(tmp_path)
    assert intent.read_intent(state, "b1", intent.seal(state, "b1", RECORD)) == RECORD


def test_an_altered_or_foreign_intent_does_not(tmp_path: Path) -> None:
    state, elsewhere = tmp_path / "state", tmp_path / "elsewhere"
    state.mkdir()
    elsewhere.mkdir()
    raw = intent.seal(str(state), "b1", RECORD)
    head, _, body = raw.partition(b"\n")
    altered = head + b"\n" + body.replace(b'"undoable": true', b'"undoable": false')
    assert altered != raw
    foreign = intent.seal(str(elsewhere), "b1", RECORD)  # another state directory's key
    for forged in (altered, foreign, intent.seal(str(state), "b2", RECORD)):  # the last: sealed for another batch
        with pytest.raises(intent.BadIntent, match="MAC"):
            intent.read_intent(str(state), "b1", forged)
    with pytest.raises(intent.BadIntent, match="another batch"):
        intent.read_intent(str(state), "b1", intent.seal(str(state), "b1", {**RECORD, "batch": "b2"}))
    with pytest.raises(intent.BadIntent, match="no MAC"):
        intent.read_intent(str(state), "b1", body)


def _entry(**change: object) -> dict[str, object]:
    tmp = f"{intent.TEMP_PREFIX}b1-0001"
    return {"root": "/r", "dirs": ["src", "pkg"], "name": "a.py", "kind": "write", "tmp": tmp,
            "backup": None, "size": 3, "crc": 7, "created": ["src"], **change}  # fmt: skip


def test_an_entry_is_acted_on_only_inside_its_batch() -> None:
    assert intent.entry_problem(_entry(), ["/r"], "b1") is None
    bad = {
        "another root": _entry(root="/elsewhere"),
        "a relative root": _entry(root="r"),
        "a name with ..": _entry(name=".."),
        "a name with a separator": _entry(name="x/../../etc/passwd"),
        "a folder with ..": _entry(dirs=["src", ".."]),
        "another batch's temp": _entry(tmp=f"{intent.TEMP_PREFIX}b2-0001"),
        "a temp outside the folder": _entry(tmp=f"{intent.TEMP_PREFIX}b1-/../x"),
        "an unknown kind": _entry(kind="chmod"),
        "a created folder off the path": _entry(created=["etc"]),
        "an unknown field": _entry(mode=0o777),
    }
    for why, entry in bad.items():
        assert intent.entry_problem(entry, ["/r"], "b1") is not None, why
