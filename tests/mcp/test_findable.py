"""Findable: a model that searches the tool list finds each tool by what it wants done.

Codex defers MCP tools behind a ``tool_search`` (BM25 over the tools'
metadata); seen with tooldeck before, a query naming four tools returned
eight others. This test runs a small BM25 (written here, Okapi with k1=1.2,
b=0.75) over the ``tools/list`` payload the server sends, one document per
tool with the fields Codex matches, and asks for each tool with a
plain-language query that does not contain its name (top 3), and for four
tools by name (Codex's default limit, 8).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter

import pytest

from tooldeck.core.toolbox import Toolbox
from tooldeck.mcp.server import INSTRUCTIONS, to_mcp_tool

QUERIES = {
    "read_file": "read the text of a source file",
    "read_directory": "list the entries of one directory",
    "get_file_tree": "show the folder tree of the project",
    "file_actions": "create delete or move a file",
    "append_to_file": "append text at the end of a file",
    "find_and_replace": "replace an exact string in a file",
    "manage_selection": "choose which files go into the model context",
    "workspace_context": "snapshot of the current context and its token counts",
    "prompt": "set the shared instructions of the current tab",
    "git": "show the diff of uncommitted changes and the commit log",
    "apply_patch": "edit several files with a patch in the V4A diff format",
    "apply_edits": "edit one file by search and replace blocks",
    "file_search": "grep the code for a regex across the repository",
    "get_code_structure": "outline of classes and function signatures in a file",
    "find_symbol": "where is this function defined",
    "find_references": "which lines use this identifier",
    "context_builder": "pick the files relevant to a task within a token budget",
    "webpage_to_markdown": "download a web page url as markdown",
    "import_image": "look at an image file such as a screenshot png",
    "shell": "run a command or program like pytest",
    "index_markdown_docs": "build a search index of markdown documentation",
    "markdown_search": "search the indexed documentation sections",
    "index_code": "build a semantic embedding index of the source code",
    "query_vector_db": "semantic search over the code index with embeddings",
    "pydoc_search": "look up the docstring of an installed python package",
    "list_models": "which model presets are available",
    "chat_send": "ask the built-in chat model a question about the selected files",
    "chats": "list earlier chat conversations and their messages",
    "agent_run": "start a background sub-agent and wait for it",
    "agent_manage": "list agent sessions and read a session transcript log",
    "meta_refine": "improve a prompt by rewriting and grading it",
    "manage_workspaces": "switch to another workspace or open a tab",
    "app_settings": "change the configuration settings of the server",
}


def tokens(text: str) -> list[str]:
    """Lower-case words; a snake_case name counts as itself and as its parts."""
    out: list[str] = []
    for word in re.findall(r"[A-Za-z0-9_]+", text.lower()):
        out.append(word)
        if "_" in word:
            out.extend(p for p in word.split("_") if p)
    return out


class BM25:
    def __init__(self, docs: dict[str, str], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.docs = {name: Counter(tokens(text)) for name, text in docs.items()}
        self.length = {name: sum(c.values()) for name, c in self.docs.items()}
        self.avg = sum(self.length.values()) / len(self.docs)
        df: Counter[str] = Counter()
        for c in self.docs.values():
            df.update(set(c))
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def search(self, query: str, k: int = 8) -> list[str]:
        scores = {}
        for name, tf in self.docs.items():
            norm = self.k1 * (1 - self.b + self.b * self.length[name] / self.avg)
            scores[name] = sum(
                self.idf.get(t, 0.0) * tf[t] * (self.k1 + 1) / (tf[t] + norm) for t in set(tokens(query)) if t in tf
            )
        return [n for n, s in sorted(scores.items(), key=lambda x: -x[1]) if s > 0][:k]


def documents(box: Toolbox) -> dict[str, str]:
    """One document per tool from the ``tools/list`` payload, with the fields Codex's tool search
    matches (openai/codex ``templates/search_tool``): name, tool name, server name, title,
    description and the input schema's property keys."""
    docs = {}
    for t in box:
        wire = to_mcp_tool(t).model_dump(mode="json", by_alias=True, exclude_none=True)
        keys = " ".join(wire["inputSchema"].get("properties", {}))
        title = wire.get("annotations", {}).get("title") or ""
        docs[t.name] = f"mcp__tooldeck__{wire['name']} {wire['name']} tooldeck {title} {wire['description']} {keys}"
    return docs


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> BM25:
    from tooldeck.catalog import build_toolbox
    from tooldeck.runtime import Runtime

    root = tmp_path_factory.mktemp("root")
    box = build_toolbox(Runtime.for_dirs([root], state_dir=root.parent / "findable-state").start())
    assert set(QUERIES) == {t.name for t in box}, "a tool without a query here (or a query for no tool)"
    return BM25(documents(box))


@pytest.mark.parametrize("tool", sorted(QUERIES))
def test_each_tool_found_by_a_plain_query(index: BM25, tool: str) -> None:
    query = QUERIES[tool]
    assert tool not in tokens(query), "the query must not name the tool"
    found = index.search(query, k=3)
    assert tool in found, f"{query!r} found {found}"


def test_a_query_naming_tools_finds_them(index: BM25) -> None:
    found = index.search("tooldeck read_file get_code_structure file_search apply_patch", k=8)
    assert {"read_file", "get_code_structure", "file_search", "apply_patch"} <= set(found), found


def test_instructions_name_the_server_and_its_core_tools() -> None:
    words = set(tokens(INSTRUCTIONS))
    for word in ("tooldeck", "read_file", "file_search", "get_code_structure", "apply_patch", "git", "shell"):
        assert word in words, word
    assert len(json.dumps(INSTRUCTIONS)) < 900
