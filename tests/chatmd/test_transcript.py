"""The transcript append is a compare-and-swap: another writer's change between
our read and our rename is kept, and the element is appended after it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tooldeck.chatmd.transcript import Transcript
from tooldeck.llm.types import Message
from tooldeck.workspace import atomic


def test_append_redoes_itself_on_a_concurrent_change(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chat = tmp_path / "t.chatmd"
    chat.write_text("<user>hi</user>\n")
    raced: list[str] = []

    def other_writer(step: str, rel: str) -> None:
        # another writer lands between the transcript's read and its rename, once
        if step == "stage" and not raced:
            raced.append(rel)
            chat.write_text("<user>hi</user>\n<user>edited meanwhile</user>\n")

    monkeypatch.setattr(atomic, "fault_hook", other_writer)
    Transcript(chat, state_dir=tmp_path / "state").append(Message("assistant", "hello"))
    text = chat.read_text()
    assert raced == ["t.chatmd"]
    assert "edited meanwhile" in text  # the other writer's change is not lost
    assert text.index("edited meanwhile") < text.index("hello")
    assert text.count("hello") == 1


def test_append_through_a_link_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real.chatmd"
    real.write_text("<user>hi</user>\n")
    link = tmp_path / "link.chatmd"
    link.symlink_to(real)
    Transcript(link, state_dir=tmp_path / "state").append(Message("assistant", "hello"))
    assert link.is_symlink()
    assert "hello" in real.read_text()


def test_two_runners_never_overwrite_each_others_payloads(tmp_path: Path) -> None:
    """Two transcripts of the same file (two runners) write results with the
    same call id at the same time: every payload survives, under its own name."""
    import threading

    chat = tmp_path / "chat.chatmd"
    chat.write_text("<user>hi</user>\n")
    runners = [Transcript(chat, state_dir=tmp_path / "state") for _ in range(2)]
    per_runner = 25
    start = threading.Barrier(2)

    def run(index: int) -> None:
        start.wait()
        for n in range(per_runner):
            runners[index]._payload("tool_response", {}, f"runner {index} result {n}", "call_1", "result.txt")

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    texts = sorted(p.read_text() for p in (tmp_path / ".chatmd" / "chat").iterdir())
    expected = sorted(f"runner {i} result {n}" for i in range(2) for n in range(per_runner))
    assert texts == expected
