"""The declarations of a ChatMD file that need authority, as :class:`~tooldeck.chatmd.grants.Ask`s.

One builder per kind, used where the declaration is honoured (the loader
calls :meth:`Grants.require` with it just before acting) and by
:func:`asks_of`, which lists a file's asks without acting on any (the MCP
prompts folder names them once at start-up). Keys hold no position (see
:func:`~tooldeck.chatmd.grants.canonical`): a key names the declaration, or
for a read the real path read, so a transcript record survives new messages
and a link swapped under a recorded path is a new key.
"""

from __future__ import annotations

import os
from pathlib import Path

from tooldeck.authority import Notice
from tooldeck.chatmd.grants import Ask, Grants, WorkspaceSource, canonical
from tooldeck.chatmd.paths import PathVars
from tooldeck.markup.element import ChatmdError, Element
from tooldeck.markup.parser import parse

MESSAGE_TAGS = ("system", "developer", "user", "assistant", "msg", "tool_call", "tool_response", "reasoning")
DEFAULT_SHELL_RUNTIME = "builtin:workspace-readonly@1"


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def mcp(el: Element) -> Ask:
    spec = (el.get("mcp_server") or "").strip()
    if spec.startswith("stdio:"):
        what = f"a stdio MCP server (runs `{_short(spec[6:].strip())}` on this machine, outside the sandbox)"
    else:
        what = f"an MCP server at {_short(spec)!r} (tooldeck connects to it)"
    secrets = [v for k in ("client_id_env", "client_secret_env") if (v := el.get(k))]
    if secrets:
        what += " with the value of " + " and ".join(f"${s}" for s in secrets)
    return Ask(el, "mcp:" + canonical(el), what)


def read_root(tool: Element, read: Element, real: str) -> Ask:
    name = tool.get("name") or "?"
    return Ask(read, "tool:" + canonical(tool), f"a root {real} (outside the workspace roots) for the tool `{name}`")


def path(el: Element, attr: str, real: str) -> Ask:
    """``<doc src>``, ``<img src>``, ``<import src>``, ``agent=``, ``<script path>`` outside the roots."""
    value = el.get(attr) or ""
    return Ask(
        el, f"{el.tag}.{attr}:{real}", f"<{el.tag} {attr}={_short(value)!r}>, which reads {real} (outside the roots)"
    )


def doc_key(real: str | os.PathLike[str]) -> str:
    """The key of a ``<doc src>`` read of ``real`` (the runner records the payloads it writes)."""
    return f"doc.src:{os.fspath(real)}"


def runtime(el: Element, widening: list[str]) -> Ask:
    rid = el.get("id") or "?"
    return Ask(el, "shell_access:" + canonical(el), f"the shell runtime `{rid}`, which {'; '.join(widening)}")


def shell_tool(el: Element, rid: str) -> Ask:
    name = el.get("name") or "?"
    return Ask(el, "tool:" + canonical(el), f"the shell tool `{name}` on the runtime `{rid}`, which needs authority")


# paths as the loader resolves them ------------------------------------------------
def source_dir(el: Element, vars: PathVars | None = None) -> Path:
    if el.pos.file is not None:
        return el.pos.file.parent
    return vars.prompt_dir if vars is not None else Path.cwd()


def local_src(el: Element, attr: str = "src") -> Path:
    """``src`` of ``<doc>``/``<img>``/``<import>``, relative to the file it is written in."""
    src = el.get(attr)
    if not src:
        raise ChatmdError(el.pos, f'<{el.tag}> needs {attr}="..."')
    return (source_dir(el) / Path(os.path.expanduser(src))).absolute()


def agent_path(el: Element, vars: PathVars) -> Path:
    """``agent="..."`` relative to the prompt directory (``${...}`` expanded)."""
    src = el.get("agent") or ""
    p = Path(os.path.expanduser(src)) if "${" not in src else vars.expand(src, el)
    return p if p.is_absolute() else vars.prompt_dir / p


