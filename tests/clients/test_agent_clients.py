"""tooldeck inside the agents people use: Codex CLI, Claude Code and Gemini CLI.

Each client (installed from npm by scripts/setup.sh --dev) runs one short
session against the scripted model server (tests/clients/model_server.py),
tooldeck configured as its stdio MCP server: the model is offered tooldeck's
tools, calls ``read_file``, ``get_code_structure``, ``file_search`` and
``apply_patch``, then answers. The test reads what the client passed back to
the model as each tool's result, and the file on disk. Each client runs in a
network namespace with only a loopback and an allow-listed environment
(tests/clients/harness.py; test_client_fence.py checks the fence itself).
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.clients.harness import run_client
from tests.clients.model_server import ScriptedModel
from tests.clients.netns import HOW, LoopbackOnly, netns_available
from tests.support.require import require
from tooldeck.catalog import build_toolbox
from tooldeck.runtime import Runtime

pytestmark = [pytest.mark.timeout(90), pytest.mark.xdist_group("agent-clients")]

SOURCE = "def add(a, b):\n    return a + b\n\n\nclass Calc:\n    def mul(self, a, b):\n        return a * b\n"
PATCH = (
    "*** Begin Patch\n*** Update File: calc.py\n@@\n def add(a, b):\n-    return a + b\n+    return b + a\n"
    "*** End Patch\n"
)
ANSWER = "Swapped the operands of add in calc.py."
SCRIPT = [
    ("read_file", {"path": "calc.py"}),
    ("get_code_structure", {"paths": ["calc.py"]}),
    ("file_search", {"pattern": "mul"}),
    ("apply_patch", {"input": PATCH}),
    ANSWER,
]


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on: the clients' proxy, so no request leaves the machine."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def catalog_names(tmp_path: Path) -> set[str]:
    tmp_path.mkdir()
    rt = Runtime.for_dirs([tmp_path], state_dir=tmp_path / "state")
    return {t.name for t in build_toolbox(rt.start())}


@pytest.mark.parametrize("client", ["codex", "claude", "gemini"])
def test_session_inside_client(client: str, tmp_path: Path, closed_port: int) -> None:
    require(f"{client}-cli")
    require("network namespaces", present=netns_available(), how=HOW)
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    home.mkdir()
    (root / "calc.py").write_text(SOURCE)
    with LoopbackOnly() as netns, ScriptedModel(SCRIPT, netns) as model:
        run = run_client(client, model, root, home, closed_port, netns)
    where = f"{client} exit {run.returncode} in {run.seconds:.1f} s\nstdout: {run.stdout[-1500:]}"
    where += f"\nstderr: {run.stderr[-1500:]}"
    assert run.returncode == 0, where
    assert model.first_turn_had_tooldeck(), f"{client} sent its first turn without tooldeck's tools\n{where}"
    # every tool of the catalog reached the model, under the client's name for it
    offered = model.offered()
    expected = catalog_names(tmp_path / "catalog")
    missing = [t for t in expected if model.client_name(offered, t) not in offered]
    assert not missing, f"{client} did not offer {missing}: {offered}\n{where}"
    results = model.tool_results()
    assert len(results) == 4, f"{results}\n{where}"
    read, codemap, search, patch = results
    assert "calc.py:1-7" in read and "def add(a, b):" in read and "[hash=" in read
    assert "class Calc" in codemap and "mul(a,b)" in codemap and "return" not in codemap
    assert "calc.py" in search and "6:" in search and "def mul" in search
    # the model reads the text of apply_patch (summary line and diff), whichever part the client shows
    assert "Success. Updated the following files:" in patch and "M calc.py" in patch, patch
    assert "+    return b + a" in patch
    assert (root / "calc.py").read_text() == SOURCE.replace("return a + b", "return b + a")
    assert ANSWER in run.stdout, where
