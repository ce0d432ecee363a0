"""``tools/list`` without the tool domains: the catalog's declarations as data.

Building the catalog means importing every tool domain's implementation and
pydantic's models of its inputs (~0.35 s of CPU idle, over a second on a busy
machine), and a client that does not see the tools within a second or two
starts its first turn without them (issue 34). What ``tools/list`` says of a
built-in tool hardly depends on the run, so the package ships it:
``tools_manifest.json`` (read by :mod:`tooldeck.tool_manifest`), the wire form of every built-in tool (name,
description, input schema, annotations) with the domain that builds it, in
the catalog's order, generated from the live catalog (``python -m
tooldeck.mcp.declared --write``). The stdio early front serves a cold
``tools/list`` from it (:func:`declared_tools`):

* the manifest's tools with the workspace filled in: the tools that describe
  the roots (``read_file``, ``read_directory``, ``import_image``) hold
  ``{{roots}}`` in their description and ``{{root_ids}}`` as the ``root``
  enum, replaced by the runtime's roots (stored folders restored);
* the shell domain's tools from the manifest only when the config files
  declare no ``[shell]`` (the manifest holds the default ``shell`` tool);
  otherwise they are built live (``live``), as the catalog would;
* chosen by the profile and the person's single-tool switches
  (:mod:`tooldeck.profiles`: the rules the catalog applies), read with the
  config loader every host uses, so a project's ``.tooldeck.toml`` counts
  exactly as elsewhere (it may only disable tools);
* the prompt-backed agent tools are added after them by the front.

It cannot go stale unnoticed: ``tests/mcp/test_declared.py`` regenerates the
manifest and fails when the shipped file differs, and renders it for several
workspaces against the live catalog's answer; at run time the SDK's own
answer is compared with what the front sent (:class:`~tooldeck.mcp.handshake_front.Tap`)
and a difference is followed by ``notifications/tools/list_changed``.

Authority: the manifest is the installed package's data, read by path next
to this module; nothing under a root or in the state directory changes what
it says. The roots filled in come from the runtime (the person's roots and
the stored folders it restored inside the trust boundary), the rest from the
person's flags and the config files as the loader grants them.

Standard library only (and the runtime's workspace, already loaded): this
runs on the start-up path before pydantic.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tooldeck.profiles import PROFILES, ToolSwitches, select_profile
from tooldeck.tool_manifest import FORMAT as FORMAT  # re-exported: the generator writes what the loader reads
from tooldeck.tool_manifest import MANIFEST as MANIFEST
from tooldeck.tool_manifest import load as load

if TYPE_CHECKING:
    from tooldeck.workspace.roots import Workspace

ROOTS = "{{roots}}"  # in a description: Workspace.describe_roots(), one line per root
ROOT_IDS = "{{root_ids}}"  # as the `root` property's enum: the ids of the roots
SHELL = "tooldeck.tools.shell"  # its tools follow the [shell] config: from the manifest only without one


@dataclass(frozen=True)
class Declared:
    """One tool as ``tools/list`` serves it (``wire``) and the domain that builds it."""

    name: str
    domain: str
    wire: dict[str, Any]


def _root_props(schema: Any) -> Iterator[dict[str, Any]]:
    """The ``root`` property of an input schema, if it has one."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    root = props.get("root") if isinstance(props, dict) else None
    if isinstance(root, dict):
        yield root


def template(wire: dict[str, Any], workspace: Workspace) -> dict[str, Any]:
    """``wire`` (a live tool of a catalog over ``workspace``) with the
    workspace taken out: the inverse of :func:`render`."""
    out = json.loads(json.dumps(wire))
    roots = workspace.describe_roots()
    if roots and roots in out["description"]:
        if out["description"].count(roots) != 1 or ROOTS in out["description"]:
            raise ValueError(f"{out['name']}: the roots appear more than once in its description")
        out["description"] = out["description"].replace(roots, ROOTS)
    for prop in _root_props(out.get("inputSchema")):
        if prop.get("enum") == [r.id for r in workspace.roots]:
            prop["enum"] = ROOT_IDS
    return out