# listing without acting ------------------------------------------------------------
def asks_of(elements: list[Element], grants: Grants, vars: PathVars, roots: list[str]) -> list[Ask]:
    """Every ask of ``elements`` (one file's top level) that can be told without
    running anything; a declaration too broken to tell is left to the loader."""
    out: list[Ask] = []
    runtimes: dict[str, object] = {}
    widened: set[str] = set()
    for el in elements:
        try:
            if el.tag == "import" and el.get("src"):
                out += _outside(grants, el, "src", local_src(el))
            elif el.tag == "shell_access":
                out += _runtime_asks(el, roots, runtimes, widened)
            elif el.tag == "tool":
                out += _tool_asks(el, grants, vars, widened)
            elif el.tag in MESSAGE_TAGS:
                out += _inline_asks(el, grants)
        except (ChatmdError, OSError, ValueError):
            continue
    return out


def _outside(grants: Grants, el: Element, attr: str, target: Path) -> list[Ask]:
    return [] if grants.inside(target) is not None else [path(el, attr, os.path.realpath(target))]


def _inline_asks(el: Element, grants: Grants) -> list[Ask]:
    out: list[Ask] = []
    for child in el.elements():
        if child.tag in ("doc", "img") and child.get("src") and "://" not in (child.get("src") or ""):
            out += _outside(grants, child, "src", local_src(child))
        out += _inline_asks(child, grants)
    return out


def _tool_asks(el: Element, grants: Grants, vars: PathVars, widened: set[str]) -> list[Ask]:
    if el.has("mcp_server"):
        return [mcp(el)]
    if el.get("agent"):
        return _outside(grants, el, "agent", agent_path(el, vars))
    if el.get("type") == "shell" or el.has("command"):
        rid = el.get("runtime") or DEFAULT_SHELL_RUNTIME
        out = [shell_tool(el, rid)] if rid in widened else []
        for script in el.elements("script"):
            if script.get("path"):
                out += _outside(grants, script, "path", source_dir(el, vars) / script.get("path", ""))
        return out
    out = []
    for read in el.elements("read"):
        if read.get("path"):
            real = os.path.realpath(vars.expand(read.get("path", ""), read))
            if grants.root_of(real) is None:
                out.append(read_root(el, read, real))
    return out


def _runtime_asks(el: Element, roots: list[str], known: dict[str, object], widened: set[str]) -> list[Ask]:
    # lazy: only a file declaring <shell_access> loads the shell runtime (~180 modules)
    from tooldeck.shell.chatmd_decl import runtime_from_element
    from tooldeck.shell.widening import widening  # lazy: the shell package, only for a declared shell runtime

    built = runtime_from_element(el, base_dir=source_dir(el), roots=roots, known=known)  # type: ignore[arg-type]
    known[el.get("id") or built.id] = built
    wide = widening(built, roots)
    if not wide:
        return []
    widened.add(el.get("id") or built.id)
    return [runtime(el, wide)]


def notices_for(path: Path, data: bytes, workspace: WorkspaceSource, state_dir: str | os.PathLike[str]) -> list[Notice]:
    """What the prompt file ``path`` (its bytes ``data``) asks and may not have,
    as notices (nothing is run or read): a host names them at start-up."""
    if not any(token in data for token in _ASK_TOKENS):
        return []  # nothing in it could ask (the common prompt: messages and built-ins)
    grants = Grants(workspace=workspace, state_dir=state_dir)
    ws = grants.roots()
    if ws is None:
        return []
    try:
        nodes = parse(data.decode("utf-8"), path)
    except (ChatmdError, UnicodeDecodeError):
        return []  # the loader will say what is wrong with it
    elements = [n for n in nodes if isinstance(n, Element)]
    vars = PathVars.for_prompt(path, Path(state_dir), launch_dir=Path(ws.primary.path))
    found = asks_of(elements, grants, vars, [r.path for r in ws.roots])
    if not found or grants.judge(path, data).full:
        return []
    return [Notice(str(path), a.what, a.el.pos.line) for a in found if not grants.allowed(a)]


# every ask comes from one of these (attribute and tag names are never entity-encoded)
_ASK_TOKENS = (b"mcp_server", b"shell_access", b"<read", b"<doc", b"<img", b"<import", b"agent", b"<script")
