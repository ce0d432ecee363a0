"""A person's terminal: ``tooldeck chat`` under a real pty (raw keys, escape
sequences, window size), typed to, quit, and the file checked."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.support.openai_server import Reply, ScriptedOpenAI
from tests.support.pty_session import PtySession
from tooldeck.chatmd.conversation import items_of
from tooldeck.chatmd.document import load
from tooldeck.llm.types import Message

pytestmark = pytest.mark.timeout(180)


def test_type_in_a_real_terminal_quit_and_find_the_file(work: Path, server: ScriptedOpenAI) -> None:
    f = work / "c.chatmd"
    f.write_text('<config model="test-model"/>\n<tool name="read_file"/>\n')
    server.push(Reply.call(("read_file", {"file": "a.txt"})), Reply.answer("It says alpha, over a real pty."))
    session = PtySession([sys.executable, "-m", "tooldeck", "chat", str(f)], env=dict(os.environ), cwd=str(work))
    try:
        session.wait_for("Enter sends")  # the first frame
        session.wait_for("ready")  # the conversation is open
        session.type("what is in a.txt?\r")
        session.wait_for("over a real pty.")
        session.wait_for("read_file")
        session.type("\x11")  # Ctrl-Q
        assert session.wait_exit() == 0
    finally:
        session.close()
    items = items_of(load(f))
    assert items[0] == Message("user", "what is in a.txt?")
    assert items[-1] == Message("assistant", "It says alpha, over a real pty.")
    assert "\x1b" not in f.read_text()  # no terminal bytes leak into the conversation


def test_without_a_terminal_it_says_to_use_run(work: Path) -> None:
    import subprocess

    out = subprocess.run([sys.executable, "-m", "tooldeck", "chat", "x.chatmd"], cwd=work, capture_output=True,
                         text=True, stdin=subprocess.DEVNULL, timeout=60)  # fmt: skip
    assert out.returncode == 2 and "tooldeck run" in out.stderr
    assert not (work / "x.chatmd").exists()
