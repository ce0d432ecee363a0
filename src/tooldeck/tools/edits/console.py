"""The ``apply_patch`` executable, with the Codex CLI contract (SPEC §9).

``apply_patch 'PATCH'`` or ``... | apply_patch``; the current directory is the
only root. Prints ``Success. Updated the following files:`` and ``A/M/D path``
lines; exit 0 on success, 1 when the patch cannot be applied (the reason on
stderr, nothing changed), 2 on a usage error. ``--preserve-crlf`` (a newer
Codex flag) is accepted and changes nothing: CRLF files always keep CRLF.
Only the workspace and the patch engine are imported, so it starts fast.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from tooldeck.core.errors import ToolError
from tooldeck.tools.edits.engine import apply_patch_text
from tooldeck.workspace.roots import Workspace

USAGE = "Usage: apply_patch 'PATCH'\n       echo 'PATCH' | apply_patch"
EXIT_OK, EXIT_APPLY, EXIT_USAGE = 0, 1, 2


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "--preserve-crlf":
        args = args[1:]
    if args and args[0] in ("-h", "--help"):
        print(USAGE)
        return EXIT_OK
    if len(args) > 1:
        print("Error: apply_patch accepts exactly one PATCH argument.", file=sys.stderr)
        print(USAGE, file=sys.stderr)
        return EXIT_USAGE
    if args:
        patch = args[0]
    else:
        if sys.stdin is None or sys.stdin.isatty():
            print(USAGE, file=sys.stderr)
            return EXIT_USAGE
        try:
            patch = sys.stdin.read()
        except (OSError, UnicodeDecodeError) as exc:
            print(f"Error: failed to read PATCH from stdin: {exc}", file=sys.stderr)
            return EXIT_APPLY
        if not patch:
            print(USAGE, file=sys.stderr)
            return EXIT_USAGE

    try:
        ws = Workspace.from_dirs([os.getcwd()])
        outcome = apply_patch_text(ws, patch, show="cwd")
    except ToolError as exc:
        print(f"Error: {exc.message}", file=sys.stderr)
        return EXIT_APPLY
    except OSError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return EXIT_APPLY
    out = ["Success. Updated the following files:", *outcome.summary()]
    sys.stdout.write("\n".join(out) + "\n")
    sys.stdout.flush()
    return EXIT_OK


def entry() -> None:  # pragma: no cover - thin wrapper for `python -m`
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    entry()
