"""file_search input (seed 004 plus ``whole_word``, ``count_only`` and ``cursor``)
and the plain values the search stages pass each other.

Validation happens here so a bad call fails before anything runs, with
``invalid_arguments`` naming the field (``filter.extensions``, ``pattern``...).
Lenient where models are sloppy: ``extensions`` may be ``"py,ts"`` or
``[".py", "*.ts"]``; ``exclude``/``paths`` may be a single string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pathspec import GitIgnoreSpec
from pydantic import Field, field_validator, model_validator

from tooldeck.core import ToolInput

Mode = Literal["auto", "path", "content", "both"]
MAX_PATTERN_CHARS = 2000
_EXT_RE = re.compile(r"^[A-Za-z0-9_+~-]+(?:\.[A-Za-z0-9_+~-]+)*$")
_UNCLOSED_CLASS = re.compile(r"\[[^\]]*$")  # a "[" with no "]" after it


def _as_list(value: Any, *, split: bool) -> Any:
    if isinstance(value, str):
        parts = re.split(r"[,\s]+", value) if split else [value]
        return [p for p in parts if p]
    return value


class SearchFilter(ToolInput):
    extensions: list[str] | None = Field(
        None, description='Only these extensions, e.g. ["py", "ts"].'
    )
    exclude: list[str] | None = Field(
        None, description='Gitignore-style globs to leave out, e.g. ["tests/"].'
    )
    paths: list[str] | None = Field(
        None, description="Only these files/folders."
    )

    @field_validator("extensions", mode="before")
    @classmethod
    def _split_extensions(cls, value: Any) -> Any:
        return _as_list(value, split=True)

    @field_validator("exclude", "paths", mode="before")
    @classmethod
    def _one_string(cls, value: Any) -> Any:
        return _as_list(value, split=False)

    @field_validator("extensions")
    @classmethod
    def _clean_extensions(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        out: list[str] = []
        for raw in value:
            ext = raw.strip().removeprefix("*").removeprefix(".")
            if not _EXT_RE.match(ext):
                raise ValueError(f'{raw!r} is not a file extension; give names like "py" or "tar.gz"')
            if ext not in out:
                out.append(ext)
        return out or None

    @field_validator("exclude")
    @classmethod
    def _check_globs(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        out: list[str] = []
        for glob in value:
            glob = glob.strip()
            if not glob or "\x00" in glob or "\n" in glob:
                raise ValueError("each exclude glob must be a non-empty single line")
            if glob.startswith("!"):
                raise ValueError(f"{glob!r}: exclude lists globs to leave out; '!' re-inclusion is not supported")
            if _UNCLOSED_CLASS.search(glob):
                raise ValueError(f"{glob!r}: unclosed character class; missing ']'")
            try:
                GitIgnoreSpec.from_lines([glob])
            except (ValueError, re.error) as exc:
                raise ValueError(f"{glob!r} is not a valid glob ({exc})") from exc
            out.append(glob)
        return out or None

    @field_validator("paths")
    @classmethod
    def _check_paths(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and any(not p.strip() for p in value):
            raise ValueError("paths must be non-empty")
        return value or None


class FileSearchInput(ToolInput):
    pattern: str | None = Field(
        None,
        description="What to find: a regex (default), literal text (regex=false), a path fragment, "
        "or a glob such as `src/**/test_*.py`. Required unless `cursor` is given.",
    )
    mode: Mode = Field(
        "auto",
        description="auto: globs → path, path-like → both, else content.",
    )
    regex: bool = Field(True, description="Treat `pattern` as a regex; an invalid regex is searched literally.")
    context_lines: int = Field(0, ge=0, le=20, description="Lines of context around each content match.")
    whole_word: bool = Field(False, description="Content matches must be whole words.")
    count_only: bool = Field(False, description="Only counts: matching lines per file / number of paths.")
    filter: SearchFilter | None = Field(None, description="Restrict by extensions, exclude globs, paths.")
    max_results: int = Field(50, ge=1, le=500, description="Matching lines (or paths) per page.")
    cursor: str | None = Field(None, description="Continue a previous search (copy it from its last line).")

    @field_validator("pattern")
    @classmethod
    def _check_pattern(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if value == "":
            raise ValueError("pattern must not be empty")
        if "\x00" in value:
            raise ValueError("pattern contains a NUL byte")
        if "\n" in value or "\r" in value:
            raise ValueError("file_search matches within one line; search for a single line of the text")
        if len(value) > MAX_PATTERN_CHARS:
            raise ValueError(f"pattern is longer than {MAX_PATTERN_CHARS} characters")
        return value

    @model_validator(mode="after")
    def _pattern_or_cursor(self) -> FileSearchInput:
        if self.pattern is None and self.cursor is None:
            raise ValueError("field `pattern` is required (or `cursor` to continue a search)")
        return self

    def query_fields(self) -> dict[str, Any]:
        """The fields that define the search (what a cursor must carry)."""
        return self.model_dump(exclude={"cursor"}, exclude_defaults=True, exclude_none=True)


@dataclass(frozen=True, slots=True)
class ContentQuery:
    """One content search as the engines see it."""

    pattern: str
    literal: bool
    whole_word: bool = False
    context: int = 0
    extensions: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Line:
    """A line of a file in a result: a match (``is_match``) or context.
    ``span`` is the first match's character range, when known."""

    number: int
    text: str
    is_match: bool
    span: tuple[int, int] | None = None


@dataclass(slots=True)
class FileCount:
    root_index: int
    rel: str
    count: int  # matching lines


@dataclass(slots=True)
class Counts:
    """Pass 1 of a content search: matching lines per file, in display order."""

    files: list[FileCount] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(f.count for f in self.files)


class InvalidPattern(Exception):
    """The pattern is not a valid regex for the engine (the caller retries it literally)."""
