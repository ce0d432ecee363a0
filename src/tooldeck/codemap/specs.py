"""Per-language extraction rules that a query alone cannot express.

The definitions themselves come from ``queries/<language>.scm`` (written for
tooldeck; captures ``@definition.<kind>``, ``@name``, optional ``@body`` and
``@import``). This module holds the rest, as data: which grammar wheel to
load, which node types are comments/strings (blanked before collecting
references), which are identifiers (for ``find_references``), which parent
nodes add a prefix to a signature (``export``, ``type``, decorators), and how
an import node reads as a module name.

No tree-sitter import here: the functions receive nodes, they never build them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Node = Any  # tree_sitter.Node (not imported: this module stays import-cheap)
PrefixFn = Callable[[Node, Node, bytes], str]
RefineFn = Callable[[str, Node, Node, "Node | None", bytes], tuple[str, "Node | None"]]
ImportFn = Callable[[Node, bytes], list[str]]


def text(node: Node, src: bytes) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def squash(s: str) -> str:
    """Whitespace runs (newlines included) → one space."""
    return " ".join(s.split())


def strip_quotes(s: str) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'`":
        return s[1:-1]
    if len(s) >= 2 and s[0] == "<" and s[-1] == ">":
        return s[1:-1]
    return s


def default_import(node: Node, src: bytes) -> list[str]:
    """The captured node's text as one module name: quotes, keywords and the
    trailing ``;`` removed."""
    return [strip_quotes(squash(text(node, src)).rstrip(";").strip())]


def python_import(node: Node, src: bytes) -> list[str]:
    """``import a, b as c`` → ``a``, ``b``; ``from .m import x`` → ``.m.x``;
    ``from .m import x, y`` → ``.m.{x, y}`` (one entry: fewer tokens)."""
    module = node.child_by_field_name("module_name")
    names: list[str] = []
    for n in node.children_by_field_name("name"):
        target = n.child_by_field_name("name") if n.type == "aliased_import" else n
        names.append(text(target if target is not None else n, src))
    if module is None:
        return names
    prefix = text(module, src)
    prefix = prefix if prefix.endswith(".") else prefix + "."
    if not names:  # from m import *
        return [prefix + "*"]
    if len(names) == 1:
        return [prefix + names[0]]
    return [prefix + "{" + ", ".join(names) + "}"]


_PY_CONSTANT = re.compile(rb"_*[A-Z][A-Z0-9_]*")


def python_refine(kind: str, node: Node, name: Node, body: Node | None, src: bytes) -> tuple[str, Node | None]:
    """The kind of a Python assignment, decided here rather than by query
    predicates: ``__all__`` is an export, ``X: TypeAlias = ...`` a type,
    ``UPPER_CASE`` a constant; an annotated class attribute's value is its
    @body (the signature stops at the type)."""
    if kind == "variable":
        text = src[name.start_byte : name.end_byte]
        if text == b"__all__":
            return "export", body
        annotation = node.child_by_field_name("type")
        if annotation is not None and src[annotation.start_byte : annotation.end_byte].endswith(b"TypeAlias"):
            return "type", body
        if _PY_CONSTANT.fullmatch(text):
            return "constant", body
    elif kind == "property" and node.child_by_field_name("type") is not None:
        value = node.child_by_field_name("right")
        if value is not None:
            return kind, value
    return kind, body


def keyword_stripped(*keywords: str) -> ImportFn:
    """Import statements whose text is ``keyword path``: keep the path."""

    def fmt(node: Node, src: bytes) -> list[str]:
        s = squash(text(node, src)).rstrip(";").strip()
        for kw in keywords:
            if s.startswith(kw + " "):
                s = s[len(kw) + 1 :].strip()
        return [strip_quotes(s)]

    return fmt


def prefix_text(parent: Node, node: Node, src: bytes) -> str:
    """The wrapper's own text before the definition (``export default``)."""
    return squash(src[parent.start_byte : node.start_byte].decode("utf-8", "replace"))


