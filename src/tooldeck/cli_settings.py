"""``tooldeck settings ...``: the person's own way to read and change tooldeck's settings.

* ``tooldeck settings list [--group GROUP]``
* ``tooldeck settings get KEY``
* ``tooldeck settings set KEY VALUE`` (``VALUE`` ``-``: read it from stdin,
  without echo on a terminal, so a key never lands in the shell history)
* ``tooldeck settings unset KEY`` (back to the default)

Why a verb of its own: some settings are authority (SPEC §3): the model
endpoint (``models.base_url``) and its key (``models.api_key``) decide where
every prompt and the key go, so no model-facing tool may set them
(``app_settings`` answers ``denied`` and names this command). The same
registry and store as ``app_settings``, written with ``by="person"``. Values
are read strictly by type (``true``/``false`` for a boolean, not ``1``).
Secrets stay write-only here too: ``list``/``get`` show only whether one is set.
Exit status: 0 success, 1 a store error, 2 a usage error (unknown key, bad value).
"""

from __future__ import annotations

import getpass
import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from tooldeck.config import load_config
from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.store.db import Store

settings_app = typer.Typer(
    help="Your tooldeck settings (the model endpoint and key are set here, never by a model).",
    no_args_is_help=True,
)

StateOpt = Annotated[
    Path | None, typer.Option("--state-dir", envvar="TOOLDECK_STATE_DIR", help="State directory (SQLite store).")
]
KeyArg = Annotated[
    str, typer.Argument(help="Fully-qualified key, e.g. models.base_url (see `tooldeck settings list`).")
]


def _service(state_dir: Path | None) -> Any:
    from tooldeck.settings import Settings  # lazy: only the settings verbs load the registry (~3 modules)

    return Settings(Store(state_dir), files=lambda: load_config(None))  # the person's own file: no root here


def _fail(exc: Exception) -> typer.Exit:
    if isinstance(exc, ToolError):
        typer.echo(f"tooldeck: {exc.message}", err=True)
        usage = exc.code in (ErrorCode.NOT_FOUND, ErrorCode.INVALID_ARGUMENTS)
        return typer.Exit(2 if usage else 1)
    typer.echo(f"tooldeck: {exc}", err=True)
    return typer.Exit(1)


def _show(state_dir: Path | None, keys: list[str]) -> None:
    # lazy: only `settings list` renders the tools' listing (the tool model: ~160 modules)
    from tooldeck.tools.workspaces.app_settings import listing_text

    try:
        svc = _service(state_dir)
        typer.echo(listing_text([svc.describe(k) for k in keys]))
    except Exception as exc:  # a bad key, an unreadable store: one line, not a traceback
        raise _fail(exc) from exc


@settings_app.command("list")
def settings_list(
    group: Annotated[str | None, typer.Option("--group", help="Only this group (models, output, ...).")] = None,
    state_dir: StateOpt = None,
) -> None:
    """List every setting with its value, where it comes from, and who may set it."""
    from tooldeck.settings import GROUPS, REGISTRY  # lazy: only the settings verbs load the registry

    if group is not None and group not in GROUPS:
        typer.echo(f"tooldeck: unknown group {group!r}; choose one of {', '.join(GROUPS)}", err=True)
        raise typer.Exit(2)
    order = list(GROUPS)
    keys = sorted(
        (k for k, s in REGISTRY.items() if group in (None, s.group)), key=lambda k: (order.index(k.split(".")[0]), k)
    )
    _show(state_dir, keys)


@settings_app.command("get")
def settings_get(key: KeyArg, state_dir: StateOpt = None) -> None:
    """Show one setting (a secret shows only whether it is set)."""
    _show(state_dir, [key])


def _read_value(key: str) -> str:
    """The value from stdin: a hidden prompt on a terminal, else the piped text
    without its final line break."""
    if sys.stdin is None:
        raise typer.BadParameter("`-` reads the value from stdin, and there is none")
    if sys.stdin.isatty():
        return getpass.getpass(f"{key}: ")
    text = sys.stdin.read()
    return text[:-1] if text.endswith("\n") else text


@settings_app.command("set")
def settings_set(
    key: KeyArg,
    value: Annotated[str, typer.Argument(help="The value, read by the key's type; `-` reads it from stdin.")],
    state_dir: StateOpt = None,
) -> None:
    """Set a setting (as the person: person-only keys such as models.base_url included)."""
    from tooldeck.settings import lookup, parse_text  # lazy: only the settings verbs load the registry

    try:
        spec = lookup(key)
        text = _read_value(key).removesuffix("\r") if value == "-" else value
        svc = _service(state_dir)
        stored = svc.set(key, parse_text(spec, text), by="person")
    except typer.BadParameter:
        raise
    except Exception as exc:
        raise _fail(exc) from exc
    typer.echo(f"{key} set: {'(hidden)' if spec.secret else json.dumps(stored)}")
    if spec.secret and value != "-":
        typer.echo("note: the value is now in your shell history; next time pass `-` and type or pipe it", err=True)
    _note_env(spec)


@settings_app.command("unset")
def settings_unset(key: KeyArg, state_dir: StateOpt = None) -> None:
    """Remove the stored value (the default, or the config file / environment, applies again)."""
    from tooldeck.settings import lookup  # lazy: only the settings verbs load the registry

    try:
        spec = lookup(key)
        _service(state_dir).set(key, None, by="person")
    except Exception as exc:
        raise _fail(exc) from exc
    typer.echo(f"{key} unset (default: {json.dumps(spec.default)})")
    _note_env(spec)


def _note_env(spec: Any) -> None:
    if spec.env and os.environ.get(spec.env):
        typer.echo(f"note: {spec.env} is set in this environment and takes precedence", err=True)
