"""find_symbol and find_references through the Toolbox."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SERVER = """\
class Server:
    def start(port: int) -> None:
        pass


def serve() -> Server:
    return Server()  # a Server
"""

CLIENT = """\
import { Server } from "./server";

export function connect(host: string): Server {
  const s = new Server(host);
  return s;
}

export interface Server {
  start(): void;
}
"""


def setup(root: Path) -> None:
    (root / "py").mkdir()
    (root / "py" / "server.py").write_text(SERVER, encoding="utf-8")
    (root / "web").mkdir()
    (root / "web" / "client.ts").write_text(CLIENT, encoding="utf-8")


def test_find_symbol_lists_definitions_with_signatures(call: Any, root: Path):
    setup(root)
    text = call.ok("find_symbol", {"name": "Server"})
    assert text.splitlines() == [
        "2 definition(s) of `Server`:",
        "py/server.py:1  class  class Server",
        "web/client.ts:8  interface  export interface Server",
    ]
    assert call.ok("find_symbol", {"name": "start", "kind": "method"}).splitlines()[1:] == [
        "py/server.py:2  method (in Server)  def start(port: int) -> None",
        "web/client.ts:9  method (in Server)  start(): void",
    ]
    assert "py/server.py:2" in call.ok("find_symbol", {"name": "Server.start", "max_results": 1})


def test_find_symbol_miss_suggests_names(call: Any, root: Path):
    setup(root)
    text = call.ok("find_symbol", {"name": "server"})
    assert text.startswith("No definition of `server` in 2 indexed files.")
    assert "Similar names: Server (2)" in text
    hint = call.ok("find_symbol", {"name": "Server", "kind": "enum"})
    assert "defined with other kinds" in hint


def test_find_references_groups_lines_by_file(call: Any, root: Path):
    setup(root)
    text = call.ok("find_references", {"name": "Server"})
    lines = text.splitlines()
    assert lines[0] == "5 reference(s) to `Server` in 2 file(s) (defined at py/server.py:1, web/client.ts:8):"
    assert lines[1:] == [
        "py/server.py",
        "  L6  [in serve]  def serve() -> Server:",
        "  L7  [in serve]  return Server()  # a Server",
        "web/client.ts",
        '  L1  import { Server } from "./server";',
        "  L3  [in connect]  export function connect(host: string): Server {",
        "  L4  [in connect]  const s = new Server(host);",
    ]


def test_find_references_caps_and_misses(call: Any, root: Path):
    setup(root)
    capped = call.ok("find_references", {"name": "Server", "max_results": 1})
    assert "1 reference(s)" in capped and "more references not shown" in capped
    assert call.ok("find_references", {"name": "Nothing"}) == (
        "No references to `Nothing` (no definition found in the workspace)."
    )


def test_bad_names_are_rejected(call: Any, root: Path):
    call.err("find_symbol", {"name": "two words"}, code="invalid_arguments")
    call.err("find_references", {"name": ""}, code="invalid_arguments")
    call.err("find_symbol", {"name": "x", "kind": "gadget"}, code="invalid_arguments")
