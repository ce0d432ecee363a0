"""Which files have a codemap: file extension → language name.

Kept apart from the parsers so cheap callers (the file tree's ``+`` marker)
need no tree-sitter import.
"""

from __future__ import annotations

import os

EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    ".swift": "swift",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".sh": "bash",
    ".bash": "bash",
    ".scala": "scala",
    ".sc": "scala",
    ".ml": "ocaml",
    ".mli": "ocaml_interface",
}


def language_for(path: str) -> str | None:
    """The codemap language of ``path`` from its extension, or None."""
    return EXTENSIONS.get(os.path.splitext(path)[1].lower())


def has_codemap(path: str) -> bool:
    return language_for(path) is not None
