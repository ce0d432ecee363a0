"""Extraction: one file's bytes → its codemap payload (no I/O, no cache).

One parse; then the language's definitions query (``queries/*.scm``:
definitions, their names and bodies, imports) runs over the *outline* of the
tree only: no match starts deeper than ``LangSpec.max_depth`` levels, so the
query never walks function bodies, where most of a file's nodes are. A
container found near that limit (a nested class, an ``impl`` in a ``mod``) or
a conditional block at module/class level (``@scope``: ``if TYPE_CHECKING:``)
gets a pass of its own below it. Imports inside function bodies deeper than
the outline are not listed.

From the captures, plain Python:

* orders definitions by position and nests them by byte-range containment
  (a function inside a class is a method; anything inside a function body is
  left out: a codemap never shows bodies);
* builds each signature as the definition's text up to its body (``@body``),
  or, for bodiless kinds (constants, properties, aliases), its first line cut
  to a short length;
* collects references: the identifiers of the code with comments and strings
  blanked out (by :mod:`tooldeck.codemap.lexer`, or by a tree query for the
  languages it does not cover), split into words in one pass over the bytes.

This runs in worker processes too, so it must stay importable on its own.
"""

from __future__ import annotations

import bisect
import operator
import re
from typing import TYPE_CHECKING, Any

from tooldeck.codemap import grammars, hollow, hollow_braces, lexer
from tooldeck.codemap.kinds import BODY_KINDS, CLASS_LIKE, VALUE_KINDS
from tooldeck.codemap.specs import squash

if TYPE_CHECKING:
    from tooldeck.codemap.model import Payload

# kinds whose members may need a query pass of their own (see extract)
CONTAINER_KINDS = CLASS_LIKE | {"module"}
# levels from a container down to where its members' patterns start (class > body > decorated > def)
_MEMBER_DEPTH = 3
_SCOPE_DEPTH = 4  # if > else > block > decorated > def

MAX_SIGNATURE = 10_000  # a guard against generated code only: real signatures are kept whole
MAX_VALUE_SIGNATURE = 50
MAX_PREFIX = 40  # decorators / export wrappers shown before a signature
# identifier bytes kept, everything else → space: then bytes.split() yields the words (faster than a regex)
_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_NON_WORD_TO_SPACE = bytes(c if c in _WORD_BYTES else 32 for c in range(256))
_NAME_TRIM = "\"'`"
_NAME_LEAD = ":$@"
_TRAILERS = " \t:{=;,"
# a line comment inside a header (not `http://` in a default: it must follow a space, comma or bracket)
_LINE_COMMENTS = {marker: re.compile(rb"(?<=[\s,(\[{])" + re.escape(marker) + rb"[^\n]*") for marker in (b"#", b"//")}
# the same on an ASCII file's decoded text (re.ASCII: \s is then the bytes pattern's \s)
_LINE_COMMENTS_TEXT = {marker: re.compile(p.pattern.decode(), re.ASCII) for marker, p in _LINE_COMMENTS.items()}
_MARKER_TEXT = {marker: marker.decode() for marker in _LINE_COMMENTS}


# language -> pattern index -> (kind, its @definition capture name) or None (imports, scopes):
# learnt from the first match of each pattern, then kept for the process
_KINDS: dict[str, dict[int, tuple[str, str] | None]] = {}


# a definition the query found: (start byte, -end byte, pattern, kind, node, name node, body node or None);
# a tuple (not a class): one is made per match, and sorting on its first two items is a C-level key
_Def = tuple[int, int, int, str, Any, Any, Any]
_BY_POSITION = operator.itemgetter(0, 1)  # outer before inner at the same start; stable for twins
_cursor_type: Any = None  # tree_sitter.QueryCursor, imported on first use (workers import this module early)


def count_lines(data: bytes) -> int:
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def extract(language: str, data: bytes) -> Payload:
    """The codemap payload of ``data`` (source bytes in ``language``)."""
    # lazy: the parse workers run extract_rows only; model.py shapes no cached codemap (not in its key)
    from tooldeck.codemap.model import Payload, Symbol

    imports, rows, refs, lines = extract_rows(language, data)
    return Payload(imports, [Symbol(*row) for row in rows], refs, lines)


