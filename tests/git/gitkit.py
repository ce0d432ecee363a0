"""Real temporary repositories for the git tests, made with the git CLI.

Loaded by path from the conftest of tests/git and tests/tools/git (test
folders are not packages), so both share one helper.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest


def cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="Ada Lovelace",
        GIT_AUTHOR_EMAIL="ada@example.com",
        GIT_COMMITTER_NAME="Ada Lovelace",
        GIT_COMMITTER_EMAIL="ada@example.com",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
    )
    return env


class GitCLI:
    """Drive git in one directory the way a user would."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self, *args: str, check: bool = True, author: str | None = None) -> str:
        env = cli_env()
        if author:
            env["GIT_AUTHOR_NAME"] = author
        proc = subprocess.run(
            ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false", *args],
            cwd=self.path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
        return proc.stdout

    def write(self, rel: str, text: str) -> Path:
        p = self.path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        return p

    def commit(self, message: str, files: dict[str, str] | None = None, author: str | None = None) -> str:
        for rel, text in (files or {}).items():
            self.write(rel, text)
        self("add", "-A")
        self("commit", "-q", "--allow-empty", "-m", message, author=author)
        return self.sha()

    def sha(self, rev: str = "HEAD") -> str:
        return self("rev-parse", rev).strip()


def init_repo(path: Path) -> GitCLI:
    path.mkdir(parents=True, exist_ok=True)
    g = GitCLI(path)
    g("init", "-q")
    return g


@pytest.fixture
def repo(root: Path) -> GitCLI:
    """An empty repository whose working tree is the workspace root."""
    return init_repo(root)
