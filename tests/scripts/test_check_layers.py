"""scripts/check_layers.py: the layer and no-cycle rules pass on the tree as it
is, and each rule fails on a violation planted in a copy of it."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "check_layers.py"


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_layers", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


CHECK_LAYERS = _load_script()


def run(root: Path | None = None, *extra: str) -> subprocess.CompletedProcess[str]:
    """The script's ``main`` in this process (its parse cache then serves the
    ~20 copies of the tree; scripts/test.sh runs it as a program too)."""
    argv = [*extra] + (["--root", str(root)] if root is not None else [])
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = CHECK_LAYERS.main(argv)
    return subprocess.CompletedProcess(["check_layers.py", *argv], code, out.getvalue(), err.getvalue())


def test_the_script_runs_as_a_program() -> None:
    result = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout == "", result.stdout + result.stderr


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of src/ to plant violations in (each test copies it again)."""
    out = tmp_path_factory.mktemp("src")
    shutil.copytree(REPO / "src" / "tooldeck", out / "tooldeck", ignore=shutil.ignore_patterns("__pycache__"))
    return out


def planted(tree: Path, tmp_path: Path, rel: str, text: str) -> Path:
    root = tmp_path / "src"
    shutil.copytree(tree, root)
    path = root / "tooldeck" / rel
    path.write_text(path.read_text(encoding="utf-8") + "\n" + text, encoding="utf-8")
    return root


def test_the_tree_as_it_is_passes() -> None:
    result = run()
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("rel", "text", "expected"),
    [
        ("core/budget.py", "from tooldeck.workspace import roots\n", "core imports services"),
        ("core/budget.py", "if True:\n    import tooldeck.mcp.server\n", "core imports hosts"),
        ("workspace/walk.py", "from tooldeck.tools.files import read\n", "services imports tools"),
        ("tools/files/read.py", "from tooldeck.mcp import server\n", "tools imports hosts"),
        ("mcp/stdio.py", "from tooldeck.chatmd import runner\n", "a host imports another host"),
        ("dashboard/app.py", "import importlib\nimportlib.import_module('tooldeck.mcp.server')\n", "another host"),
        ("state/chats.py", "from tooldeck.llm import loop\n", "state/ imports the model loop"),
        ("tui/app.py", "from tooldeck.mcp import server\n", "the terminal chat imports a host other than ChatMD"),
        ("workspace/walk.py", "def f():\n    from tooldeck.store import db\n", "no `# lazy:` reason"),
        # no package excuses its function-level imports wholesale any more (issue 31)
        ("tools/files/read.py", "def f():\n    from tooldeck.index import service\n", "no `# lazy:` reason"),
        ("cli.py", "def f():\n    from tooldeck.chatmd import runner\n", "no `# lazy:` reason"),
        # a lazy import closes a cycle like any other: the ones issue 31 broke stay broken
        (
            "chatmd/agents.py",
            "def f():\n    from tooldeck.chatmd import session  # lazy: planted\n",
            "module cycle: tooldeck.chatmd.agents <-> tooldeck.chatmd.declarations <-> tooldeck.chatmd.session",
        ),
        (
            "cli.py",
            "def f():\n    from tooldeck import launch  # lazy: planted\n",
            "module cycle: tooldeck.cli <-> tooldeck.launch",
        ),
        (
            "core/errors.py",
            "from tooldeck.core import invocation\n",
            "module cycle: tooldeck.core.errors <-> tooldeck.core.invocation",
        ),
        (
            "store/db.py",
            "from tooldeck.workspace import roots\n",
            "package cycle: tooldeck.store <-> tooldeck.workspace",
        ),
    ],
)
def test_a_planted_violation_fails(tree: Path, tmp_path: Path, rel: str, text: str, expected: str) -> None:
    result = run(planted(tree, tmp_path, rel, text))
    assert result.returncode == 1
    assert expected in result.stdout, result.stdout


def test_a_lazy_import_with_a_reason_passes(tree: Path, tmp_path: Path) -> None:
    root = planted(
        tree, tmp_path, "workspace/walk.py", "def f():\n    from tooldeck.store import db  # lazy: only on f\n"
    )
    assert run(root).returncode == 0


def test_the_mermaid_graph_names_every_layer() -> None:
    result = run(None, "--mermaid")
    assert result.returncode == 0
    for name in ('subgraph layer_entry["entry"]', 'subgraph layer_hosts["hosts"]', "mcp[mcp]", "chatmd -->"):
        assert name in result.stdout


def test_the_architecture_page_draws_the_layers_as_they_are() -> None:
    """docs/architecture.md's picture is the script's output; after a move,
    paste `scripts/check_layers.py --graph` over it."""
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    start = text.index("```\nentry:\n") + 4
    drawn = text[start : text.index("```", start)]
    assert drawn.strip() == run(None, "--graph").stdout.strip()
