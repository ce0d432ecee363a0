"""A held-out tree for the context benchmarks: files tooldeck was never tuned
on, built on the fly from this venv's own site-packages and the standard
library, every file's content distinct (deduplicated by SHA-1), paths kept.

The bench tree of ``context_speed.py`` mixes site-packages with Go, Rust, Java
and npm sources; a user's Python repository is nearer to this one: Python
only, large modules (the standard library's ``_pydecimal.py``, ``typing.py``),
dense cross-references. ``--held-out`` in ``context_speed.py`` measures on it
with tasks of its own (none of them was used to tune anything).

    python bench/heldout_tree.py DIR [--files 8000]   # build it and print the count
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sysconfig
from collections.abc import Callable
from pathlib import Path

SOURCES = {
    "site-packages": Path(sysconfig.get_paths()["purelib"]),
    "stdlib": Path(sysconfig.get_paths()["stdlib"]),
}
KEEP = (".py", ".pyi", ".md", ".rst", ".txt", ".toml", ".cfg")
SKIP_DIRS = {"__pycache__", ".git", "site-packages", "lib-dynload", "config-3.11-x86_64-linux-gnu"}
MAX_BYTES = 500_000

# tasks a user of this tree could ask; written for this tree, never used to tune the ranking
TASKS = [
    "asyncio StreamReader.readuntil raises LimitOverrunError too early when the separator spans two chunks",
    "json decoder reports the wrong error position for an invalid unicode escape in a string",
    "email header folding splits an encoded word longer than 78 characters in the middle",
    "http.client HTTPResponse fails to read a chunked body when trailer headers follow the last chunk",
    "logging RotatingFileHandler loses records when two processes roll over the same file",
    "pathlib Path.glob with ** does not follow symlinked directories",
    "dataclasses field with default_factory is shared between instances when kw_only is set",
    "argparse mutually exclusive group ignores required=True when a subparser is given",
    "zipfile ZipFile.extractall writes outside the target directory for a crafted member name",
    "pydantic model_dump with exclude_none drops fields of a nested model set to an empty list",
    "urllib3 PoolManager does not close the connection when a redirect changes the host",
    "rich Table column width is wrong when a cell contains wide East Asian characters",
    "tree_sitter Parser.parse with an old tree does not reuse unchanged nodes after an edit",
    "typing get_type_hints fails on a forward reference inside Annotated metadata",
    "sqlite3 Connection.backup progress callback is called with the wrong remaining page count",
]


def copy_distinct(
    sources: dict[str, Path],
    target: Path,
    want: int,
    keep: tuple[str, ...],
    skip_dir: Callable[[str], bool],
    *,
    max_bytes: int = MAX_BYTES,
    exact: bool = True,
) -> Path:
    """Copy files of distinct content (SHA-1) from ``sources``, a folder of each
    in turn (round-robin), to ``target/<source name>/<path>`` until ``want``;
    ``exact=False`` finishes the folder being copied (the bench tree's way)."""
    seen: set[str] = set()
    walkers = {name: os.walk(src) for name, src in sources.items() if src.is_dir()}
    count = 0
    while walkers and count < want:
        for name in list(walkers):
            try:
                dirpath, dirs, files = next(walkers[name])
            except StopIteration:
                del walkers[name]
                continue
            dirs[:] = sorted(d for d in dirs if not skip_dir(d))
            for f in sorted(files):
                if exact and count >= want:
                    break
                src = Path(dirpath, f)
                if not f.endswith(keep) or src.is_symlink():
                    continue
                try:
                    data = src.read_bytes()
                except OSError:
                    continue
                digest = hashlib.sha1(data).hexdigest()
                if digest in seen or len(data) > max_bytes:
                    continue
                seen.add(digest)
                dst = target / name / src.relative_to(sources[name])
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.write_bytes(data)
                count += 1
    return target


def build_heldout(target: Path, want: int = 8000) -> Path:
    """Copy files of distinct content, site-packages and stdlib in turn, until ``want``."""
    return copy_distinct(
        SOURCES, target, want, KEEP, lambda d: d in SKIP_DIRS or d.endswith((".dist-info", ".egg-info"))
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--files", type=int, default=8000)
    args = ap.parse_args()
    out = build_heldout(Path(args.dir), args.files)
    print(sum(1 for _ in out.rglob("*") if _.is_file()), "files in", out)


if __name__ == "__main__":
    main()
