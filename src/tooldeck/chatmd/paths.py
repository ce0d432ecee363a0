"""The path variables of ``<read path="...">`` and other declarations (seed 000).

Why each resolves where it does: authority follows the launch, not the file.
``${workspace}`` and ``${tool_dir}`` are the directory tooldeck was launched
from (moving a prompt file never widens what it may read); ``${prompt_dir}``
is the root prompt's folder; ``${source_dir}`` the folder of the file the
declaration is written in (an imported file has its own); ``${home}`` the
user's. A relative path is relative to ``${tool_dir}``.

``${session_dir}`` is the data folder of this session (the root prompt):
``<state dir>-sessions/<prompt name>-<hash of its path>``, beside the state
directory and not in it, because the state directory is outside every root
(:mod:`tooldeck.workspace.hidden`) and a ``<read>`` root inside it would show
nothing. ``${cache_dir}`` is ``$XDG_CACHE_HOME/tooldeck``. Both are created
(mode 0700) the first time a declaration uses them, as the seed implies: on a
fresh install neither exists yet.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from tooldeck.markup.element import ChatmdError, Element

_VAR_RE = re.compile(r"\$\{([A-Za-z_]+)\}")
VARIABLES = ("workspace", "tool_dir", "prompt_dir", "source_dir", "session_dir", "cache_dir", "home")


CREATED = ("session_dir", "cache_dir")  # tooldeck's own folders: made on first use


def sessions_base(state_dir: Path) -> Path:
    """Where session folders live: beside the state directory, not inside it."""
    state = Path(os.path.abspath(state_dir))
    return state.parent / f"{state.name}-sessions"


def session_dir_for(prompt: Path | None, state_dir: Path) -> Path:
    """The data folder of the session that ``prompt`` (the root prompt) is."""
    if prompt is None:
        return sessions_base(state_dir) / "default"
    real = os.path.realpath(prompt)
    tag = hashlib.sha256(os.fsencode(real)).hexdigest()[:10]
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(real).stem)[:60] or "prompt"
    return sessions_base(state_dir) / f"{stem}-{tag}"


def _create(folder: Path, name: str, el: Element) -> None:
    """Make ``folder`` (and its parents). It and its parent, the folders
    tooldeck owns, must be real folders: where they lie inside a root (serving
    ``$HOME``), the model could have planted a link there to turn the
    ``<read>`` root into any folder it likes."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise ChatmdError(el.pos, f"${{{name}}} ({folder}) cannot be created: {exc.strerror or exc}") from exc
    for own in (folder, folder.parent):
        if own.is_symlink():
            raise ChatmdError(
                el.pos, f"${{{name}}}: {own} is a symbolic link; tooldeck's own folders are never reached through one "
                "(remove the link)"
            )  # fmt: skip


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
            session_dir=session_dir_for(prompt, state_dir),
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
            value: Path = getattr(self, name)
            if name in CREATED:
                _create(value, name, el)
            return str(value)

        expanded = _VAR_RE.sub(sub, value)
        p = Path(os.path.expanduser(expanded))
        return p if p.is_absolute() else self.tool_dir / p