def render(tool: dict[str, Any], workspace: Workspace) -> dict[str, Any]:
    """A manifest tool with ``workspace`` filled in (what the live catalog says)."""
    out = json.loads(json.dumps(tool))
    if ROOTS in out["description"]:
        out["description"] = out["description"].replace(ROOTS, workspace.describe_roots(), 1)
    for prop in _root_props(out.get("inputSchema")):
        if prop.get("enum") == ROOT_IDS:
            prop["enum"] = [r.id for r in workspace.roots]
    return out


def declared_tools(
    workspace: Workspace,
    config: Mapping[str, Any],
    profile: str | None,
    switches: ToolSwitches,
    live: Callable[[str], list[dict[str, Any]]],
    entries: list[dict[str, Any]] | None = None,
) -> list[Declared] | None:
    """The catalog's tools as :func:`~tooldeck.catalog.build_toolbox` would
    serve them over ``workspace``: ``config`` is the merged config files'
    data (the ``[tools]`` and ``[shell]`` tables count), ``switches`` the
    command line's, ``live(domain)`` the wire form of a domain's tools built
    live. None when the catalog must answer (no manifest, an unknown profile
    or tool name: its usage error)."""
    entries = load() if entries is None else entries
    if entries is None or (profile is not None and profile not in PROFILES):
        return None
    tools_table, shell_table = config.get("tools") or {}, config.get("shell")
    try:
        if not isinstance(tools_table, Mapping):
            raise ValueError("[tools] is not a table")
        switches = switches.over(ToolSwitches.from_config(tools_table))
    except ValueError:
        return None  # the catalog's answer is the usage error
    every: list[Declared] = []
    done: set[str] = set()
    for entry in entries:
        domain = entry["domain"]
        if domain == SHELL and shell_table:
            if domain not in done:
                every += [Declared(t["name"], domain, t) for t in live(domain)]
        else:
            every.append(Declared(entry["tool"]["name"], domain, render(entry["tool"], workspace)))
        done.add(domain)
    if switches.unknown(d.name for d in every):
        return None
    return switches.apply(every, select_profile(every, profile), profile)


def generate() -> dict[str, Any]:
    """The manifest of the live catalog: built over two roots (one read-only,
    with a description) so that every part that follows the roots shows, with
    no user config (``TOOLDECK_CONFIG=/dev/null``) and a throwaway state."""
    import tempfile

    from tooldeck.catalog import build_tools  # lazy: generation only (a build step and a test)
    from tooldeck.mcp.wire import tool_wire  # lazy: generation only
    from tooldeck.runtime import Runtime  # lazy: generation only
    from tooldeck.workspace.roots import Workspace, make_root  # lazy: generation only

    saved = os.environ.get("TOOLDECK_CONFIG")
    os.environ["TOOLDECK_CONFIG"] = os.devnull
    try:
        with tempfile.TemporaryDirectory(prefix="tools-manifest-") as tmp:
            for name in ("alpha", "beta"):
                os.mkdir(os.path.join(tmp, name))
            ws = Workspace([
                make_root(os.path.join(tmp, "alpha")),
                make_root(os.path.join(tmp, "beta"), description="docs", read_only=True),
            ])  # fmt: skip
            rt = Runtime(ws, state_dir=os.path.join(tmp, "state")).start()
            origin: dict[str, str] = {}
            tools = build_tools(rt, origin=origin)
            return {
                "format": FORMAT,
                "tools": [{"domain": origin[t.name], "tool": template(tool_wire(t), rt.workspace)} for t in tools],
            }
    finally:
        if saved is None:
            os.environ.pop("TOOLDECK_CONFIG", None)
        else:
            os.environ["TOOLDECK_CONFIG"] = saved


def dump(manifest: dict[str, Any]) -> str:
    return json.dumps(manifest, indent=1, ensure_ascii=False, sort_keys=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m tooldeck.mcp.declared [--write | --check]``."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    text = dump(generate())
    if args == ["--write"]:
        MANIFEST.write_text(text, encoding="utf-8")
        print(f"wrote {MANIFEST}")
        return 0
    if args == ["--check"]:
        same = MANIFEST.exists() and MANIFEST.read_text(encoding="utf-8") == text
        print(f"{MANIFEST}: {'up to date' if same else 'STALE: run python -m tooldeck.mcp.declared --write'}")
        return 0 if same else 1
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
