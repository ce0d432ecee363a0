"""has_authority and the approvals file's format, on their own (scripts/mutation.py
found both removable without a failing test)."""

from __future__ import annotations

import json
from pathlib import Path

from tooldeck.authority import has_authority
from tooldeck.state.approvals import FILE_NAME, Approvals


def test_authority_is_the_persons_name_or_an_approval_of_these_bytes(tmp_path: Path) -> None:
    state = tmp_path / "state"
    f = tmp_path / "proj" / ".tooldeck.toml"
    f.parent.mkdir()
    f.write_bytes(b"[shell]\n")
    assert not has_authority(f, b"[shell]\n", state_dir=state)  # written inside a root: maybe by the model
    assert has_authority(f, b"[shell]\n", person_named=True, state_dir=state)  # named on the command line
    Approvals(state).allow([f])
    assert has_authority(f, b"[shell]\n", state_dir=state)
    assert not has_authority(f, b"[shell]\nx = 1\n", state_dir=state)  # other bytes, no authority


def test_an_approvals_file_of_another_format_approves_nothing(tmp_path: Path) -> None:
    state = tmp_path / "state"
    f = tmp_path / "a.chatmd"
    f.write_bytes(b"<user>hi</user>\n")
    store = Approvals(state)
    store.allow([f])
    assert store.approves(f, f.read_bytes())
    path = state / FILE_NAME
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "format": data["format"] + 1}))  # a future tooldeck's file
    assert not Approvals(state).approves(f, f.read_bytes())
    path.write_text(json.dumps(data["files"]))  # no format at all
    assert not Approvals(state).approves(f, f.read_bytes())
