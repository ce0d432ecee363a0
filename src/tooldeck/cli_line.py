"""The common command lines read without typer (:mod:`tooldeck.launch`:
``serve`` and ``call`` start without the CLI framework). One reader for
both: options and positionals as click reads them, or None for a line only
the full CLI can take (it owns the usage messages)."""

from __future__ import annotations


def split_line(
    args: list[str], options: dict[str, str], lists: dict[str, str]
) -> tuple[list[str], dict[str, str | list[str]]] | None:
    """``args`` as (positionals, {field: value}); ``options`` and ``lists``
    map an option's name to its field (a ``lists`` option repeats: its field
    holds every value). ``--NAME=VALUE`` and ``--NAME VALUE`` both work;
    ``--`` ends the options and ``-`` is a positional, as click has them.
    None for an unknown option (``--help`` included) or a missing value."""
    positional: list[str] = []
    named: dict[str, str | list[str]] = {field: [] for field in lists.values()}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            positional.extend(args[i + 1 :])
            break
        if arg.startswith("-") and arg != "-":
            name, eq, value = arg.partition("=")
            if name not in options and name not in lists:
                return None
            if not eq:
                if i + 1 >= len(args):
                    return None
                i += 1
                value = args[i]
            if name in lists:
                repeated = named[lists[name]]
                assert isinstance(repeated, list)
                repeated.append(value)
            else:
                named[options[name]] = value
        else:
            positional.append(arg)
        i += 1
    return positional, named
