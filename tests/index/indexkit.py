"""Helpers for the index tests: small real corpora and an embedder that
counts what it embeds."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tooldeck.index.embed import embedder_from_config

DOCS = {
    "install.md": "# Installation\n\nInstall the package with pip.\n\n## Virtual environments\n\n"
    "Create a virtualenv first so system packages stay untouched.\n",
    "guide/options.md": "# Options\n\nOptions are flags given on the command line.\n\n## Required options\n\n"
    "Mark an option as required so the program refuses to run without it.\n\n"
    "## Default values\n\nA default is used when the flag is not given.\n",
    "guide/colors.md": "# Colors\n\nPrint colored text to the terminal with styles.\n\n"
    "```python\n# not a heading\nprint('red')\n```\n",
}

CODE = {
    "pkg/server.py": '''"""A tiny server."""

import socket


class Server:
    """Accepts connections on a port."""

    def __init__(self, port: int) -> None:
        self.port = port

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def shutdown(self) -> None:
        """Close the listening socket and stop accepting clients."""
        self.sock.close()


def parse_port(text: str) -> int:
    """Turn the text of a port number into an int, refusing values over 65535."""
    value = int(text)
    if value > 65535:
        raise ValueError("port out of range")
    return value
''',
    "web/app.js": """// the web front end
function renderTable(rows) {
  return rows.map((r) => `<tr>${r}</tr>`).join("");
}

class Cart {
  addItem(item) {
    this.items.push(item);
  }
}
""",
}


def write_tree(base: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = base / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


class CountingEmbedder:
    """The real default model, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        self.inner = embedder_from_config({})
        self.model_id = self.inner.model_id
        self.texts: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts.extend(texts)
        return self.inner.embed(texts)
