"""GitHub blob URLs: fetched raw, with ``#Lx-Ly`` slices as numbered code.

Why a fast path: a ``github.com/OWNER/REPO/blob/REF/PATH`` page is kilobytes
of application shell around the file; the same file from the raw host is
exactly the text, and the ``#L10-L80`` anchor a person pasted says which
lines matter. The raw host is a setting (``[web] github_raw_base``) so tests
and mirrors can point it elsewhere; the raw URL still goes through every
check of the fetcher.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from tooldeck.core.errors import invalid_arguments
from tooldeck.web_fetch.convert import fenced

_BLOB = re.compile(r"^/([^/]+)/([^/]+)/blob/(.+)$")
_LINES = re.compile(r"^L(\d+)(?:C\d+)?(?:-L?(\d+)(?:C\d+)?)?$", re.IGNORECASE)

FENCE_LANGS: dict[str, str] = {
    "py": "python", "pyi": "python", "js": "javascript", "mjs": "javascript", "cjs": "javascript",
    "jsx": "jsx", "ts": "typescript", "tsx": "tsx", "go": "go", "rs": "rust", "java": "java",
    "c": "c", "h": "c", "cc": "cpp", "cpp": "cpp", "cxx": "cpp", "hpp": "cpp", "hh": "cpp",
    "cs": "csharp", "rb": "ruby", "php": "php", "swift": "swift", "kt": "kotlin", "kts": "kotlin",
    "sh": "bash", "bash": "bash", "zsh": "zsh", "scala": "scala", "ml": "ocaml", "mli": "ocaml",
    "hs": "haskell", "lua": "lua", "pl": "perl", "r": "r", "jl": "julia", "ex": "elixir",
    "exs": "elixir", "erl": "erlang", "clj": "clojure", "dart": "dart", "zig": "zig", "nim": "nim",
    "sql": "sql", "html": "html", "htm": "html", "css": "css", "scss": "scss", "xml": "xml",
    "json": "json", "yaml": "yaml", "yml": "yaml", "toml": "toml", "ini": "ini", "cfg": "ini",
    "md": "markdown", "markdown": "markdown", "rst": "rst", "tex": "latex", "vue": "vue",
    "svelte": "svelte", "proto": "protobuf", "tf": "hcl", "gradle": "groovy", "groovy": "groovy",
    "ps1": "powershell", "bat": "batch", "mk": "makefile", "cmake": "cmake", "nix": "nix",
}  # fmt: skip
FENCE_NAMES: dict[str, str] = {"Makefile": "makefile", "Dockerfile": "dockerfile", "CMakeLists.txt": "cmake"}


@dataclass(frozen=True, slots=True)
class BlobRef:
    """A GitHub blob URL taken apart."""

    url: str  # as given
    raw_url: str
    path: str  # REF/PATH as in the URL (the ref may itself contain slashes)
    first: int | None  # 1-based line range from #Lx-Ly, if any
    last: int | None

    @property
    def filename(self) -> str:
        return posixpath.basename(unquote(self.path))

    @property
    def language(self) -> str:
        name = self.filename
        if name in FENCE_NAMES:
            return FENCE_NAMES[name]
        ext = name.rsplit(".", 1)[1].lower() if "." in name else ""
        return FENCE_LANGS.get(ext, ext)


def parse_blob(url: str, raw_base: str) -> BlobRef | None:
    """The blob reference of a ``github.com/OWNER/REPO/blob/REF/PATH`` URL, else None."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("http", "https") or host not in ("github.com", "www.github.com"):
        return None
    m = _BLOB.match(parts.path)
    if not m:
        return None
    owner, repo, rest = m.groups()
    first = last = None
    if parts.fragment:
        lm = _LINES.match(parts.fragment)
        if lm:
            first = int(lm.group(1))
            last = int(lm.group(2)) if lm.group(2) else first
            if first < 1 or last < 1:
                raise invalid_arguments("field `url`: line anchors start at #L1", field="url")
            first, last = min(first, last), max(first, last)
    raw_url = f"{raw_base.rstrip('/')}/{owner}/{repo}/{rest}"
    return BlobRef(url.strip(), raw_url, rest, first, last)


def render_blob(ref: BlobRef, text: str) -> str:
    """The file (or its ``#L`` slice) as numbered, fenced code with a header line.
    A whole Markdown file is returned as its own text (it already is Markdown)."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    total = len(lines)
    lang = ref.language
    if ref.first is None and lang == "markdown":
        return f"Source: {ref.url} (raw: {ref.raw_url})\n\n{text.strip()}"
    first, last = (ref.first, ref.last) if ref.first is not None else (1, total)
    assert last is not None
    if total == 0:
        return f"Source: {ref.url} (raw: {ref.raw_url}); the file is empty"
    if first > total:
        raise invalid_arguments(
            f"field `url`: #L{first} is past the end of {ref.filename} ({total} lines); use a line ≤ {total}",
            field="url",
        )
    last = min(last, total)
    width = len(str(last))
    body = "\n".join(f"{n:>{width}} | {lines[n - 1]}" for n in range(first, last + 1))
    header = f"Source: {ref.url} (raw: {ref.raw_url})\nLines {first}-{last} of {total} of {ref.filename}:"
    return f"{header}\n\n{fenced(body, lang)}"
