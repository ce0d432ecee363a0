"""Run a command as an unprivileged uid over a checkout and an interpreter it may not reach.

Why: the break-out suite must also run as an unprivileged user, but the
checkout, the virtualenv or the interpreter may sit below a folder that user
cannot enter (a clone under ``/root``, mode 700; pyenv's Python under
``/root/.pyenv``). Nothing is copied or chmod-ed on the host: as root, in a
private mount namespace of its own (``unshare --mount``), every folder on the
way to the needed paths that the uid cannot enter is covered by a tmpfs of
mode 755 into which only the needed entries are bound back, at the same paths
— the rest of that folder stays invisible — then ``setpriv`` drops to the uid
and executes the command. The mounts vanish with the namespace.

Usage (as root): ``python tests/shell/unprivileged.py --uid 65534 --stage DIR --need PATH... -- CMD...``
"""

from __future__ import annotations

import argparse
import os
import stat
import subprocess
import sys
import tempfile

SETPRIV = ["setpriv", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all"]


def enterable(path: str, uid: int) -> bool:
    """Whether ``uid`` (its own group only, no supplementary groups) may pass through ``path``."""
    st = os.stat(path)
    if st.st_uid == uid:
        return bool(st.st_mode & stat.S_IXUSR)
    if st.st_gid == uid:
        return bool(st.st_mode & stat.S_IXGRP)
    return bool(st.st_mode & stat.S_IXOTH)


def blocked(needed: list[str], uid: int) -> dict[str, set[str]]:
    """Folders on the way to each needed path that ``uid`` cannot enter, each with the
    names below it that lead on to a needed path."""
    out: dict[str, set[str]] = {}
    for path in needed:
        parts = os.path.realpath(path).strip("/").split("/")
        cur = "/"
        for name in parts:
            if name and not enterable(cur, uid):
                out.setdefault(cur, set()).add(name)
            cur = os.path.join(cur, name)
    return out


def drop_argv(uid: int, command: list[str]) -> list[str]:
    return [*SETPRIV, f"--reuid={uid}", f"--regid={uid}", *command]


def wrap(uid: int, needed: list[str], stage: str, command: list[str]) -> list[str]:
    """The argv that runs ``command`` as ``uid`` with the needed paths reachable
    (``stage``: an empty folder of root's for the namespace's staging mounts)."""
    if not blocked(needed, uid):
        return drop_argv(uid, command)
    here = os.path.abspath(__file__)
    need = [a for p in needed for a in ("--need", p)]
    return ["unshare", "--mount", "--propagation", "private", "--", sys.executable, "-S", here,
            "--uid", str(uid), "--stage", stage, *need, "--", *command]  # fmt: skip


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True)


def expose(needed: list[str], uid: int, stage: str) -> None:
    """In this (private) mount namespace: tmpfs over each folder ``uid`` cannot enter,
    with the entries that lead to the needed paths bound back (shallowest first)."""
    stage = tempfile.mkdtemp(dir=stage)  # a fresh one per namespace: the mount points stay behind as folders
    done: set[str] = set()
    while True:
        todo = {d: names for d, names in blocked(needed, uid).items() if d not in done}
        if not todo:
            return
        folder = min(todo, key=lambda d: d.count("/"))
        names = sorted(todo[folder])
        for i, name in enumerate(names):
            os.mkdir(os.path.join(stage, f"{len(done)}-{i}"))
            _mount("--rbind", os.path.join(folder, name), os.path.join(stage, f"{len(done)}-{i}"))
        _mount("-t", "tmpfs", "-o", "mode=755", "tooldeck-view", folder)
        for i, name in enumerate(names):
            os.mkdir(os.path.join(folder, name))
            _mount("--rbind", os.path.join(stage, f"{len(done)}-{i}"), os.path.join(folder, name))
        done.add(folder)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--uid", type=int, required=True)
    ap.add_argument("--need", action="append", default=[])
    ap.add_argument("--stage", required=True)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    expose(args.need, args.uid, args.stage)
    argv = drop_argv(args.uid, command)
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main()