def extract_rows(language: str, data: bytes) -> tuple[list[str], list[list[Any]], str, int]:
    """``(imports, symbol rows, references, line count)``: the payload in its
    stored shape (a row is ``[name, kind, signature, line, parent, end_line,
    depth]``), so workers encode it without building :class:`Symbol` objects."""
    tree, blanked = _parse(language, data)
    query = grammars.definitions_query(language)
    spec = grammars.spec(language)
    root = tree.root_node

    defs: dict[tuple[int, int, int], _Def] = {}
    import_nodes: list[Any] = []
    kinds = _KINDS.setdefault(language, {})
    deep = _collect(query, root, spec, defs, import_nodes, kinds, data)
    # A container (class, impl, namespace...) or a conditional block (`if`,
    # `try` at module or class level) deeper than the first pass reaches gets a
    # pass of its own, so its members are listed, while function bodies (most
    # of a file's nodes) are never walked.
    done: set[int] = set()
    while deep:
        node = deep.pop()
        if node.start_byte not in done:
            done.add(node.start_byte)
            deep.extend(_collect(query, node, spec, defs, import_nodes, kinds, data))

    rows = _symbols(sorted(defs.values(), key=_BY_POSITION), data, spec)
    imports = _imports(import_nodes, data, spec)
    if blanked is not None:
        refs = _references(blanked, [])
    else:
        refs = _references(data, [(n.start_byte, n.end_byte) for n in grammars.skip_captures(language, root)])
    return imports, rows, refs, count_lines(data)


def _parse(language: str, data: bytes) -> tuple[Any, bytes | None]:
    """The tree to read the outline from and, for a language the lexer
    knows, the text blanked for references: both come from one cut of the
    file at its strings and comments. Function bodies are hollowed out of
    the parsed text (:mod:`tooldeck.codemap.hollow`,
    :mod:`tooldeck.codemap.hollow_braces`) unless the result does not parse
    as the real text would: then the real text is parsed."""
    if not lexer.has_lexer(language):
        return grammars.parse(language, data), None
    cut = lexer.pieces(language, data)
    blanked = lexer.blank(language, data, cut)
    if language == "python":
        hollowed = hollow.python(data, cut)
        if hollowed is not None and len(hollowed) == len(data):  # (the length is an invariant: a guard)
            tree = grammars.parse(language, hollowed, hollow.ranges(hollowed))
            if not tree.root_node.has_error:
                return tree, blanked
    else:
        emptied = hollow_braces.hollow(language, data, cut)
        if emptied is not None and len(emptied[0]) == len(data):
            text, openings = emptied
            tree = grammars.parse(language, text, hollow.ranges(text))
            if hollow_braces.confirmed(language, tree, openings):
                return tree, blanked
    return grammars.parse(language, data), blanked


def _collect(
    query: Any,
    node: Any,
    spec: Any,
    defs: dict[tuple[int, int, int], _Def],
    import_nodes: list[Any],
    kinds: dict[int, tuple[str, str] | None],
    src: bytes,
) -> list[Any]:
    """Run the definitions query under ``node``, starting no match deeper than
    ``spec.max_depth`` levels below it; returns the containers it found whose
    members may lie beyond that depth."""
    global _cursor_type
    if _cursor_type is None:
        from tree_sitter import QueryCursor

        _cursor_type = QueryCursor
    max_depth = spec.max_depth
    refine = spec.refine
    refine_kinds = spec.refine_kinds
    cursor = _cursor_type(query)
    cursor.set_max_start_depth(max_depth)
    deep: list[Any] = []
    defs_get = defs.get
    for pattern, caps in cursor.matches(node):
        known = kinds.get(pattern, False)
        if known is False:
            kind = next((k[11:] for k in caps if k.startswith("definition.")), None)
            known = kinds[pattern] = (kind, "definition." + kind) if kind is not None else None
        if known is None:
            scope = caps.get("scope")
            if scope is not None:
                # a block inside a function body is implementation: never searched
                if _depth(scope[0], node, spec.function_types) + _SCOPE_DEPTH > max_depth:
                    deep.append(scope[0])
                continue
            import_nodes.extend(caps.get("import", ()))
            continue
        kind, capture = known
        def_node = caps[capture][0]
        names = caps.get("name")
        bodies = caps.get("body")
        if not names:  # a bare `(node) @definition.x` pattern (cheaper to compile): use the fields
            name = def_node.child_by_field_name("name")
            if name is None:
                continue
            names = [name]
            if kind not in VALUE_KINDS:
                body = def_node.child_by_field_name("body")
                bodies = [body] if body is not None else bodies
        # one statement may define several names (`attr_reader :a, :b`): key on the name too
        name_node = names[0]
        start = def_node.start_byte
        end = def_node.end_byte
        key = (start, end, name_node.start_byte)
        seen = defs_get(key)
        if seen is not None and seen[2] <= pattern:
            continue
        body = bodies[0] if bodies else None
        if refine is not None and (refine_kinds is None or kind in refine_kinds):
            kind, body = refine(kind, def_node, name_node, body, src)
        defs[key] = (start, -end, pattern, kind, def_node, name_node, body)
        # a container whose members lie beyond the pass's depth (-100: inside a function: never searched)
        if (
            seen is None
            and body is not None
            and kind in CONTAINER_KINDS
            and _depth(def_node, node, spec.function_types) + _MEMBER_DEPTH > max_depth
        ):
            deep.append(def_node)
    return deep


