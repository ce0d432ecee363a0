"""Which files have a codemap: file extension → language name.

Kept apart from the parsers so cheap callers (the file tree's ``+`` marker)
need no tree-sitter import.
"""

from __future__ import annotations

import os

EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
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
    ".c++": "cpp",
    ".h++": "cpp",
    ".ipp": "cpp",
    ".tpp": "cpp",
    ".inl": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".php": "php",
    ".swift": "swift",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".sh": "bash",
    ".bash": "bash",
    ".bats": "bash",
    ".scala": "scala",
    ".sc": "scala",
    ".sbt": "scala",
    ".ml": "ocaml",
    ".mli": "ocaml_interface",
}


# Files known by their whole name (no extension).
FILENAMES: dict[str, str] = {
    "Rakefile": "ruby",
    "Gemfile": "ruby",
    "Podfile": "ruby",
    "Vagrantfile": "ruby",
    ".bashrc": "bash",
    ".bash_profile": "bash",
}

LANGUAGES: frozenset[str] = frozenset(EXTENSIONS.values())


def language_for(path: str) -> str | None:
    """The codemap language of ``path`` from its extension (or well-known
    file name), or None."""
    base = os.path.basename(path)
    ext = os.path.splitext(base)[1]
    if not ext:
        return FILENAMES.get(base)
    return EXTENSIONS.get(ext.lower())


def has_codemap(path: str) -> bool:
    return language_for(path) is not None
