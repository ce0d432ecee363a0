"""A zygote for the crash test: imports tooldeck once, then forks a fresh
process per command, so killing a writer 20 times costs milliseconds of
start-up instead of a second of imports each time.

Commands on stdin (one per line), answers on stdout:

* ``patch FILE`` — fork a child that applies the patch in FILE with the
  ``apply_patch`` tool, as ``tooldeck call`` would; answer its pid.
* ``wait PID`` — reap that child; answer its wait status.
* ``check`` — fork "the next tooldeck process": it starts a Runtime (which
  recovers interrupted writes) and lists the root with get_file_tree,
  read_directory and file_search; answer those outputs as one JSON line.

The zygote itself never runs a tool, so it has no threads when it forks.
"""

from __future__ import annotations

import json
import os
import sys

from tooldeck.core.toolbox import Toolbox
from tooldeck.runtime import Runtime
from tooldeck.tools import edits, files, search
from tooldeck.workspace import journal


def _patch(box: Toolbox, path: str) -> None:
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    res = box.call_sync("apply_patch", text)
    journal.flush()
    os._exit(1 if res.is_error else 0)


def _check(root: str, state: str, box: Toolbox) -> None:
    try:
        pending = os.listdir(os.path.join(state, "journal"))
    except FileNotFoundError:
        pending = []
    Runtime.for_dirs([root], state_dir=state)  # starting a Runtime recovers interrupted writes
    out = {
        "pending": len(pending),
        "tree": box.call_sync("get_file_tree", {"type": "files", "mode": "full"}).text,
        "dir": box.call_sync("read_directory", {"path": "pkg0"}).text,
        "top": box.call_sync("read_directory", {"path": "."}).text,
        "search": box.call_sync("file_search", {"pattern": "value", "mode": "both", "max_results": 500}).text,
    }
    journal.flush()
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
    os._exit(0)


def main() -> None:
    root, state = sys.argv[1], sys.argv[2]
    rt = Runtime.for_dirs([root], state_dir=state)  # tools built once: a fork starts with them
    writer = Toolbox(edits.tools(rt))
    lister = Toolbox([*files.tools(rt), *search.tools(rt)])
    for line in sys.stdin:
        cmd, _, arg = line.strip().partition(" ")
        if cmd == "patch":
            pid = os.fork()
            if pid == 0:
                _patch(writer, arg)
            print(pid, flush=True)
        elif cmd == "wait":
            _, status = os.waitpid(int(arg), 0)
            print(status, flush=True)
        elif cmd == "check":
            pid = os.fork()
            if pid == 0:
                _check(root, state, lister)
            os.waitpid(pid, 0)
        else:
            return


if __name__ == "__main__":
    main()
