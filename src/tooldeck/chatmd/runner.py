"""``tooldeck run FILE.chatmd``: load, check, run the model loop, append the transcript.

A thin layer over :func:`tooldeck.llm.loop.run_conversation`: the file gives
the conversation, tools and model; every finished item is appended to the
file as it completes; the terminal shows progress. Exit status: 0 answered
(or nothing to do), 1 a model error, 2 a file or configuration error, 130
interrupted. In every case the file is left valid and running it again
resumes where it stopped.

The file the person named has authority, bounded by its transcript record
(:mod:`tooldeck.chatmd.record`, through :mod:`tooldeck.chatmd.named`): the runner saves what it honoured before
the first model call and again after every append (with the payload files
it wrote), so a declaration the model adds to the file during the run is
refused at the next run unless the person approves the file.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.text import Text

from tooldeck.chatmd.display import Display
from tooldeck.chatmd.named import NamedFile
from tooldeck.chatmd.session import Session, prepare
from tooldeck.core.interrupt import run_interruptible
from tooldeck.llm.errors import ModelError
from tooldeck.llm.loop import Result, run_conversation
from tooldeck.llm.types import Item, Message
from tooldeck.markup.element import ChatmdError
from tooldeck.runtime import Runtime
from tooldeck.shell.approval import approver_scope, terminal_approver_if_tty
from tooldeck.workspace.roots import Workspace, make_root

EXIT_OK, EXIT_MODEL, EXIT_FILE, EXIT_INTERRUPTED = 0, 1, 2, 130


def launch_runtime(state_dir: str | os.PathLike[str] | None = None) -> Runtime:
    """The launch directory as the root ``cwd`` (seed 000's implicit read_file root)."""
    return Runtime(Workspace([make_root(os.getcwd(), "cwd")]), state_dir=state_dir)


def _fail(console: Console, message: str) -> None:
    console.print(Text("tooldeck run: ", style="bold red") + Text(message))


async def _run(session: Session, on_item: Callable[[Item], None], display: Display, parallel: bool) -> Result:
    provider = session.provider()
    try:
        return await run_conversation(
            provider, session.items, session.toolbox, parallel=parallel, on_event=display, on_item=on_item
        )
    finally:
        await provider.aclose()


def run_file(
    path: str | os.PathLike[str],
    *,
    parallel: bool = True,
    state_dir: str | os.PathLike[str] | None = None,
    console: Console | None = None,
) -> int:
    console = console or Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    file = Path(path).absolute()
    try:
        rt = launch_runtime(state_dir)
        named = NamedFile(file, rt)
        session = prepare(named.load(), rt)
    except ChatmdError as exc:
        _fail(err, str(exc))
        return EXIT_FILE
    except ModelError as exc:
        _fail(err, exc.message)
        return EXIT_FILE
    last = session.items[-1] if session.items else None
    if last is None:
        _fail(err, f"{file}: no messages; add a <user> message")
        return EXIT_FILE
    if isinstance(last, Message) and last.role == "assistant":
        console.print(Text("nothing to do: the last message is the assistant's; add a <user> message", "dim"))
        return EXIT_OK
    try:
        named.save()  # what this run honours, before the model can touch the file
    except OSError as exc:
        _fail(err, f"cannot record the file's authority in {named.record.path}: {exc.strerror or exc}")
        return EXIT_FILE
    on_item = named.recording(session.show_tool_call)
    display = Display(console)
    try:
        with approver_scope(terminal_approver_if_tty()):  # a shell `ask` prompts on the terminal, if there is one
            result = run_interruptible(_run(session, on_item, display, parallel))  # Ctrl-C always ends it
    except ModelError as exc:
        display.end_line()
        _fail(err, exc.message)
        err.print(Text("the file is unchanged past the last complete element; run it again to resume", "dim"))
        return EXIT_MODEL
    except OSError as exc:  # the transcript could not be written (file removed, disk full)
        display.end_line()
        _fail(err, f"cannot write the transcript to {file}: {exc.strerror or exc}")
        return EXIT_MODEL
    except KeyboardInterrupt:
        _fail(err, "interrupted; the file is valid up to the last complete element; run it again to resume")
        return EXIT_INTERRUPTED
    display.usage(result.usage, result.turns)
    if result.stopped == "max_turns":
        _fail(err, f"stopped after {result.turns} model calls without a final answer; run again to continue")
        return EXIT_MODEL
    return EXIT_OK