def python_decorators(parent: Node, node: Node, src: bytes) -> str:
    """Decorator names only (``@property``, ``@app.route``): arguments can be long."""
    names: list[str] = []
    for child in parent.children:
        if child.type == "decorator":
            name = squash(text(child, src)).split("(", 1)[0]
            names.append(name if len(name) <= 30 else name[:29] + "…")
    return " ".join(names)


def first_binding_prefix(keyword: str) -> PrefixFn:
    """OCaml ``let``/``let rec`` + ``and`` bindings: the keyword text before the
    first binding, ``and`` before the others."""

    def fmt(parent: Node, node: Node, src: bytes) -> str:
        first = parent.named_children[0] if parent.named_child_count else None
        if first is not None and first.start_byte == node.start_byte:
            return prefix_text(parent, node, src) or keyword
        return "and"

    return fmt


def _template_prefix(parent: Node, node: Node, src: bytes) -> str:
    """``template <typename T>`` before a templated class or function."""
    params = parent.child_by_field_name("parameters")
    return "template " + squash(text(params, src)) if params is not None else "template"


@dataclass(frozen=True)
class LangSpec:
    module: str  # grammar wheel module
    function: str  # its language() function
    skip_types: tuple[str, ...]  # comments and strings
    identifier_types: tuple[str, ...]
    wrappers: dict[str, str | PrefixFn] = field(default_factory=dict)
    import_format: ImportFn = default_import
    query_name: str = ""  # queries/<query_name>.scm (default: the language name)
    # keyword shown before signatures of kinds the language writes without one
    kind_prefix: dict[str, str] = field(default_factory=dict)
    # a method's first parameter, left out of its signature (Python's self/cls)
    receivers: tuple[str, ...] = ()
    # (kind, node, name, body, src) -> (kind, body): what a query pattern cannot say cheaply
    refine: RefineFn | None = None
    # the kinds ``refine`` may change (None: every kind goes through it)
    refine_kinds: frozenset[str] | None = None
    # how deep below the root (or a container: see extract) a definition's pattern may start;
    # deeper than this is inside function bodies, which a codemap never shows
    max_depth: int = 4
    # a block the query captures as @scope (`if TYPE_CHECKING:`) below one of these is inside a body
    function_types: tuple[str, ...] = ()
    # what starts a line comment (removed from headers: `def f():  # note`)
    line_comment: bytes = b"//"
    # a byte every wrapped definition's file holds (Python's decorators: `@`): a file without
    # it has no wrapped definition, so no definition's parent is looked up
    wrapper_mark: bytes = b""
    # the kinds a wrapper may hold (None: any); others never look up their parent
    wrapped_kinds: frozenset[str] | None = None


_JS_IDS = ("identifier", "property_identifier", "shorthand_property_identifier", "private_property_identifier")
_JS_SKIP = ("comment", "string", "template_string")
_JS_WRAPPERS: dict[str, str | PrefixFn] = {"export_statement": prefix_text, "ambient_declaration": prefix_text}

