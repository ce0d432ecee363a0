"""``tooldeck index ...`` and ``tooldeck search ...``: indexes from the shell.

* ``tooldeck index docs [FOLDER] [--name docs] [--description TEXT]``
* ``tooldeck index code [FOLDER] [--name code]``
* ``tooldeck index list``
* ``tooldeck search QUERY [--index NAME | --package PKG] [-k 5] [--mode hybrid]``

Each takes ``--index-dir DIR`` (where the indexes are; default ``[index] dir``
of the user config, else the state directory, see :func:`tooldeck.index.service.index_dir`).

The same :class:`~tooldeck.index.service.IndexService` the tools use, with a
rich progress bar on stderr (stdout carries only results, for scripts).
Exit status as ``tooldeck call``: 1 for a tool error, 2 for a usage error.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from tooldeck.core.errors import ToolError

index_app = typer.Typer(help="Build and list search indexes (Markdown docs, code).", no_args_is_help=True)

RootOpt = Annotated[list[Path] | None, typer.Option("--root", help="Root directory (repeatable; default: cwd).")]
StateOpt = Annotated[
    Path | None, typer.Option("--state-dir", envvar="TOOLDECK_STATE_DIR", help="State directory (indexes live here).")
]
IndexDirOpt = Annotated[
    Path | None,
    typer.Option("--index-dir", help="Folder of the indexes (default: [index] dir in your config, else the state "
                 "directory's indexes/); e.g. .md_index as ochat keeps it."),
]  # fmt: skip


def _service(roots: list[Path] | None, state_dir: Path | None, index_dir: Path | None = None) -> Any:
    # lazy: only the index verbs load the index service (numpy, tantivy: ~245 modules)
    from tooldeck.index.service import INDEX_DIR_KEY, IndexService
    from tooldeck.runtime import Runtime  # lazy: only the index verbs build a runtime (confine, ctypes: ~28 modules)

    try:
        rt = Runtime.for_dirs([str(r) for r in roots] if roots else None, state_dir=state_dir)
        if index_dir is not None:
            rt.settings[INDEX_DIR_KEY] = str(index_dir.expanduser().absolute())
        return IndexService(rt)
    except (FileNotFoundError, ValueError, ToolError) as exc:
        typer.echo(f"tooldeck: {getattr(exc, 'message', exc)}", err=True)
        raise typer.Exit(2) from exc


@contextmanager
def _progress_bar() -> Iterator[Callable[[str, int, int], None]]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("{task.description:<10}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=False,
    )
    tasks: dict[str, Any] = {}

    def update(stage: str, done: int, total: int) -> None:
        if stage not in tasks:
            tasks[stage] = bar.add_task(stage, total=total)
        bar.update(tasks[stage], completed=done, total=total)

    with bar:
        yield update


def _run(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except ToolError as exc:
        typer.echo(f"error [{exc.code}]: {exc.message}", err=True)
        raise typer.Exit(1) from exc


@index_app.command("docs")
def index_docs(
    folder: Annotated[str, typer.Argument(help="Folder of Markdown/reST docs.")] = ".",
    name: Annotated[str, typer.Option("--name", help="Index name.")] = "docs",
    description: Annotated[str, typer.Option("--description", help="What the docs are about.")] = "",
    root: RootOpt = None,
    state_dir: StateOpt = None,
    index_dir: IndexDirOpt = None,
) -> None:
    """Index (or update) a folder of Markdown docs."""
    svc = _service(root, state_dir, index_dir)
    with _progress_bar() as bar:
        report = _run(lambda: svc.build_markdown(folder, name, description, bar))
    typer.echo(report.summary())


@index_app.command("code")
def index_code(
    folder: Annotated[str, typer.Argument(help="Source folder.")] = ".",
    name: Annotated[str, typer.Option("--name", help="Index name.")] = "code",
    root: RootOpt = None,
    state_dir: StateOpt = None,
    index_dir: IndexDirOpt = None,
) -> None:
    """Index (or update) a source folder, one chunk per definition."""
    svc = _service(root, state_dir, index_dir)
    with _progress_bar() as bar:
        report = _run(lambda: svc.build_code(folder, name, "", bar))
    typer.echo(report.summary())


@index_app.command("list")
def index_list(
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    state_dir: StateOpt = None,
    index_dir: IndexDirOpt = None,
) -> None:
    """List the built indexes."""
    svc = _service(None, state_dir, index_dir)
    for man in svc.indexes():
        if as_json:
            typer.echo(json.dumps(man))
        else:
            desc = f"  {man['description']}" if man.get("description") else ""
            typer.echo(f"{man['name']:<24} {man['kind']:<9} {man['chunks']:>7} chunks  {man['model']}{desc}")


def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    index: Annotated[str | None, typer.Option("--index", help="Index name (from `tooldeck index list`).")] = None,
    package: Annotated[str | None, typer.Option("--package", help="Search an installed Python package's docs.")] = None,
    k: Annotated[int, typer.Option("-k", help="Number of results.")] = 5,
    mode: Annotated[str, typer.Option("--mode", help="hybrid, lexical or dense.")] = "hybrid",
    root: RootOpt = None,
    state_dir: StateOpt = None,
    index_dir: IndexDirOpt = None,
) -> None:
    """Search an index (or, with --package, an installed package's docstrings)."""
    # lazy: only `search` renders hits (the tool model: ~160 modules)
    from tooldeck.tools.index.common import render_hits

    if mode not in ("hybrid", "lexical", "dense") or (index is None) == (package is None) or k < 1:
        typer.echo("tooldeck: give exactly one of --index or --package; --mode hybrid|lexical|dense; -k >= 1", err=True)
        raise typer.Exit(2)
    svc = _service(root, state_dir, index_dir)
    if package is not None:
        with _progress_bar() as bar:
            index, _ = _run(lambda: svc.ensure_pydoc(package, bar))
    assert index is not None
    name = index
    hits = _run(lambda: svc.search(name, query, k, mode))  # type: ignore[arg-type]
    idx = svc.open(name)
    source = str(idx.manifest.get("source", "")) if idx.kind != "pydoc" else ""
    typer.echo(render_hits(hits, query, source, svc.rt.workspace, name).as_text().rstrip())
