"""Starting ``tooldeck chat``: its command line and the choice of backend.

Why here and not only in the typer command: the screen must appear at once
(≤ 300 ms), and typer + click cost ~100-250 ms to import and to build their
parameters. :func:`parse_chat` reads the common command lines itself (as
``tooldeck serve`` does in :mod:`tooldeck.launch`); anything it does not fully
understand (``--help``, an unknown option, a missing value) goes to the typer
command in :mod:`tooldeck.cli_chat`, which owns the usage messages. Both run
:func:`run_chat`.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

EXIT_USAGE = 2


@dataclass
class ChatArgs:
    file: str | None = None
    model: str | None = None
    roots: list[str] = field(default_factory=list)
    parallel: bool = True
    connect: str | None = None
    workspace: str | None = None
    session: str | None = None
    token_file: str | None = None
    approval: str = "auto"
    state_dir: str | None = field(default_factory=lambda: os.environ.get("TOOLDECK_STATE_DIR") or None)


_VALUES = {"--model": "model", "--connect": "connect", "--workspace": "workspace", "--session": "session",
           "--token-file": "token_file", "--approval": "approval", "--state-dir": "state_dir"}  # fmt: skip
_FLAGS = {"--parallel-tool-calls": True, "--no-parallel-tool-calls": False}


def parse_chat(argv: list[str]) -> ChatArgs | None:
    """``chat`` arguments, or None to let the full CLI handle them."""
    out = ChatArgs()
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if arg in _FLAGS:
            out.parallel = _FLAGS[arg]
        elif name in _VALUES or name == "--root":
            if not eq:
                if i + 1 >= len(argv):
                    return None
                i += 1
                value = argv[i]
            if name == "--root":
                out.roots.append(value)
            else:
                setattr(out, _VALUES[name], value)
        elif arg.startswith("-") or out.file is not None:
            return None
        else:
            out.file = arg
        i += 1
    return out


def new_file_name(directory: Path) -> Path:
    """``chat-YYYYMMDD-HHMMSS.chatmd`` in ``directory``, never an existing file's name."""
    stem = time.strftime("chat-%Y%m%d-%H%M%S")
    path, n = directory / f"{stem}.chatmd", 2
    while path.exists():
        path, n = directory / f"{stem}-{n}.chatmd", n + 1
    return path


def _usage(message: str) -> int:
    print(f"tooldeck chat: {message}", file=sys.stderr)
    return EXIT_USAGE


def run_chat(args: ChatArgs) -> int:
    """Check the arguments, pick the backend, run the screen; the exit status."""
    path = (Path(args.file) if args.file else new_file_name(Path.cwd())).absolute()
    if path.exists() and not path.is_file():
        return _usage(f"{path} is not a file")
    if args.connect is None and (args.workspace or args.session or args.token_file):
        return _usage("--workspace, --session and --token-file need --connect URL")
    if args.approval not in ("ask", "auto"):
        return _usage("--approval is 'ask' or 'auto'")
    if args.connect is not None and args.roots:
        return _usage("--root is for a local chat; a connected chat works on the server's workspace roots")
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return _usage("needs a terminal; for a batch run use `tooldeck run FILE`")
    # lazy: usage errors and `chat --help` answer before textual (~300 modules) loads
    from tooldeck.tui.app import run_app

    if args.connect is not None:
        from tooldeck.tui.server import read_token  # lazy: only a connected chat reads a token (the server client)

        try:
            token = read_token(Path(args.token_file) if args.token_file else None)
        except (OSError, IndexError) as exc:
            return _usage(f"cannot read the token file {args.token_file}: {getattr(exc, 'strerror', None) or exc}")
        connect = args.connect

        def backend(emit):  # type: ignore[no-untyped-def]
            # lazy: only a connected chat loads the client side (~150 modules)
            from tooldeck.tui.remote import RemoteChat

            return RemoteChat(path, emit, url=connect, token=token, workspace=args.workspace, session=args.session,
                              model=args.model, approval=args.approval, state_dir=args.state_dir)  # fmt: skip
    else:

        def backend(emit):  # type: ignore[no-untyped-def]
            from tooldeck.tui.local import LocalChat  # lazy: only a local chat loads the local backend (~140 modules)

            return LocalChat(path, emit, roots=args.roots or None, model=args.model, parallel=args.parallel,
                             state_dir=args.state_dir)  # fmt: skip

    return run_app(backend, path)
