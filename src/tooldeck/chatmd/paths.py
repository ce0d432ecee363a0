"""The path variables of ``<read path="...">`` and other declarations (seed 000).

Why each resolves where it does: authority follows the launch, not the file.
``${workspace}`` and ``${tool_dir}`` are the directory tooldeck was launched
from (moving a prompt file never widens what it may read); ``${prompt_dir}``
is the root prompt's folder; ``${source_dir}`` the folder of the file the
declaration is written in (an imported file has its own); ``${session_dir}``
and ``${cache_dir}`` are tooldeck's own directories; ``${home}`` the user's.
A relative path is relative to ``${tool_dir}``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from tooldeck.chatmd.element import ChatmdError, Element

_VAR_RE = re.compile(r"\$\{([A-Za-z_]+)\}")
VARIABLES = ("workspace", "tool_dir", "prompt_dir", "source_dir", "session_dir", "cache_dir", "home")


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tooldeck"


@dataclass(frozen=True)
class PathVars:
    workspace: Path
    tool_dir: Path
    prompt_dir: Path
    session_dir: Path
    cache_dir: Path
    home: Path

    @classmethod
    def for_prompt(cls, prompt: Path | None, state_dir: Path, *, launch_dir: Path | None = None) -> PathVars:
        launch = (launch_dir or Path.cwd()).absolute()
        return cls(
            workspace=launch,
            tool_dir=launch,
            prompt_dir=prompt.parent if prompt is not None else launch,
            session_dir=state_dir / "sessions",
            cache_dir=default_cache_dir(),
            home=Path.home(),
        )

    def expand(self, value: str, el: Element) -> Path:
        """``value`` with its variables replaced, made absolute against ``${tool_dir}``."""
        source_dir = el.pos.file.parent if el.pos.file is not None else self.prompt_dir

        def sub(m: re.Match[str]) -> str:
            name = m.group(1)
            if name == "source_dir":
                return str(source_dir)
            if name not in VARIABLES:
                raise ChatmdError(el.pos, f"unknown path variable ${{{name}}}; known: {', '.join(VARIABLES)}")
            return str(getattr(self, name))

        expanded = _VAR_RE.sub(sub, value)
        p = Path(os.path.expanduser(expanded))
        return p if p.is_absolute() else self.tool_dir / p
