"""SymbolIndex: definitions and references by name, refreshed incrementally
from the codemap cache, honouring ignore rules."""

from __future__ import annotations

from pathlib import Path

from tooldeck.codemap.service import codemap_service
from tooldeck.runtime import Runtime
from tooldeck.workspace.roots import Workspace

APP = """\
from .models import User


class Server:
    def __init__(self, port: int) -> None:
        self.port = port

    def start(self) -> User:
        # Server is mentioned in a comment only here
        return User("Server")


def main() -> Server:
    server = Server(8080)
    server.start()
    return server
"""

MODELS = """\
class User:
    def __init__(self, name: str) -> None:
        self.name = name


def start() -> None:
    pass
"""

GO = """\
package main

type Server struct{}

func run() *Server {
	return &Server{}
}
"""


def setup(root: Path) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "app.py").write_text(APP, encoding="utf-8")
    (root / "pkg" / "models.py").write_text(MODELS, encoding="utf-8")
    (root / "cmd.go").write_text(GO, encoding="utf-8")
    (root / "README.md").write_text("Server docs\n", encoding="utf-8")


def test_definitions_by_name_and_kind(runtime: Runtime, root: Path):
    setup(root)
    idx = codemap_service(runtime).index()
    servers = idx.definitions("Server")
    assert {(d.path, d.line, d.kind) for d in servers} == {("pkg/app.py", 4, "class"), ("cmd.go", 3, "struct")}
    assert [d.signature for d in idx.definitions("Server", kind="struct")] == ["type Server struct"]
    starts = idx.definitions("start")
    assert {(d.path, d.kind, d.parent) for d in starts} == {
        ("pkg/app.py", "method", "Server"),
        ("pkg/models.py", "function", None),
    }
    assert [(d.path, d.line) for d in idx.definitions("Server.start")] == [("pkg/app.py", 8)]
    assert idx.definitions("Nope") == []
    assert idx.files_defining("User") == {"pkg/models.py"}


def test_references_skip_comments_strings_and_definitions(runtime: Runtime, root: Path):
    setup(root)
    idx = codemap_service(runtime).index()
    refs = idx.references("Server")
    got = {(r.path, r.line, r.enclosing) for r in refs}
    assert got == {
        ("pkg/app.py", 13, "main"),
        ("pkg/app.py", 14, "main"),
        ("cmd.go", 5, "run"),
        ("cmd.go", 6, "run"),
    }
    line14 = next(r for r in refs if r.line == 14)
    assert line14.text == "server = Server(8080)"
    assert idx.files_referencing("Server") == {"pkg/app.py", "cmd.go"}
    assert {(r.path, r.line, r.enclosing) for r in idx.references("User")} == {
        ("pkg/app.py", 1, None),
        ("pkg/app.py", 8, "Server.start"),
        ("pkg/app.py", 10, "Server.start"),
    }


def test_the_index_is_refreshed_incrementally(runtime: Runtime, root: Path):
    setup(root)
    svc = codemap_service(runtime)
    svc.index()
    assert svc.parse_count == 3
    svc.index()
    assert svc.parse_count == 3  # nothing changed: nothing parsed
    (root / "pkg" / "models.py").write_text(MODELS + "\n\nclass Admin(User):\n    pass\n", encoding="utf-8")
    (root / "cmd.go").unlink()
    (root / "pkg" / "extra.py").write_text("class Server:\n    pass\n", encoding="utf-8")
    idx = svc.index()
    assert svc.parse_count == 5  # the changed file and the new one
    assert [d.path for d in idx.definitions("Admin")] == ["pkg/models.py"]
    assert {d.path for d in idx.definitions("Server")} == {"pkg/app.py", "pkg/extra.py"}
    assert len(idx) == 3


def test_ignored_files_are_not_indexed(runtime: Runtime, root: Path):
    setup(root)
    (root / ".gitignore").write_text("generated/\nsecret.py\n", encoding="utf-8")
    (root / "generated").mkdir()
    (root / "generated" / "out.py").write_text("class Generated:\n    pass\n", encoding="utf-8")
    (root / "secret.py").write_text("class Secret:\n    pass\n", encoding="utf-8")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "dep.js").write_text("function dep() {}\n", encoding="utf-8")
    idx = codemap_service(runtime).index()
    assert idx.definitions("Generated") == [] and idx.definitions("Secret") == [] and idx.definitions("dep") == []
    assert idx.definitions("Server")


def test_switching_workspace_drops_the_old_roots(runtime: Runtime, root: Path, tmp_path: Path):
    setup(root)
    svc = codemap_service(runtime)
    assert svc.index().definitions("Server")
    other = tmp_path / "other"
    other.mkdir()
    (other / "lib.py").write_text("def helper():\n    pass\n", encoding="utf-8")
    runtime.replace_workspace(Workspace.from_dirs([other]))
    idx = svc.index()
    assert idx.definitions("Server") == []
    assert [d.path for d in idx.definitions("helper")] == ["lib.py"]


def test_similar_names_for_a_miss(runtime: Runtime, root: Path):
    setup(root)
    idx = codemap_service(runtime).index()
    assert ("Server", 2) in idx.similar("server")
    assert [n for n, _ in idx.similar("Serv")][:1] == ["Server"]


def test_references_to_a_name_with_punctuation(runtime: Runtime, root: Path):
    (root / "inv.rb").write_text(
        "class Invoice\n  def paid?\n    false\n  end\n\n  def show\n    paid? ? 'yes' : 'no'\n  end\nend\n",
        encoding="utf-8",
    )
    idx = codemap_service(runtime).index()
    assert [(d.line, d.kind) for d in idx.definitions("paid?")] == [(2, "method")]
    assert [(r.line, r.enclosing) for r in idx.references("paid?")] == [(7, "Invoice.show")]


def test_refresh_of_only_some_paths_touches_only_them(runtime: Runtime, root: Path):
    """A selection change refreshes its own files: no walk, no stat of the rest."""
    setup(root)
    svc = codemap_service(runtime)
    primary = runtime.workspace.primary
    svc.index(only=[(primary, "pkg/app.py")])  # no index yet: the first call walks everything
    assert svc.parse_count == 3
    (root / "pkg" / "models.py").write_text(MODELS + "\n\nclass Admin(User):\n    pass\n", encoding="utf-8")
    (root / "pkg" / "extra.py").write_text("class Extra:\n    pass\n", encoding="utf-8")
    (root / "cmd.go").unlink()
    reads = svc.read_count
    idx = svc.index(only=[(primary, "pkg/models.py"), (primary, "cmd.go")])
    assert svc.parse_count == 4 and svc.read_count == reads + 1  # models.py only (cmd.go is gone)
    assert [d.path for d in idx.definitions("Admin")] == ["pkg/models.py"]
    assert idx.definitions("Extra") == []  # outside `only`: left for the next full refresh
    assert idx.definitions("run") == []  # cmd.go was in `only` and is gone: dropped
    idx = svc.index()  # a full refresh picks up the rest
    assert [d.path for d in idx.definitions("Extra")] == ["pkg/extra.py"]