def _depth(node: Any, top: Any, function_types: tuple[str, ...] = ()) -> int:
    """How many levels ``node`` lies below ``top``; -100 if a ``function_types``
    node lies between them."""
    depth = 0
    stop = top.start_byte, top.end_byte, top.type
    while node is not None and (node.start_byte, node.end_byte, node.type) != stop:
        node = node.parent
        depth += 1
        if node is not None and node.type in function_types:
            return -100
    return depth


def _symbols(defs: list[_Def], src: bytes, spec: Any) -> list[list[Any]]:
    # An ASCII file (most source files) is decoded once: its str offsets are its byte
    # offsets, so names and headers are slices of one str, not a decode each.
    text = src.decode("ascii") if src.isascii() else None
    mark = spec.wrapper_mark  # no byte of it in the file: nothing is wrapped (no `@` = no decorator)
    wrappers = spec.wrappers if spec.wrappers and (not mark or mark in src) else None
    wrapped_kinds = spec.wrapped_kinds
    out: list[list[Any]] = []
    stack: list[tuple[int, int, str, str]] = []  # (start, end byte, name, kind) of open ancestors
    bodies: set[int] = set()
    for start, neg_end, _pattern, kind, node, name_node, body in defs:
        end = -neg_end
        # pop what ended before d, and d's twin (another name of the same statement)
        while stack and (stack[-1][1] <= start or (stack[-1][0] == start and stack[-1][1] == end)):
            stack.pop()
        parent = stack[-1] if stack else None
        if parent is not None:
            if parent[3] in BODY_KINDS:
                continue  # inside a body: not part of the map
            if kind == "function" and parent[3] in CLASS_LIKE:
                kind = "method"
        body_start = 0
        if body is not None:
            body_start = body.start_byte
            if body_start in bodies:
                continue  # `typedef struct s {...} S`: the struct is the typedef, listed once
            bodies.add(body_start)
        at, to = name_node.start_byte, name_node.end_byte
        raw = text[at:to] if text is not None else src[at:to].decode("utf-8", "replace")
        name = raw if raw.isidentifier() else _clean_name(raw)  # an identifier is already clean
        if not name:
            continue
        sig = _signature(text, src, start, end, body, body_start, kind, name, spec)
        if wrappers is not None and (wrapped_kinds is None or kind in wrapped_kinds):
            sig = _wrapped(sig, node, wrappers, src)
        out.append(
            [
                name,
                kind,
                sig,
                name_node.start_point[0] + 1,
                parent[2] if parent is not None else None,
                node.end_point[0] + 1,
                len(stack),
            ]
        )
        stack.append((start, end, name, kind))
    return out


def _clean_name(name: str) -> str:
    """``"x"`` → x, ``:sym`` → sym, ``$var`` → var, ``Foo<T>`` → Foo, ``ns::Cls::m`` → m."""
    name = name.strip(_NAME_TRIM).lstrip(_NAME_LEAD).strip()
    if "<" in name:
        name = name.split("<", 1)[0].strip()
    if "::" in name:
        name = name.rsplit("::", 1)[1]
    return name


