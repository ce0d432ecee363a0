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
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.clients.model_server import ScriptedModel
from tests.support.require import REPO

BOUND = 30.0  # seconds a client run may take, start to exit
BIN = REPO / ".cache/node/node_modules/.bin"
PACKAGES = {"codex": "@openai/codex", "claude": "@anthropic-ai/claude-code", "gemini": "@google/gemini-cli"}


def binary(client: str) -> Path:
    return BIN / client


def installed(client: str) -> bool:
    return shutil.which("node") is not None and binary(client).exists()


@dataclass
class Run:
    client: str
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def serve_args(root: Path, state: Path) -> list[str]:
    """tooldeck as the client spawns it: this interpreter, the worktree's sources."""
    return [sys.executable, "-m", "tooldeck", "serve", str(root), "--state-dir", str(state)]


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
        HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"),
        XDG_CACHE_HOME=str(home / ".cache"), HTTP_PROXY=proxy, HTTPS_PROXY=proxy, http_proxy=proxy,
        https_proxy=proxy, NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost", NO_COLOR="1", CI="1",
    )  # fmt: skip
    return env


def configure(client: str, model: ScriptedModel, root: Path, home: Path, state: Path) -> tuple[list[str], dict]:
    """The command line and environment of one run, its config written under ``home``."""
    env_over: dict[str, str]
    cmd = serve_args(root, state)
    entry_env = tooldeck_env()
    prompt = "Look at calc.py and swap the operands of add."
    if client == "codex":
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True)
        (codex_home / "config.toml").write_text(
            'model = "scripted-model"\nmodel_provider = "scripted"\n\n'
            '[model_providers.scripted]\nname = "scripted"\n'
            f'base_url = "{model.origin}/v1"\nenv_key = "SCRIPTED_API_KEY"\nwire_api = "responses"\n\n'
            f"[mcp_servers.tooldeck]\ncommand = {json.dumps(cmd[0])}\nargs = {json.dumps(cmd[1:])}\n"
            'required = true\nstartup_timeout_sec = 20\ndefault_tools_approval_mode = "approve"\n\n'
            "[mcp_servers.tooldeck.env]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in entry_env.items())
        )
        env_over = {"CODEX_HOME": str(codex_home), "SCRIPTED_API_KEY": "scripted-key"}
        argv = [str(binary("codex")), "exec", "--skip-git-repo-check", "--json", "-C", str(root), prompt]
    elif client == "claude":
        config = home / "mcp.json"
        config.write_text(
            json.dumps(
                {
                    "mcpServers": {
                        "tooldeck": {
                            "type": "stdio",
                            "command": cmd[0],
                            "args": cmd[1:],
                            "env": entry_env,
                            "alwaysLoad": True,
                        }
                    }
                }
            )
        )
        env_over = {"CLAUDE_CONFIG_DIR": str(home / ".claude"), "ANTHROPIC_BASE_URL": model.origin,
                    "ANTHROPIC_API_KEY": "sk-ant-scripted", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}  # fmt: skip
        allowed = ",".join(f"mcp__tooldeck__{t}" for t in ("read_file", "get_code_structure", "file_search",
                                                            "apply_patch"))  # fmt: skip
        argv = [str(binary("claude")), "-p", prompt, "--mcp-config", str(config), "--strict-mcp-config",
                "--allowedTools", allowed, "--output-format", "json", "--model", "claude-sonnet-4-5"]  # fmt: skip
    else:
        gemini_home = home / ".gemini"
        gemini_home.mkdir(parents=True)
        (gemini_home / "settings.json").write_text(json.dumps({
            "mcpServers": {"tooldeck": {"command": cmd[0], "args": cmd[1:], "env": entry_env, "trust": True}},
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
        }))  # fmt: skip
        env_over = {"GEMINI_API_KEY": "scripted-key", "GOOGLE_GEMINI_BASE_URL": model.origin}
        argv = [str(binary("gemini")), "-p", prompt, "--output-format", "json", "--skip-trust",
                "--allowed-mcp-server-names", "tooldeck"]  # fmt: skip
    return argv, env_over


def run_client(client: str, model: ScriptedModel, root: Path, home: Path, closed_port: int) -> Run:
    state = home / "tooldeck-state"
    argv, env_over = configure(client, model, root, home, state)
    env = client_env(home, closed_port) | env_over
    start = time.monotonic()
    try:
        done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=BOUND,
                              stdin=subprocess.DEVNULL)  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else exc.stderr or ""
        raise AssertionError(f"{client} ran over {BOUND:.0f} s\nstdout: {out[-2000:]}\nstderr: {err[-2000:]}") from None
    return Run(client, done.returncode, done.stdout, done.stderr, time.monotonic() - start)
