"""`tooldeck call` parses its common lines without typer (tooldeck.cli_call):
each line it takes must give exactly what the typer command passes on, and
every other line goes to typer, which owns the usage messages."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tooldeck.cli as cli
from tooldeck.cli_call import CallArgs, parse_call

TAKEN = [
    ["read_file", '{"path": "a.txt"}'],
    ["read_file", '{"path": "a.txt"}', "--root", "/tmp/r1", "--root=/tmp/r2/"],
    ["--root", "./x", "git", "@args.json", "--state-dir", "/tmp/st", "--allow-root", "/tmp/p"],
    ["read_file", "@-"],
    ["read_file", "-"],
    ["file_search"],
]
DEFERRED = [
    ["--help"],
    ["read_file", "--help"],
    [],
    ["read_file", "{}", "extra"],
    ["read_file", "--", "{}"],
    ["read_file", "{}", "--root"],
    ["read_file", "{}", "--unknown", "1"],
    ["read_file", "{}", "-r", "x"],
]


def typer_args(argv: list[str], env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> CallArgs:
    seen: list[CallArgs] = []
    monkeypatch.setattr(cli, "run_call", lambda args: seen.append(args) or 0)  # records what the command hands on
    result = CliRunner().invoke(cli.app, ["call", *argv], env=env)
    assert result.exit_code == 0, result.output
    assert len(seen) == 1
    return seen[0]


@pytest.mark.parametrize("argv", TAKEN, ids=" ".join)
@pytest.mark.parametrize("state_env", [None, "/tmp/from-env"])
def test_a_line_taken_without_typer_is_read_as_typer_reads_it(
    argv: list[str], state_env: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {} if state_env is None else {"TOOLDECK_STATE_DIR": state_env}
    monkeypatch.delenv("TOOLDECK_STATE_DIR", raising=False)
    ours = parse_call(argv, env)
    assert ours is not None
    assert ours == typer_args(argv, env, monkeypatch)


@pytest.mark.parametrize("argv", DEFERRED, ids=lambda a: " ".join(a) or "(none)")
def test_other_lines_go_to_typer(argv: list[str]) -> None:
    assert parse_call(argv, {}) is None


def test_the_entry_point_runs_a_call_without_importing_typer(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    probe = (
        "import sys; from tooldeck.launch import main\n"
        "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
        "sys.stderr.write('typer loaded' if 'typer' in sys.modules else 'no typer'); sys.exit(code)\n"
    )
    args = ["call", "read_file", '{"path": "a.txt"}', "--root", str(tmp_path), "--state-dir", str(tmp_path / "st")]
    done = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "hello" in done.stdout and done.stderr.endswith("no typer")
