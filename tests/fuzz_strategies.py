"""Hypothesis strategies shared by the fuzz tests: random JSON, and arguments
shaped by a tool's own schema (so they get past validation and reach the
code behind it) filled with hostile values."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

HOSTILE_STRINGS = [
    "",
    " ",
    ".",
    "..",
    "../",
    "../outside/secret.txt",
    "../../../../etc/passwd",
    "/etc/passwd",
    "/",
    "~",
    "a.txt",
    "sub",
    "sub/",
    "sub/b.py",
    "sub/../../outside",
    "link_out/secret.txt",
    "x\x00y",
    "\udcff",
    "*",
    "**/*",
    "[",
    "(?P<",
    "-rf",
    "--help",
    "--output=/tmp/pwned",
    "HEAD",
    "HEAD~999",
    "a" * 300,
    "é",
    "\n",
    "\r\n",
    "$(touch pwned)",
    "`id`",
    "; rm -rf /",
    "*** Begin Patch\n*** Add File: ../outside/x\n+pwned\n*** End Patch",
    "*** Begin Patch\n*** Update File: a.txt\n@@\n-nope\n+x\n*** End Patch",
    '{"input": 1}',
    "alpha",
    "beta",
    "def f",
    "return x + 1",
    "a.txt:1",
]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
    | st.sampled_from(HOSTILE_STRINGS)
)

json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)


def _resolve(schema: Any, root: dict[str, Any]) -> Any:
    """Follow a local ``$ref`` (pydantic puts nested models under ``$defs``)."""
    seen = 0
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and seen < 10:
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            return {}
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        schema, seen = node, seen + 1
    return schema


def value_for(schema: Any, root: dict[str, Any], *, junk: bool) -> st.SearchStrategy[Any]:
    """A value for one property of the declared shape (``junk``: or of any shape)."""
    schema = _resolve(schema, root)
    if not isinstance(schema, dict):
        return json_values
    options: list[st.SearchStrategy[Any]] = []
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        if not junk:
            return st.sampled_from(schema["enum"])
        options.append(st.sampled_from(schema["enum"]))
    if "const" in schema:
        options.append(st.just(schema["const"]))
    alternatives = [schema] + [_resolve(a, root) for a in schema.get("anyOf", []) + schema.get("oneOf", [])]
    for alt in alternatives:
        if not isinstance(alt, dict):
            continue
        raw = alt.get("type")
        kinds = [raw] if isinstance(raw, str) else [k for k in raw or [] if isinstance(k, str)]
        if alt is not schema and isinstance(alt.get("enum"), list) and alt["enum"]:
            options.append(st.sampled_from(alt["enum"]))
        for kind in kinds:
            if kind == "string":
                options.append(st.sampled_from(HOSTILE_STRINGS) | st.text(max_size=60))
            elif kind == "integer":
                if junk:
                    options.append(st.integers(min_value=-5, max_value=500) | st.integers())
                else:  # within the declared bounds: past the validation
                    low, high = alt.get("minimum", alt.get("exclusiveMinimum", -5)), alt.get("maximum", 10**6)
                    options.append(st.integers(min_value=int(low), max_value=max(int(low), min(int(high), 500))))
            elif kind == "number":
                options.append(st.floats(allow_nan=False, allow_infinity=False))
            elif kind == "boolean":
                options.append(st.booleans())
            elif kind == "array":
                items = alt.get("items")
                inner = value_for(items, root, junk=False) if isinstance(items, dict) else scalars
                options.append(st.lists(inner, max_size=3))
            elif kind == "object":
                options.append(object_for(alt, root, junk=junk))
            elif kind == "null":
                options.append(st.none())
    if junk or not options:
        options.append(json_values)
    return st.one_of(options)


def object_for(schema: dict[str, Any], root: dict[str, Any], *, junk: bool) -> st.SearchStrategy[Any]:
    props = schema.get("properties")
    if not isinstance(props, dict) or not props:
        return st.dictionaries(st.sampled_from(["search", "replace", "all", "path", "x"]), scalars, max_size=3)
    required = [r for r in schema.get("required", []) if r in props]
    return st.fixed_dictionaries(
        {name: value_for(props[name], root, junk=junk) for name in required},
        optional={name: value_for(sub, root, junk=junk) for name, sub in props.items() if name not in required},
    )


def shaped_arguments(parameters: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Objects of the tool's own shape with hostile values: they get past the
    validation and reach the code behind it."""
    params = parameters if isinstance(parameters, dict) else {}
    props = params.get("properties") if isinstance(params.get("properties"), dict) else {}
    return object_for(params, params, junk=False) if props else st.just({})


def hostile_arguments(parameters: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Junk fields, random objects, or not an object at all."""
    params = parameters if isinstance(parameters, dict) else {}
    props = params.get("properties") if isinstance(params.get("properties"), dict) else {}
    dirty = object_for(params, params, junk=True) if props else st.just({})
    names = st.sampled_from(sorted(props)) if props else st.just("x")
    random_object = st.dictionaries(st.text(max_size=12) | names, json_values, max_size=5)
    not_object = st.lists(json_values, max_size=3) | scalars
    return st.one_of(dirty, random_object, not_object)


PATCH_LINES = [
    "*** Begin Patch",
    "*** End Patch",
    "*** Add File: new.txt",
    "*** Add File: ../outside/pwned.txt",
    "*** Add File: link_out/pwned.txt",
    "*** Update File: a.txt",
    "*** Update File: sub/b.py",
    "*** Update File: missing.txt",
    "*** Delete File: a.txt",
    "*** Delete File: ../outside/secret.txt",
    "*** Move to: sub/moved.txt",
    "*** Move to: ../outside/moved.txt",
    "@@",
    "@@ def f(x):",
    "-alpha",
    "+gamma",
    " beta",
    "-    return x + 1",
    "+    return x + 2",
    "*** End of File",
    "+",
    "-",
    "random text",
]


def raw_text_arguments() -> st.SearchStrategy[Any]:
    """Raw input for a custom tool (apply_patch): patch-like line soup, plain
    text, or the ``{"input": ...}`` wrapper MCP clients send."""
    soup = st.lists(st.sampled_from(PATCH_LINES), min_size=1, max_size=12).map("\n".join)
    framed = soup.map(lambda body: f"*** Begin Patch\n{body}\n*** End Patch")
    text = st.one_of(framed, framed, soup, st.text(max_size=80))
    return st.one_of(text, text.map(lambda t: {"input": t}))
