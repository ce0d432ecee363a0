"""Approvals by content: exactly the approved bytes are honoured, any change revokes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tooldeck.state.approvals import ApprovalError, Approvals


def test_an_approval_holds_for_the_same_bytes_only(tmp_path: Path) -> None:
    f = tmp_path / "proj" / ".tooldeck.toml"
    f.parent.mkdir()
    f.write_bytes(b"[shell]\n")
    store = Approvals(tmp_path / "state")
    assert not store.approves(f, f.read_bytes())
    store.allow([f])
    assert store.approves(f, b"[shell]\n")
    assert not store.approves(f, b"[shell]\n ")  # one byte more is another file
    f.write_bytes(b"[shell]\n#\n")
    assert [a.status for a in Approvals(tmp_path / "state").entries()] == ["changed"]
    f.unlink()
    assert [a.status for a in store.entries()] == ["missing"]


def test_a_link_is_approved_as_its_target(tmp_path: Path) -> None:
    target = tmp_path / "a.chatmd"
    target.write_text("<user>hi</user>\n")
    link = tmp_path / "b.chatmd"
    link.symlink_to(target)
    store = Approvals(tmp_path / "state")
    store.allow([link])
    assert store.approves(target, target.read_bytes())
    assert store.revoke([target]) == [os.path.realpath(target)]
    assert not store.approves(link, target.read_bytes())


def test_nothing_is_approved_when_one_path_is_not_a_file(tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text("x = 1\n")
    os.mkfifo(tmp_path / "fifo")
    store = Approvals(tmp_path / "state")
    with pytest.raises(ApprovalError, match="fifo"):
        store.allow([good, tmp_path / "fifo"])
    assert store.entries() == []


def test_a_planted_or_corrupt_file_approves_nothing(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    f = tmp_path / "x.toml"
    f.write_text("x\n")
    (state / "approvals.json").write_text("{not json")
    assert not Approvals(state).approves(f, b"x\n")
    (state / "approvals.json").unlink()
    (state / "approvals.json").symlink_to(tmp_path / "elsewhere.json")
    (tmp_path / "elsewhere.json").write_text('{"format": 1, "files": {}}')
    assert not Approvals(state).approves(f, b"x\n")
    assert Approvals(state).fingerprint() == Approvals(tmp_path / "empty").fingerprint()
