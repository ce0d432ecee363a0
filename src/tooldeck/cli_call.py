"""``tooldeck call TOOL ['{json}' | @FILE | @-] [--root ROOT ...]``: one tool, its
text on stdout; exit 0 success, 1 tool error (its text on stderr), 2 usage error.

Kept apart from the typer app (:mod:`tooldeck.cli`) so that :mod:`tooldeck.launch`
runs the common call line without the CLI framework: typer 0.29 builds a pydantic
adapter for each parameter it parses, and with its import that was ~0.2 s of the
~0.5 s of CPU a call took. Scripts and agents call tools one process at a time,
and the test suite starts ~140 of them. Both paths run :func:`run_call`.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooldeck.cli_line import split_line
from tooldeck.profiles import canonical_name
from tooldeck.startup import allowed_parents, announce_authority
from tooldeck.workspace.person_files import read_named_text

EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2
STATE_ENV = "TOOLDECK_STATE_DIR"  # what --state-dir defaults to (as the typer option's envvar)


@dataclass
class CallArgs:
    tool: str
    arguments: str | None = None  # '{json}', @FILE, @- or None (stdin when it is not a terminal)
    roots: list[str] = field(default_factory=list)
    state_dir: str | None = None
    allow_roots: list[str] = field(default_factory=list)


class CallExit(Exception):
    """A usage error or a tool error: its line went to stderr; ``code`` is the exit status."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _fail(message: str, code: int = EXIT_USAGE) -> CallExit:
    sys.stderr.write(message if message.endswith("\n") else message + "\n")
    return CallExit(code)


def run_call(args: CallArgs) -> int:
    """Run one tool; the exit status."""
    try:
        _call(args)
    except CallExit as stop:
        return stop.code
    return 0


def _call(args: CallArgs) -> None:
    raw = arguments_text(args.arguments)
    rt = runtime(args.roots, args.state_dir, args.allow_roots)
    announce_authority(rt.workspace.primary.path, rt.state_dir)
    name = canonical_name(args.tool)
    box = toolbox_for(rt, name)
    box.pager.store = _page_store(rt.state_dir)  # a printed cursor works in the next `tooldeck call`
    t = box.get(name)
    if t is None:
        raise _fail(f"tooldeck: no tool named {args.tool!r}; run `tooldeck tools` for the catalog")
    payload: str | dict[str, Any] | None = raw
    if t.kind == "function" and raw and raw.strip():
        payload = json_object(raw)
    # lazy: only `call` may ask on the terminal (asyncio: ~40 modules)
    from tooldeck.shell.approval import approver_scope, terminal_approver_if_tty

    with approver_scope(terminal_approver_if_tty()):  # a shell `ask` prompts on the terminal, if there is one
        result = box.call_sync(name, payload)
    if result.is_error:
        raise _fail(result.text, EXIT_TOOL_ERROR)
    out = result.text
    sys.stdout.write(out if out.endswith("\n") else out + "\n")


def runtime(roots: list[str] | None, state_dir: str | Path | None, allow: list[str] | None = None):  # type: ignore[no-untyped-def]
    """The started runtime of a CLI verb, or a usage error (a missing root, a bad config)."""
    # lazy: `--help` and the store verbs start without the runtime (confine, ctypes: ~27 modules)
    from tooldeck.runtime import Runtime

    try:
        allowed = allowed_parents([str(p) for p in allow or []])
        return Runtime.for_dirs(
            [str(r) for r in roots] if roots else None, state_dir=state_dir, allow_roots=allowed
        ).start()
    except (FileNotFoundError, ValueError) as exc:
        raise _fail(f"tooldeck: {exc}") from exc


def toolbox_for(rt, name: str):  # type: ignore[no-untyped-def]
    """The tools one ``call`` of ``name`` needs: its domain's alone when the
    shipped declarations name the domain (a process runs one tool; importing
    every other domain cost ~0.2 s of CPU a call), else the whole catalog
    (a tool of the person's ``[shell]`` table, an unknown name: its error
    lists the catalog). The domain builds its tools exactly as the catalog
    does, over the same runtime; only which domains are imported differs."""
    # lazy: only `call` and `tools` load the catalog (pydantic, the tool model: ~150 modules)
    from tooldeck.catalog import build_domain_toolbox, build_toolbox
    from tooldeck.tool_manifest import domain_of  # lazy: `call` alone reads the shipped declarations

    domain = domain_of(name)
    if domain is None:  # a tool of the [shell] table or no tool: the catalog says which
        return build_toolbox(rt)
    return build_domain_toolbox(rt, domain)


def arguments_text(arguments: str | None) -> str | None:
    """The arguments as given; ``@FILE`` is the content of FILE and ``@-``
    (or no argument, on a pipe) stdin, as ``rp-cli -j @edits.json`` takes them.
    A file that cannot be read is a usage error (exit 2)."""
    if arguments is None:
        return None if sys.stdin.isatty() else sys.stdin.read()
    if not arguments.startswith("@"):
        return arguments
    if arguments == "@-":
        return sys.stdin.read()
    path = Path(arguments[1:]).expanduser()
    try:
        return read_named_text(path)
    except OSError as exc:  # missing, not a regular file, too large, not UTF-8
        why = exc.strerror or str(exc)
        raise _fail(f"tooldeck: cannot read the arguments from {path}: {why}") from exc


def _page_store(state_dir: Path):  # type: ignore[no-untyped-def]
    from tooldeck.state.pages import FilePageStore  # lazy: only `call` pages its output (the page store: ~55 modules)

    return FilePageStore(state_dir / "pages")


def json_object(raw: str) -> dict[str, Any]:
    """The arguments as a JSON object, or exit 2 with one line. Raw newlines
    and tabs inside strings are accepted (``strict=False``), as argument
    recovery does in process: a shell heredoc often carries them."""
    try:
        parsed = json.loads(raw, strict=False)
    except json.JSONDecodeError as exc:
        raise _fail(f"tooldeck: arguments are not valid JSON: {exc}") from exc
    except RecursionError as exc:
        raise _fail("tooldeck: arguments are nested too deeply to be a tool's arguments") from exc
    if not isinstance(parsed, dict):
        raise _fail("tooldeck: arguments must be a JSON object")
    return parsed


_OPTIONS = {"--state-dir": "state_dir"}
_LISTS = {"--root": "roots", "--allow-root": "allow_roots"}  # repeatable


def parse_call(argv: list[str], env: dict[str, str]) -> CallArgs | None:
    """``call`` arguments as typer would take them, or None to let the full
    CLI handle the line (``--help``, ``--``, an unknown option, a missing
    value or tool, a third positional): it owns the usage messages."""
    split = None if "--" in argv else split_line(argv, _OPTIONS, _LISTS)
    if split is None or not 1 <= len(split[0]) <= 2:
        return None
    positional, named = split
    state = named.get("state_dir") or env.get(STATE_ENV) or None
    roots, allowed = (named[field] for field in ("roots", "allow_roots"))
    return CallArgs(
        positional[0],
        positional[1] if len(positional) == 2 else None,
        [str(Path(r)) for r in roots],
        None if state is None else str(Path(str(state))),
        [str(Path(p)) for p in allowed],
    )
