"""Indexes on disk: generations, an atomically swapped pointer, a build lock.

``<state_dir>/indexes/<name>/`` holds::

    CURRENT        the name of the live generation (replaced with os.replace)
    gen-000007/    a complete index: manifest.json, chunks.json, vectors.npy, lexical/
    build-<pid>-…/ a build in progress (or the debris of a crashed one)
    .lock          flock'ed by the one process building this index

A build writes a whole new generation into a ``build-*`` folder, fsyncs it,
renames it to ``gen-N`` and only then replaces ``CURRENT``: a crash at any
point leaves ``CURRENT`` naming the old, complete generation, which searches
keep using. Searches take no lock; they read ``CURRENT`` and open that
generation. The generation before the live one is kept so that a search
that read the old pointer just before a swap still finds its files; older
ones, and build debris, are removed by the next build (which holds the lock,
so no other build is writing them).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tooldeck.core.errors import ErrorCode, ToolError, invalid_arguments
from tooldeck.workspace.statefiles import exclusive_lock, fsync_path, write_private_atomic

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@:+-]{0,127}$")
KEEP_OLD = 1


def check_name(name: str, field: str = "index_name") -> str:
    if not NAME_RE.match(name) or ".." in name:
        raise invalid_arguments(
            f"index name {name!r} is not valid: use letters, digits and _ . - (up to 128 characters)", field=field
        )
    return name


def _fs_name(name: str) -> str:
    return name.replace(":", "_").replace("@", "_at_").replace("+", "_")


GEN_RE = re.compile(r"^gen-[0-9]{6,}$")


class Layout:
    """``base`` is the state directory's ``indexes/`` or a folder the person
    named (``[index] dir``, ``--index-dir``), which may lie inside a root where
    the model can write: the folder or an index folder that is a symbolic link
    is refused (it could send a build's writes and removals elsewhere) and
    ``CURRENT`` must name a generation of its own folder."""

    def __init__(self, base: Path) -> None:
        self.base = base

    def dir(self, name: str) -> Path:
        d = self.base / _fs_name(name)
        for link in (p for p in (self.base, d) if p.is_symlink()):
            raise ToolError(
                ErrorCode.DENIED,
                f"the folder of index {name!r} ({link}) is a symbolic link; indexes never follow one (name the "
                "real folder with --index-dir or [index] dir)",
            )
        return d

    def current(self, name: str) -> Path | None:
        """The live generation folder of ``name``, or None if it was never built."""
        d = self.dir(name)
        try:
            gen = (d / "CURRENT").read_text().strip()
        except FileNotFoundError:
            return None
        if not GEN_RE.match(gen):
            return None
        path = d / gen
        return path if (path / "manifest.json").exists() and not path.is_symlink() else None

    def names(self) -> list[str]:
        if not self.base.is_dir():
            return []
        out = []
        for d in sorted(self.base.iterdir()):
            man = self.current_manifest_of_dir(d)
            if man is not None:
                out.append(str(man.get("name", d.name)))
        return out

    def current_manifest_of_dir(self, d: Path) -> dict[str, Any] | None:
        try:
            gen = (d / "CURRENT").read_text().strip()
            if d.is_symlink() or not GEN_RE.match(gen):
                return None
            return json.loads((d / gen / "manifest.json").read_text())  # type: ignore[no-any-return]
        except (OSError, ValueError):
            return None

    @contextlib.contextmanager
    def build_lock(self, name: str) -> Iterator[None]:
        """Serialise builds of one index across processes (a second build waits)."""
        d = self.dir(name)
        d.mkdir(parents=True, exist_ok=True)
        with exclusive_lock(d / ".lock"):
            yield

    def new_build_dir(self, name: str) -> Path:
        d = self.dir(name)
        d.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f"build-{os.getpid()}-", dir=d))

    def publish(self, name: str, build: Path) -> str:
        """Rename the finished ``build`` folder to the next generation and make
        it live. Call with the build lock held."""
        d = self.dir(name)
        _fsync_tree(build)
        gens = sorted(p.name for p in d.glob("gen-*"))
        n = int(gens[-1][4:]) + 1 if gens else 1
        gen = f"gen-{n:06d}"
        os.rename(build, d / gen)
        write_private_atomic(d / "CURRENT", (gen + "\n").encode())
        _fsync_dir(d)
        return gen

    def cleanup(self, name: str) -> None:
        """Remove build debris and generations older than the one before the
        live one. Call with the build lock held."""
        d = self.dir(name)
        live = self.current(name)
        for p in d.glob("build-*"):
            shutil.rmtree(p, ignore_errors=True)
        for p in [*d.glob("CURRENT.*.tmp"), *d.glob(".CURRENT.*.tmp")]:  # before and since write_private_atomic
            with contextlib.suppress(OSError):
                p.unlink()
        gens = sorted(p for p in d.glob("gen-*") if live is None or p.name != live.name)
        keep = [g for g in gens if live is not None and g.name < live.name][-KEEP_OLD:]
        for g in gens:
            if g not in keep:
                shutil.rmtree(g, ignore_errors=True)

    def remove(self, name: str) -> bool:
        d = self.dir(name)
        if not d.exists():
            return False
        with self.build_lock(name):
            with contextlib.suppress(FileNotFoundError):
                (d / "CURRENT").unlink()
            for p in d.iterdir():
                if p.name != ".lock":
                    shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink()
        return True


def _fsync_dir(path: Path) -> None:
    fsync_path(path, directory=True)


def _fsync_tree(root: Path) -> None:
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            fsync_path(os.path.join(dirpath, f))
        _fsync_dir(Path(dirpath))


def not_found(name: str, how: str) -> ToolError:
    return ToolError(ErrorCode.NOT_FOUND, f"no index named {name!r}; build it first: {how}")
