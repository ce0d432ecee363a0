"""The index tools through the Toolbox: errors that say how to build, the
model check, the OpenAI-compatible endpoint (a scripted server on 127.0.0.1),
pydoc_search over a package that is never imported."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.index.embed_server import EmbedServer
from tests.index.indexkit import CODE, DOCS, write_tree
from tooldeck.catalog import build_toolbox
from tooldeck.index.views import VIEWS
from tooldeck.runtime import Runtime


@pytest.fixture
def corpus(root: Path) -> Path:
    write_tree(root / "docs", DOCS)
    write_tree(root / "src", CODE)
    return root


def test_search_without_an_index_says_how_to_build_it(call, corpus: Path) -> None:  # type: ignore[no-untyped-def]
    res = call.err("markdown_search", {"query": "options", "index_name": "manual"}, code="not_found")
    assert "index_markdown_docs" in res.text and '"index_name": "manual"' in res.text
    res = call.err("query_vector_db", {"query": "server"}, code="not_found")
    assert "index_code" in res.text


def test_markdown_and_code_tools_end_to_end(call, corpus: Path) -> None:  # type: ignore[no-untyped-def]
    out = call.ok("index_markdown_docs", {"root": "docs", "index_name": "manual", "description": "user manual"})
    assert "3 files" in out and "markdown_search" in out
    query = "program refuses to run without the option"
    found = call("markdown_search", {"query": query, "index_name": "manual", "k": 2})
    assert not found.is_error and found.text.startswith("1. docs/guide/options.md:")
    assert "Options > Required options" in found.text.splitlines()[0]
    assert found.output is not None and found.output.structured is not None
    assert found.output.structured["results"][0]["path"] == "docs/guide/options.md"

    assert "2 files" in call.ok("index_code", {"folder": "src"})
    hit = call.ok("query_vector_db", {"query": "stop accepting clients", "num_results": 1})
    assert hit.startswith("1. src/pkg/server.py:16-18") and "[Server.shutdown]" in hit
    wrong = call.err("markdown_search", {"query": "server", "index_name": "code"}, code="invalid_arguments")
    assert "query_vector_db" in wrong.text


def test_index_root_outside_the_workspace_is_refused(call, corpus: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    call.err("index_markdown_docs", {"root": str(tmp_path)}, code="outside_roots")
    call.err("index_code", {"folder": "/etc"}, code="outside_roots")


def test_openai_endpoint_and_the_model_check(  # type: ignore[no-untyped-def]
    call, corpus: Path, state_dir: Path, hermetic_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    call.ok("index_markdown_docs", {"root": "docs"})  # the default model
    with EmbedServer() as server:
        hermetic_config.write_text(
            f'[index]\nembeddings = "openai"\n[index.openai]\nbase_url = "{server.url}"\nmodel = "test-embed"\n'
            'api_key_env = "TEST_EMBED_KEY"\n'
        )
        monkeypatch.setenv("TEST_EMBED_KEY", "sk-test")
        box = build_toolbox(Runtime.for_dirs([corpus], state_dir=state_dir))
        res = box.call_sync("markdown_search", {"query": "required options"})
        assert res.is_error and res.error is not None and res.error.code == "model_mismatch"
        assert "wordllama:l2_supercat_256" in res.text and "openai:test-embed" in res.text
        assert "index_markdown_docs" in res.text
        lexical = box.call_sync("markdown_search", {"query": "required options", "mode": "lexical"})
        assert not lexical.is_error  # BM25 needs no model

        built = box.call_sync("index_markdown_docs", {"root": "docs"})
        assert not built.is_error and "embedded with openai:test-embed" in built.text
        assert len(server.texts()) == VIEWS * built.output.structured["chunks"]  # type: ignore[union-attr]
        assert server.requests[0]["auth"] == "Bearer sk-test" and server.requests[0]["model"] == "test-embed"
        hit = box.call_sync("markdown_search", {"query": "refuses to run without it", "mode": "dense", "k": 1})
        assert not hit.is_error and "Required options" in hit.text

        sent = len(server.texts())
        (corpus / "docs" / "install.md").write_text("# Installation\n\nUse pipx instead.\n")
        again = box.call_sync("index_markdown_docs", {"root": "docs"})
        assert again.output.structured["chunks_embedded"] == 1  # type: ignore[union-attr]
        assert len(server.texts()) - sent == VIEWS

        server.fail = True
        (corpus / "docs" / "install.md").write_text("# Installation\n\nChanged again.\n")
        failed = box.call_sync("index_markdown_docs", {"root": "docs"})
        assert failed.is_error and failed.error is not None and failed.error.code == "io_error"
        assert "500" in failed.text
        server.fail = False
        still = box.call_sync("markdown_search", {"query": "pipx", "mode": "dense", "k": 1})
        assert not still.is_error and "pipx" in still.text  # the failed build changed nothing


def test_pydoc_search_reads_a_package_without_importing_it(  # type: ignore[no-untyped-def]
    call, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    write_tree(
        site / "boomlib",
        {
            "__init__.py": '"""Boomlib: tools that explode when imported."""\nraise RuntimeError("imported!")\n',
            "fuse.py": 'def light_fuse(seconds: float = 3.0) -> None:\n    """Start the countdown of a fuse."""\n',
            "_private.py": 'def countdown_fuse_hidden():\n    """Countdown of a fuse, privately."""\n',
        },
    )
    monkeypatch.syspath_prepend(str(site))
    out = call.ok("pydoc_search", {"query": "countdown of a fuse", "package": "boomlib", "k": 2})
    assert "boomlib.fuse.light_fuse" in out.splitlines()[1]
    assert "def light_fuse(seconds: float=3.0) -> None" in out
    assert "boomlib" not in sys.modules
    assert "countdown_fuse_hidden" not in out  # private modules are not the documented API
    call.err("pydoc_search", {"query": "x", "package": "no_such_package_here"}, code="not_found")
    call.err("pydoc_search", {"query": "x", "package": "../etc"}, code="invalid_arguments")
