"""The index tools through the real surfaces: `tooldeck serve` spoken to with
the MCP SDK client (stdio and streamable HTTP, progress notifications), and
the CLI as subprocesses (`tooldeck call`, `tooldeck index`, `tooldeck search`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.index.indexkit import CODE, DOCS, write_tree
from tests.mcp.mcp_e2e import free_port, http_session, run_http, stdio_session

pytestmark = pytest.mark.timeout(120)


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


@pytest.fixture
def tree(root: Path, hermetic_config: Path) -> Path:
    write_tree(root / "docs", DOCS)
    write_tree(root / "src", CODE)
    for i in range(60):  # enough files for several progress updates
        write_tree(root / "docs" / "more", {f"p{i:02d}.md": f"# Page {i}\n\nFiller {i}.\n"})
    return root


def test_index_tools_over_stdio_with_progress(tree: Path, state_dir: Path) -> None:
    async def scenario() -> None:
        async with stdio_session(tree, state_dir) as s:
            names = {t.name for t in (await s.list_tools()).tools}
            assert {"index_markdown_docs", "markdown_search", "index_code", "query_vector_db", "pydoc_search"} <= names
            missing = await s.call_tool("query_vector_db", {"query": "port"})
            assert missing.is_error and "error [not_found]" in text_of(missing) and "index_code" in text_of(missing)

            seen: list[tuple[float, float | None, str | None]] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                seen.append((progress, total, message))

            built = await s.call_tool("index_markdown_docs", {"root": "docs"}, progress_callback=on_progress)
            assert not built.is_error and "63 files" in text_of(built)
            messages = [m or "" for _, _, m in seen]
            assert any("indexing: 50/63 files" in m for m in messages), messages
            assert any("chunks embedded" in m for m in messages), messages
            found = await s.call_tool("markdown_search", {"query": "mark an option as required", "k": 1})
            assert not found.is_error and text_of(found).startswith("1. docs/guide/options.md")
            assert found.structured_content is not None
            assert found.structured_content["results"][0]["title"] == "Options > Required options"

            code = await s.call_tool("index_code", {"folder": "src", "index_name": "src"})
            assert not code.is_error
            hit = await s.call_tool("query_vector_db", {"query": "port out of range", "index": "src", "num_results": 1})
            assert "[parse_port]" in text_of(hit)

    anyio.run(scenario)


def test_index_tools_over_http(tree: Path, state_dir: Path) -> None:
    with run_http(tree, state_dir, f"127.0.0.1:{free_port()}") as server:

        async def scenario() -> None:
            async with http_session(server.url) as s:
                built = await s.call_tool("index_code", {"folder": "src"})
                assert not built.is_error, text_of(built)
                hit = await s.call_tool("query_vector_db", {"query": "add an item to the cart", "num_results": 1})
                assert "src/web/app.js" in text_of(hit) and "[Cart.addItem]" in text_of(hit)

        anyio.run(scenario)


def run(args: list[str], cwd: Path, state: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TOOLDECK_STATE_DIR": str(state)}
    return subprocess.run(
        [sys.executable, "-m", "tooldeck", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=90
    )


def test_cli_call_index_and_search(tree: Path, state_dir: Path) -> None:
    r = run(["call", "index_code", '{"folder": "src"}'], tree, state_dir)
    assert r.returncode == 0 and "2 files" in r.stdout, r.stderr
    r = run(["call", "query_vector_db", '{"query": "close the listening socket", "num_results": 1}'], tree, state_dir)
    assert r.returncode == 0 and "[Server.shutdown]" in r.stdout, r.stderr
    r = run(["call", "markdown_search", '{"query": "x", "index_name": "nothing"}'], tree, state_dir)
    assert r.returncode == 1 and "error [not_found]" in r.stderr and "index_markdown_docs" in r.stderr

    r = run(["index", "docs", "docs", "--name", "manual", "--description", "the manual"], tree, state_dir)
    assert r.returncode == 0 and "63 files" in r.stdout, r.stderr
    assert "files" in r.stderr  # the progress bar goes to stderr
    r = run(["search", "colored text in the terminal", "--index", "manual", "-k", "1"], tree, state_dir)
    assert r.returncode == 0 and r.stdout.startswith("1. docs/guide/colors.md"), r.stdout + r.stderr
    r = run(["index", "list"], tree, state_dir)
    assert "manual" in r.stdout and "the manual" in r.stdout and "code" in r.stdout
    r = run(["index", "docs", "/"], tree, state_dir)
    assert r.returncode == 1 and "outside_roots" in r.stderr
    r = run(["search", "x"], tree, state_dir)
    assert r.returncode == 2