def _signature(
    text: str | None, src: bytes, start: int, end: int, body: Any, body_start: int, kind: str, name: str, spec: Any
) -> str:
    """The shown header of the definition at ``start:end`` (``text``: the
    file decoded, when it is ASCII; else each piece is decoded from ``src``)."""
    if body is not None:
        marker = spec.line_comment  # `def f(x):  # note`, `f(a, // note`: removed
        if text is not None:
            head = text[start:body_start]
            if marker and _MARKER_TEXT[marker] in head:
                head = _LINE_COMMENTS_TEXT[marker].sub("", head)
        else:
            raw = src[start:body_start]
            if marker and marker in raw:
                raw = _LINE_COMMENTS[marker].sub(b"", raw)
            head = raw.decode("utf-8", "replace")
        sig = _tidy(" ".join(head.split()).rstrip(_TRAILERS))
        body_end = body.end_byte
        if body_end < end:
            tail = src[body_end:end].strip()
            if tail and tail not in (b";", b",", b"end"):  # C `typedef struct {...} Name;`
                sig = f"{sig} {{…}} {squash(tail.decode('utf-8', 'replace')).rstrip(';')}"
        limit = MAX_SIGNATURE
    else:
        if text is not None:
            newline = text.find("\n", start, end)
            first = text[start:end] if newline < 0 else text[start:newline]
            more = newline >= 0 and not _blank(text[newline + 1 : end])
        else:
            first, nl, rest = src[start:end].decode("utf-8", "replace").partition("\n")
            more = bool(nl) and not _blank(rest)
        sig = " ".join(first.split()).rstrip(";")
        if more:
            sig = sig[:-1].rstrip() + " " + sig[-1] + "…" if sig.endswith(("{", "(", "[")) else sig + " …"
        limit = MAX_VALUE_SIGNATURE
    keyword = spec.kind_prefix.get(kind)
    if keyword:
        sig = f"{keyword} {sig}"
    if kind == "method" and spec.receivers:
        sig = _drop_receiver(sig, name, spec.receivers)
    if len(sig) > limit:
        # the cut never reaches into the name: a definition is always found by its name
        at = sig.find(name)
        keep = max(limit - 1, at + len(name) if at >= 0 else 0)
        sig = sig[:keep].rstrip() + "…" if keep < len(sig) else sig
    return sig


def _blank(s: str) -> bool:
    """Only whitespace (or nothing): what ``not s.strip()`` says, without the copy."""
    return not s or s.isspace()


def _wrapped(sig: str, node: Any, wrappers: dict[str, Any], src: bytes) -> str:
    """``sig`` behind its wrapper's prefix (decorators, ``export``...), if
    ``node``'s parent is a wrapper; the prefix is cut on its own: it must
    not crowd out the name."""
    parent = node.parent
    wrap = wrappers.get(parent.type) if parent is not None else None
    if wrap is None:
        return sig
    prefix = wrap if isinstance(wrap, str) else wrap(parent, node, src)
    if len(prefix) > MAX_PREFIX:
        prefix = prefix[: MAX_PREFIX - 1].rsplit(" ", 1)[0] + " …"
    return f"{prefix} {sig}" if prefix else sig


def _drop_receiver(sig: str, name: str, receivers: tuple[str, ...]) -> str:
    """``def get(self, key)`` → ``def get(key)``: a method's ``self``/``cls``
    says nothing a reader does not know from the indentation (``@classmethod``
    and ``@staticmethod`` stay in the decorators); a typed one (``self: T``) stays."""
    for receiver in receivers:
        head = f"{name}({receiver}"
        at = sig.find(head)
        if at < 0:
            continue
        cut = at + len(name) + 1
        rest = sig[at + len(head) :]
        if rest.startswith(", "):
            return sig[:cut] + rest[2:]
        if rest.startswith(")"):
            return sig[:cut] + rest
    return sig


def _tidy(sig: str) -> str:
    """``f( a, b, )`` (a multi-line header squashed) → ``f(a, b)``. A comma
    right before ``)`` stays: in ``bases=(object,)`` it makes the tuple."""
    if "( " in sig or " )" in sig or ", )" in sig or "[ " in sig or " ]" in sig:
        sig = sig.replace(", )", ")").replace("( ", "(").replace(" )", ")")
        sig = sig.replace(", ]", "]").replace("[ ", "[").replace(" ]", "]")
    return sig


def _imports(nodes: list[Any], src: bytes, spec: Any) -> list[str]:
    seen: dict[str, None] = {}
    for node in nodes:
        for name in spec.import_format(node, src):
            if name and len(name) <= 200:
                seen.setdefault(name, None)
    return list(seen)


def _references(src: bytes, skips: list[tuple[int, int]]) -> str:
    """Identifiers of the code outside comments and strings, sorted and
    space-separated (the stored form; a set is built only when asked for)."""
    if skips:
        skips.sort()
        parts: list[bytes] = []
        pos = 0
        for start, end in skips:
            if start > pos:
                parts.append(src[pos:start])
            if end > pos:
                pos = end
        parts.append(src[pos:])
        src = b" ".join(parts)
    words = sorted(set(src.translate(_NON_WORD_TO_SPACE).split()))
    # words with a leading digit (numbers) sort first (b"0".."9" < b"A", b"_", b"a"): skip them in one step
    return b" ".join(words[bisect.bisect_left(words, b":") :]).decode("ascii")
