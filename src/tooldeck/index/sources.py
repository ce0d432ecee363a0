"""What an index covers and how its files are read.

Folder indexes (Markdown, code) list a folder of a workspace root with the
workspace walker (ignore rules, no symlinked folders) and read every file
through :func:`tooldeck.workspace.content.read_bytes` relative to the root
(no component followed out of it). A Python package's files are found with
``importlib`` (the installed package's own folder, never a path a model
typed) and read from there.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from tooldeck.core.errors import ErrorCode, ToolError, invalid_arguments
from tooldeck.workspace.content import looks_binary, read_bytes
from tooldeck.workspace.roots import ResolvedPath, Workspace
from tooldeck.workspace.walk import walk_files

MAX_FILE_BYTES = 2_000_000
MAX_PACKAGE_FILES = 20_000
_PKG = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,200}$")


@dataclass(frozen=True)
class FolderSource:
    """A folder of a root: ``files`` are relative to the folder."""

    folder: ResolvedPath
    files: list[str]

    def loader(self) -> Callable[[str], bytes | None]:
        root = self.folder.root.path
        base = self.folder.abs

        def load(rel: str) -> bytes | None:
            try:
                fb = read_bytes(os.path.join(base, rel), rel, MAX_FILE_BYTES + 1, root=root)
            except ToolError:
                return None
            if fb.truncated or looks_binary(fb.data):
                return None
            return fb.data

        return load


def folder_source(ws: Workspace, folder: str, admit: Callable[[str], bool], field: str) -> FolderSource:
    """The admitted files under ``folder`` (resolved with the path rules)."""
    rp = ws.resolve(folder, field_name=field)
    if not os.path.isdir(rp.abs):
        raise ToolError(ErrorCode.NOT_A_DIRECTORY, f"{folder!r} is not a folder; give the folder to index")
    rules = ws.rules(rp.root)
    start = "" if rp.rel == "." else rp.rel
    prefix = f"{start}/" if start else ""
    files = [p[len(prefix) :] for p in walk_files(rules, start) if admit(p)]
    return FolderSource(rp, files)


@dataclass(frozen=True)
class PackageSource:
    name: str  # the importable top-level name
    version: str
    base: Path  # the folder holding the package folder (paths are relative to it)
    files: list[str]

    def loader(self) -> Callable[[str], bytes | None]:
        base = self.base

        def load(rel: str) -> bytes | None:
            try:
                with open(base / rel, "rb") as fh:  # found by importlib, not named by a model
                    data = fh.read(MAX_FILE_BYTES + 1)
            except OSError:
                return None
            return None if len(data) > MAX_FILE_BYTES else data

        return load


def _top_level_for_dist(name: str) -> str | None:
    norm = re.sub(r"[-_.]+", "-", name).lower()
    for top, dists in metadata.packages_distributions().items():
        if any(re.sub(r"[-_.]+", "-", d).lower() == norm for d in dists):
            return top
    return None


def _version_of(top: str) -> str:
    for dist in metadata.packages_distributions().get(top, []):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    mod = sys.modules.get(top)
    return str(getattr(mod, "__version__", "")) or "unknown"


def package_source(package: str) -> PackageSource:
    """An installed package's Python files, found without importing it."""
    if not _PKG.match(package):
        raise invalid_arguments(f"{package!r} is not a Python package name", field="package")
    top = package.split(".")[0]
    spec = importlib.util.find_spec(top) if top.isidentifier() else None
    if spec is None:
        alt = _top_level_for_dist(package)
        spec = importlib.util.find_spec(alt) if alt else None
        top = alt or top
    if spec is None or (spec.origin is None and not spec.submodule_search_locations):
        raise ToolError(
            ErrorCode.NOT_FOUND,
            f"no installed Python package {package!r} in this interpreter ({sys.executable}); "
            "give the import name (e.g. `yaml` for PyYAML) or the distribution name",
        )
    if spec.submodule_search_locations:
        pkg_dir = Path(next(iter(spec.submodule_search_locations)))
        base = pkg_dir.parent
        sub = package.split(".")[1:]
        start = pkg_dir.joinpath(*sub) if sub else pkg_dir
        if not start.exists() and not start.with_suffix(".py").exists():
            raise ToolError(ErrorCode.NOT_FOUND, f"package {top!r} has no module {package!r}")
        files = _py_files(start if start.is_dir() else start.with_suffix(".py"), base)
    else:
        origin = Path(str(spec.origin))
        if origin.suffix != ".py":
            raise ToolError(ErrorCode.UNSUPPORTED, f"{package!r} is a compiled module ({origin.name}): no source")
        base = origin.parent
        files = [origin.name]
    return PackageSource(top, _version_of(top), base, files)


def _py_files(start: Path, base: Path) -> list[str]:
    if start.is_file():
        return [start.relative_to(base).as_posix()]
    out: list[str] = []
    for dirpath, dirs, names in os.walk(start):
        # private packages and modules (`_impl/`, `_compat.py`) are not the package's documented API
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        for n in sorted(names):
            if n.endswith(".py") and (n == "__init__.py" or not n.startswith("_")):
                out.append((Path(dirpath) / n).relative_to(base).as_posix())
                if len(out) >= MAX_PACKAGE_FILES:
                    return out
    return out
