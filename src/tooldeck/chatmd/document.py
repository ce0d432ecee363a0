"""Loading a ChatMD file: parse it and splice in its ``<import>``s.

Why imports are resolved here and not in the parser: the parser has no I/O
and is tested on strings. ``<import src="shared/tools.chatmd"
namespace="docs"/>`` reads ``src`` relative to the importing file and puts
that file's top-level elements in place of the import (their positions keep
their own file, so ``${source_dir}`` and error messages point at the right
place). A namespace prefixes the model-visible names of the imported
``<tool>``s (``docs_read_file``) so two imports cannot collide. A file that
imports itself through any chain is refused, and so is a chain deeper than
:data:`MAX_IMPORT_DEPTH`.

Authority (:mod:`tooldeck.chatmd.grants`): every file read here is judged on
the bytes parsed, and an imported file on its own (the file importing it
lends it nothing). An import resolving inside a root is read through the
workspace; one outside the roots only from a file with authority.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from tooldeck.chatmd import asks
from tooldeck.chatmd.grants import AuthorityError, Grants, for_person
from tooldeck.markup.element import ChatmdError, Element
from tooldeck.markup.parser import parse
from tooldeck.workspace.person_files import read_named

MAX_IMPORT_DEPTH = 128
MAX_CHATMD_BYTES = 64 * 1024 * 1024  # the ChatMD file a run or a chat works on (its transcript grows)
_NAMESPACE_RE = re.compile(r"^[A-Za-z0-9_-]{1,32}$")


@dataclass
class Document:
    """A loaded file: its top-level elements in order, imports spliced."""

    path: Path | None
    elements: list[Element] = field(default_factory=list)
    grants: Grants = field(default_factory=Grants)  # who may ask for what (filled by load)

    def of(self, *tags: str) -> list[Element]:
        return [e for e in self.elements if e.tag in tags]

    @property
    def base_dir(self) -> Path:
        return self.path.parent if self.path is not None else Path.cwd()


def read_bytes(path: Path) -> bytes:
    """The bytes of a prompt file the person named (not a model-supplied path)."""
    try:
        return read_named(path, MAX_CHATMD_BYTES)
    except FileNotFoundError as exc:
        raise ChatmdError(None, f"{path}: no such ChatMD file") from exc
    except OSError as exc:
        raise ChatmdError(None, f"{path}: cannot read ({exc.strerror})") from exc


def decode(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ChatmdError(None, f"{path}: not UTF-8 text (byte {exc.start})") from exc


def read_source(path: Path) -> str:
    """The text of a prompt file the person named (not a model-supplied path)."""
    return decode(path, read_bytes(path))


def load(path: str | os.PathLike[str], *, grants: Grants | None = None, data: bytes | None = None) -> Document:
    """Parse ``path`` and resolve its imports. Raises :class:`ChatmdError`.

    ``grants``: the authority context (default: ``path`` is a file the person
    named, with no roots known). ``data``: the bytes already read by the
    caller (an agent prompt read through the workspace); else ``path`` is read."""
    p = Path(path).absolute()
    g = grants if grants is not None else for_person(p)
    raw = data if data is not None else read_bytes(p)
    g.judge(p, raw)
    return Document(p, _load(p, decode(p, raw), (), g), g)


def loads(text: str, path: str | os.PathLike[str] | None = None, *, grants: Grants | None = None) -> Document:
    """Parse a string (imports resolve relative to ``path``'s folder, or the
    cwd); the string is the caller's, with the authority of a named file."""
    p = Path(path).absolute() if path is not None else None
    g = grants if grants is not None else for_person(p)
    g.judge(p, text.encode("utf-8", "surrogatepass"))
    return Document(p, _load(p, text, (), g), g)


def _load(path: Path | None, text: str, chain: tuple[Path, ...], grants: Grants) -> list[Element]:
    here = chain + ((path.resolve(),) if path is not None else ())
    out: list[Element] = []
    for node in parse(text, path):
        if not isinstance(node, Element):
            continue  # prose between elements is commentary for the reader
        if node.tag != "import":
            out.append(node)
            continue
        out.extend(_import(node, path, here, grants))
    return out


def _import(el: Element, path: Path | None, chain: tuple[Path, ...], grants: Grants) -> list[Element]:
    src = el.get("src")
    if not src:
        raise ChatmdError(el.pos, '<import> needs src="FILE.chatmd"')
    namespace = el.get("namespace")
    if namespace is not None and not _NAMESPACE_RE.match(namespace):
        raise ChatmdError(el.pos, f"namespace {namespace!r} must be 1-32 letters, digits, _ or -")
    if len(chain) > MAX_IMPORT_DEPTH:  # chain = the files above this import; 128 nested imports pass
        raise ChatmdError(el.pos, f"imports nest deeper than {MAX_IMPORT_DEPTH} files; is there a loop?")
    target = asks.local_src(el)
    real = target.resolve()
    if real in chain:
        loop = " -> ".join(str(p) for p in (*chain[chain.index(real) :], real))
        raise ChatmdError(el.pos, f"import cycle: {loop}")
    try:
        data = grants.read(el, target, lambda real: asks.path(el, "src", real))
        text = decode(target, data)
    except AuthorityError:
        raise
    except ChatmdError as exc:  # told only once authority to look there was granted
        why = f"{target}: no such ChatMD file" if not os.path.lexists(target) else exc.message
        raise ChatmdError(el.pos, f"<import src={src!r}>: {why}") from exc
    grants.judge(target, data)  # on its own bytes: the importing file lends it nothing
    imported = _load(target, text, chain, grants)
    if namespace is not None:
        for node in imported:
            if node.tag == "tool":
                inner = node.get("namespace")
                node.attrs["namespace"] = f"{namespace}_{inner}" if inner else namespace
    return imported