SPECS: dict[str, LangSpec] = {
    "python": LangSpec(
        "tree_sitter_python",
        "language",
        ("comment", "string"),
        ("identifier",),
        {"decorated_definition": python_decorators},
        python_import,
        receivers=("self", "cls"),
        refine=python_refine,
        refine_kinds=frozenset({"variable", "property"}),
        function_types=("function_definition",),
        line_comment=b"#",
        wrapper_mark=b"@",
        wrapped_kinds=frozenset({"function", "method", "class"}),  # a decorated_definition holds these only
    ),
    "javascript": LangSpec("tree_sitter_javascript", "language", _JS_SKIP, _JS_IDS, _JS_WRAPPERS),
    "typescript": LangSpec(
        "tree_sitter_typescript",
        "language_typescript",
        _JS_SKIP,
        (*_JS_IDS, "type_identifier"),
        _JS_WRAPPERS,
    ),
    "tsx": LangSpec(
        "tree_sitter_typescript",
        "language_tsx",
        _JS_SKIP,
        (*_JS_IDS, "type_identifier"),
        _JS_WRAPPERS,
        query_name="typescript",
    ),
    "go": LangSpec(
        "tree_sitter_go",
        "language",
        ("comment", "interpreted_string_literal", "raw_string_literal"),
        ("identifier", "field_identifier", "type_identifier", "package_identifier"),
        {"type_declaration": "type", "const_declaration": "const", "var_declaration": "var"},
    ),
    "rust": LangSpec(
        "tree_sitter_rust",
        "language",
        ("line_comment", "block_comment", "string_literal", "raw_string_literal"),
        ("identifier", "field_identifier", "type_identifier"),
        import_format=keyword_stripped("pub use", "use"),
    ),
    "java": LangSpec(
        "tree_sitter_java",
        "language",
        ("line_comment", "block_comment", "string_literal"),
        ("identifier", "type_identifier"),
        import_format=keyword_stripped("import static", "import"),
    ),
    "c": LangSpec(
        "tree_sitter_c",
        "language",
        ("comment", "string_literal", "system_lib_string"),
        ("identifier", "field_identifier", "type_identifier"),
    ),
    "cpp": LangSpec(
        "tree_sitter_cpp",
        "language",
        ("comment", "string_literal", "raw_string_literal", "system_lib_string"),
        ("identifier", "field_identifier", "type_identifier", "namespace_identifier"),
        {"template_declaration": _template_prefix},
        keyword_stripped("using namespace", "using"),
    ),
    "csharp": LangSpec(
        "tree_sitter_c_sharp",
        "language",
        ("comment", "string_literal", "verbatim_string_literal", "raw_string_literal"),
        ("identifier",),
        import_format=keyword_stripped("global using", "using static", "using"),
    ),
    "ruby": LangSpec(
        "tree_sitter_ruby",
        "language",
        ("comment", "string", "heredoc_body"),
        ("identifier", "constant"),
        line_comment=b"#",
    ),
    "php": LangSpec(
        "tree_sitter_php",
        "language_php",
        ("comment", "string", "encapsed_string", "heredoc_body", "nowdoc_string"),
        ("name",),
        import_format=keyword_stripped("use function", "use const", "use"),
    ),
    "swift": LangSpec(
        "tree_sitter_swift",
        "language",
        ("comment", "multiline_comment", "line_string_literal", "multi_line_string_literal", "raw_string_literal"),
        ("simple_identifier", "type_identifier"),
    ),
    "kotlin": LangSpec(
        "tree_sitter_kotlin",
        "language",
        ("line_comment", "block_comment", "string_literal", "multiline_string_literal"),
        ("identifier",),
        import_format=keyword_stripped("import"),
    ),
    "bash": LangSpec(
        "tree_sitter_bash",
        "language",
        ("comment", "string", "raw_string", "ansi_c_string", "heredoc_body"),
        ("word", "variable_name", "command_name"),
        {"declaration_command": prefix_text},
        line_comment=b"#",
    ),
    "scala": LangSpec(
        "tree_sitter_scala",
        "language",
        ("comment", "block_comment", "string", "interpolated_string_expression"),
        ("identifier", "type_identifier"),
        import_format=keyword_stripped("import"),
    ),
    "ocaml": LangSpec(
        "tree_sitter_ocaml",
        "language_ocaml",
        ("comment", "string", "quoted_string"),
        ("value_name", "type_constructor", "module_name", "constructor_name", "field_name", "class_name"),
        {
            "value_definition": first_binding_prefix("let"),
            "type_definition": first_binding_prefix("type"),
            "module_definition": first_binding_prefix("module"),
            "class_definition": first_binding_prefix("class"),
        },
        line_comment=b"",
    ),
    "ocaml_interface": LangSpec(
        "tree_sitter_ocaml",
        "language_ocaml_interface",
        ("comment", "string", "quoted_string"),
        ("value_name", "type_constructor", "module_name", "constructor_name", "field_name"),
        {"type_definition": first_binding_prefix("type"), "module_definition": first_binding_prefix("module")},
        line_comment=b"",
    ),
}
