"""Helpers for the file_search tests: a small real tree exercising the ignore
rules, ripgrep run directly as the oracle, a parser for the grouped text
output, and a caller over a Toolbox holding only the search domain."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tooldeck.core.toolbox import Toolbox, ToolResult
from tooldeck.runtime import Runtime
from tooldeck.tools.search import tools as search_tools
from tooldeck.workspace.ignore import DENY_DIRS, DENY_FILE_SUFFIXES, DENY_FILES
from tooldeck.workspace.ripgrep import find_rg

RG = find_rg()
ENGINES = ["ripgrep", "python"]


def write(root: Path, rel: str, data: str | bytes) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        p.write_bytes(data)
    else:
        p.write_text(data, encoding="utf-8")
    return p


def make_tree(root: Path) -> None:
    """Source files, ignore rules of every kind, hidden/binary/minified/odd files."""
    write(root, "src/app.py", "import os\n\ndef foo(x):\n    return foo_bar(x)\n\nclass Foo:\n    pass\n")
    write(root, "src/util.py", "foo = 1\nbar = foo + 2\n# food for thought\nprint(foo)\n")
    write(root, "src/deep/nested/mod.py", "def deep_foo():\n    return 'foo'\n")
    write(root, "src/web/app.js", "function foo() { return 42; }\nconst a_b = 'a.b';\n")
    write(root, "src/web/style.css", ".foo { color: red }\n")
    write(root, "docs/guide.md", "# Guide\n\nUse foo() to foo things.\nCafé au lait: café\n")
    write(root, "docs/api/ref.md", "foo reference\nnumbers 123 and 4567\n")
    write(root, "README.md", "Project foo\nimport nothing\n")
    write(root, ".github/workflows/ci.yml", "run: echo foo\n")
    write(root, "crlf.txt", "hello foo\r\nsecond line\r\n")
    write(root, "no_newline.txt", "last foo")
    write(root, "empty.txt", "")
    write(root, "latin1.txt", b"foo caf\xe9 bar\n")
    write(root, "bin.dat", b"\x00\x01foo\x00binary foo\n")
    # ignore rules
    write(root, ".gitignore", "*.log\n!keep.log\nsecret/\n")
    write(root, "app.log", "foo in a log\n")
    write(root, "keep.log", "foo kept log\n")
    write(root, "secret/token.py", "foo = 'secret'\n")
    write(root, "src/.gitignore", "generated.py\n")
    write(root, "src/generated.py", "foo generated\n")
    write(root, ".tooldeckignore", "private/\n")
    write(root, "private/notes.txt", "foo private\n")
    write(root, ".git/info/exclude", "excluded.txt\n")
    write(root, ".git/HEAD", "ref: foo\n")
    write(root, "excluded.txt", "foo excluded\n")
    write(root, "node_modules/pkg/index.js", "foo in node_modules\n")
    write(root, "build/out.py", "foo built\n")
    write(root, "src/__pycache__/app.cpython-311.pyc", b"foo pyc")
    os.symlink(root / "src" / "util.py", root / "link_to_util.py")


@dataclass(frozen=True)
class Hit:
    path: str
    line: int
    text: str
    is_match: bool = True


def parse_content(text: str) -> list[Hit]:
    """The content section of a file_search result as (path, line, text) hits."""
    hits: list[Hit] = []
    path = None
    in_content = False
    for raw in text.split("\n"):
        if raw.startswith("content matches for"):
            in_content = True
            continue
        if not in_content or raw.startswith("[") or raw in ("", "  --"):
            continue
        m = re.match(r"^  (\d+)([:-]) (.*)$", raw) or re.match(r"^  (\d+)([:-])()$", raw)
        if m:
            assert path is not None, raw
            hits.append(Hit(path, int(m.group(1)), m.group(3), m.group(2) == ":"))
        else:
            path = raw
    return hits


def cursor_of(text: str) -> str | None:
    m = re.search(r'\{"cursor": "(fs:[^"]+)"\}\]$', text)
    return m.group(1) if m else None


def rg_oracle(root: Path, pattern: str, *flags: str, paths: tuple[str, ...] = ()) -> list[Hit]:
    """ripgrep run directly with the documented ignore rules (the oracle)."""
    assert RG is not None
    argv = [RG, "--no-config", "--json", "--hidden", "--no-require-git", "--no-ignore-dot", "--no-ignore-global"]
    if (root / ".tooldeckignore").exists():
        argv += ["--ignore-file", ".tooldeckignore"]
    for d in DENY_DIRS:
        argv += ["-g", f"!{d}/"]
    for s in DENY_FILE_SUFFIXES:
        argv += ["-g", f"!*{s}"]
    for f in DENY_FILES:
        argv += ["-g", f"!{f}"]
    argv += [*flags, "-e", pattern, "--", *paths]
    out = subprocess.run(argv, cwd=root, capture_output=True, check=False).stdout
    hits: list[Hit] = []
    for line in out.splitlines():
        msg = json.loads(line)
        if msg["type"] not in ("match", "context"):
            continue
        data = msg["data"]
        text = data["lines"].get("text")
        if text is None:
            text = base64.b64decode(data["lines"]["bytes"]).decode("utf-8", "replace")
        path = data["path"]["text"].removeprefix("./")
        hits.append(
            Hit(path, data["line_number"], text.rstrip("\n").removesuffix("\r").rstrip(), msg["type"] == "match")
        )
    return sorted(hits, key=lambda h: (h.path.split("/"), h.line))


class Search:
    """Calls file_search through a Toolbox holding only the search domain."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.box = Toolbox(search_tools(rt), budget_tokens=rt.budget_tokens, count_tokens=rt.count_tokens)

    def __call__(self, args: dict | str) -> ToolResult:
        return self.box.call_sync("file_search", args if isinstance(args, str) else json.dumps(args))

    def ok(self, args: dict) -> str:
        res = self(args)
        assert not res.is_error, res.text
        return res.text

    def err(self, args: dict | str, code: str) -> ToolResult:
        res = self(args)
        assert res.is_error, res.text[:500]
        assert res.error is not None and res.error.code == code, res.text
        return res


def snapshot(path: Path) -> dict[str, bytes]:
    """Every regular file under ``path`` with its bytes (to prove nothing changed)."""
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file() and not p.is_symlink()}
