"""Which tools of the catalog are served, decided by name: the profiles, the
ChatMD aliases and the person's single-tool switches.

Standard library only: the stdio server decides what ``tools/list`` serves
from these before any tool domain (or pydantic) is imported
(:mod:`tooldeck.mcp.declared`); :mod:`tooldeck.catalog` applies the same
rules to the tools it builds. Anything with a ``name`` can be selected.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar


class _Named(Protocol):
    @property
    def name(self) -> str: ...


N = TypeVar("N", bound=_Named)

# ChatMD declaration name -> model-visible tool name (seed 000).
ALIASES: dict[str, str] = {"read_dir": "read_directory", "get_contents": "read_file"}

PROFILES: dict[str, tuple[str, ...] | None] = {
    "full": None,
    "core": (
        "read_file",
        "read_directory",
        "get_file_tree",
        "file_search",
        "get_code_structure",
        "apply_patch",
        "apply_edits",
        "file_actions",
    ),
    "read-only": (
        "read_file",
        "read_directory",
        "get_file_tree",
        "file_search",
        "get_code_structure",
        "find_symbol",
        "find_references",
        "markdown_search",
        "query_vector_db",
        "pydoc_search",
    ),
}


def canonical_name(name: str) -> str:
    return ALIASES.get(name, name)


def select_profile(tools: list[N], profile: str | None) -> list[N]:
    """The tools of ``profile`` (None or ``full``: all); ValueError for an unknown profile."""
    if profile is None or profile == "full":
        return tools
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    allowed = PROFILES[profile]
    return [t for t in tools if allowed is None or t.name in allowed]


@dataclass(frozen=True)
class ToolSwitches:
    """Single tools switched on or off by the person (RepoPrompt's per-tool
    MCP settings, Serena's ``excluded_tools``).

    ``enabled`` (``serve --tools a,b``, ``[tools] enabled`` in the person's
    own config): the tools served, instead of the whole catalog, or beside
    the tools of an explicit ``--profile``. ``disabled`` (``--exclude-tools``,
    ``[tools] disabled`` in the user config or in a project's
    ``.tooldeck.toml``, which may only narrow: :mod:`tooldeck.config_authority`)
    is taken out of whatever is served, and out of the catalog agent sessions
    run with. Names are the model-visible ones (ChatMD aliases accepted)."""

    enabled: tuple[str, ...] | None = None
    disabled: tuple[str, ...] = ()

    def over(self, base: ToolSwitches) -> ToolSwitches:
        """These switches (the command line) over ``base`` (the config files):
        an ``enabled`` list replaces the base's; disabled tools add up."""
        enabled = self.enabled if self.enabled is not None else base.enabled
        return ToolSwitches(enabled, tuple(dict.fromkeys((*base.disabled, *self.disabled))))

    def unknown(self, known: Iterable[str]) -> list[str]:
        """Names that are no tool, each with the nearest tool name when there is one."""
        import difflib  # only for a name that is no tool

        names = set(known)
        out = []
        for name in (*(self.enabled or ()), *self.disabled):
            name = canonical_name(name)
            if name not in names:
                near = difflib.get_close_matches(name, sorted(names), n=1)
                out.append(f"{name!r}" + (f" (did you mean {near[0]!r}?)" if near else ""))
        return out

    def apply(self, tools: list[N], chosen: list[N], profile: str | None) -> list[N]:
        """``chosen`` (the profile's tools out of ``tools``) switched."""
        keep = {t.name for t in chosen}
        if self.enabled is not None:
            wanted = {canonical_name(n) for n in self.enabled}
            keep = (keep | wanted) if profile is not None else wanted
        keep -= {canonical_name(n) for n in self.disabled}
        return [t for t in tools if t.name in keep]

    @classmethod
    def from_config(cls, section: Mapping[str, Any]) -> ToolSwitches:
        """From a ``[tools]`` table: a list of names, or one comma-separated string."""

        def names(value: Any) -> tuple[str, ...]:
            if isinstance(value, str):
                value = value.split(",")
            if not isinstance(value, list):
                raise ValueError(f"[tools]: expected a list of tool names, got {value!r}")
            return tuple(str(v).strip() for v in value if str(v).strip())

        enabled = names(section["enabled"]) if "enabled" in section else None
        return cls(enabled, names(section["disabled"]) if "disabled" in section else ())

    @classmethod
    def parse(cls, enabled: str | None, disabled: str | None) -> ToolSwitches:
        """From ``--tools a,b`` and ``--exclude-tools c`` (None: not given)."""
        split = lambda v: tuple(n.strip() for n in v.split(",") if n.strip())  # noqa: E731
        return cls(split(enabled) if enabled is not None else None, split(disabled) if disabled else ())
