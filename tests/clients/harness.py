"""Run a real agent client (Codex CLI, Claude Code, Gemini CLI) against the
scripted model server, with tooldeck as its stdio MCP server.

Each client is the npm package scripts/setup.sh --dev installs into
``.cache/node`` (versions pinned there); each run gets

* a network namespace of its own with only a loopback
  (:class:`tests.clients.netns.LoopbackOnly`), where the scripted model server
  listens: an update check, telemetry or a flag fetch fails at once and
  nothing reaches the internet or the host's loopback;
* an environment built from an allow-list (:func:`client_env`), not this
  process's: PATH, a private HOME, TMPDIR and XDG folders under it, the
  locale, and what :func:`configure` adds for the client (its config home,
  the model URL and a fake key); the developer's keys, tokens and config
  locations never reach a client (tooldeck's own variables reach the MCP
  server only through the entry ``tooldeck connect`` writes);
* a private home (its config files, sessions and caches live there, never in
  the developer's), and at most :data:`BOUND` seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.clients.model_server import ScriptedModel
from tests.clients.netns import LoopbackOnly
from tests.support.require import REPO

BOUND = 30.0  # seconds a client run may take, start to exit
BIN = REPO / ".cache/node/node_modules/.bin"


def binary(client: str) -> Path:
    return BIN / client


@dataclass
class Run:
    client: str
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def tooldeck_env() -> dict[str, str]:
    """What the MCP server needs of this test process's environment (Codex passes a server only a few
    variables of its own, so they are named in the entry)."""
    keep = ("PYTHONPATH", "TOOLDECK_CONFIG", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME",
            "MCP_PROMPTS_DIR", "OPENAI_BASE_URL", "OPENAI_API_KEY", "HF_HUB_OFFLINE")  # fmt: skip
    return {k: os.environ[k] for k in keep if k in os.environ}


CLIENT_ENV = frozenset({  # every variable a client may get: these, and what configure() sets for it
    "PATH", "HOME", "TMPDIR", "LANG", "NO_COLOR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME",
    "XDG_STATE_HOME", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NO_PROXY", "no_proxy",
})  # fmt: skip


def client_env(home: Path, closed_port: int) -> dict[str, str]:
    """The allow-listed environment of a client run (nothing inherited but PATH).
    The proxy on a closed port stays as a second fence behind the namespace."""
    proxy = f"http://127.0.0.1:{closed_port}"
    for sub in ("tmp", ".config", ".cache", ".local/share", ".local/state"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TMPDIR": str(home / "tmp"),
        "LANG": "C.UTF-8", "NO_COLOR": "1", "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"), "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_STATE_HOME": str(home / ".local/state"), "HTTP_PROXY": proxy, "HTTPS_PROXY": proxy,
        "http_proxy": proxy, "https_proxy": proxy, "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
    }  # fmt: skip


def connect(client: str, root: Path, state: Path, env: dict[str, str]) -> None:
    """``tooldeck connect CLIENT ROOT --write``, as a person runs it, inside the private home:
    the test then runs the client with the config it wrote."""
    argv = [sys.executable, "-m", "tooldeck", "connect", client, str(root), "--write", "--state-dir", str(state),
            "--command", f"{sys.executable} -m tooldeck"]  # fmt: skip
    for k, v in tooldeck_env().items():
        argv += ["--env", f"{k}={v}"]
    own = {k: v for k, v in tooldeck_env().items() if k == "PYTHONPATH"}  # the checkout's tooldeck, run here
    done = subprocess.run(argv, cwd=root, env={**env, **own}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"tooldeck connect {client} failed: {done.stderr}"


def configure(client: str, model: ScriptedModel, root: Path, home: Path, env: dict[str, str]) -> list[str]:
    """The model endpoint in the client's config (written before ``tooldeck connect``, which
    must keep it), the tooldeck entry by ``tooldeck connect``; returns the command line."""
    prompt = "Look at calc.py and swap the operands of add."
    state = home / "tooldeck-state"
    if client == "codex":
        env["CODEX_HOME"] = str(home / ".codex")
        env["SCRIPTED_API_KEY"] = "scripted-key"
        (home / ".codex").mkdir()
        (home / ".codex/config.toml").write_text(
            '# the scripted model (tests/clients/model_server.py)\nmodel = "scripted-model"\n'
            'model_provider = "scripted"\n\n[model_providers.scripted]\nname = "scripted"\n'
            f'base_url = "{model.origin}/v1"\nenv_key = "SCRIPTED_API_KEY"\nwire_api = "responses"\n'
        )
        connect(client, root, state, env)
        assert 'model_provider = "scripted"' in (home / ".codex/config.toml").read_text()
        # --strict-config: every key tooldeck connect wrote is one this Codex knows
        return [str(binary("codex")), "exec", "--strict-config", "--skip-git-repo-check", "--json", "-C", str(root),
                prompt]  # fmt: skip
    if client == "claude":
        env.update(CLAUDE_CONFIG_DIR=str(home / ".claude"), ANTHROPIC_BASE_URL=model.origin,
                   ANTHROPIC_API_KEY="sk-ant-scripted", DISABLE_TELEMETRY="1", DISABLE_AUTOUPDATER="1",
                   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")  # fmt: skip
        connect(client, root, state, env)
        return [str(binary("claude")), "-p", prompt, "--output-format", "json", "--model", "claude-sonnet-4-5"]
    (home / ".gemini").mkdir()
    (home / ".gemini/settings.json").write_text(
        json.dumps(
            {"security": {"auth": {"selectedType": "gemini-api-key"}}, "privacy": {"usageStatisticsEnabled": False}}
        )
    )
    env.update(GEMINI_API_KEY="scripted-key", GOOGLE_GEMINI_BASE_URL=model.origin)
    connect(client, root, state, env)
    assert "gemini-api-key" in (home / ".gemini/settings.json").read_text()
    return [str(binary("gemini")), "-p", prompt, "--output-format", "json", "--skip-trust"]


def run_client(client: str, model: ScriptedModel, root: Path, home: Path, closed_port: int, netns: LoopbackOnly) -> Run:
    """One client session inside ``netns`` (where ``model`` listens)."""
    env = client_env(home, closed_port)
    argv = netns.wrap(configure(client, model, root, home, env))
    start = time.monotonic()
    try:
        done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=BOUND,
                              stdin=subprocess.DEVNULL)  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else exc.stderr or ""
        raise AssertionError(f"{client} ran over {BOUND:.0f} s\nstdout: {out[-2000:]}\nstderr: {err[-2000:]}") from None
    return Run(client, done.returncode, done.stdout, done.stderr, time.monotonic() - start)
