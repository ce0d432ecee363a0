"""Run a real agent client (Codex CLI, Claude Code, Gemini CLI) against the
scripted model server, with tooldeck as its stdio MCP server.

Each client is the npm package scripts/setup.sh --dev installs into
``.cache/node``; each run gets a private home (its config files, sessions and
caches live there, never in the developer's), a proxy on a closed loopback
port for anything but 127.0.0.1 (a client's update check or telemetry is
refused at once instead of reaching the internet), and at most
:data:`BOUND` seconds.
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


def client_env(home: Path, closed_port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    proxy = f"http://127.0.0.1:{closed_port}"
    env.update(
        HOME=str(home), HTTP_PROXY=proxy, HTTPS_PROXY=proxy, http_proxy=proxy, https_proxy=proxy,
        NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost", NO_COLOR="1",
    )  # fmt: skip
    return env


def connect(client: str, root: Path, state: Path, env: dict[str, str]) -> None:
    """``tooldeck connect CLIENT ROOT --write``, as a person runs it, inside the private home:
    the test then runs the client with the config it wrote."""
    argv = [sys.executable, "-m", "tooldeck", "connect", client, str(root), "--write", "--state-dir", str(state),
            "--command", f"{sys.executable} -m tooldeck"]  # fmt: skip
    for k, v in tooldeck_env().items():
        argv += ["--env", f"{k}={v}"]
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=60)
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


def run_client(client: str, model: ScriptedModel, root: Path, home: Path, closed_port: int) -> Run:
    env = client_env(home, closed_port)
    argv = configure(client, model, root, home, env)
    start = time.monotonic()
    try:
        done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=BOUND,
                              stdin=subprocess.DEVNULL)  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else exc.stderr or ""
        raise AssertionError(f"{client} ran over {BOUND:.0f} s\nstdout: {out[-2000:]}\nstderr: {err[-2000:]}") from None
    return Run(client, done.returncode, done.stdout, done.stderr, time.monotonic() - start)
