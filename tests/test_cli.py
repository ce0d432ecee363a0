"""The CLI contract (SPEC §9), run as a subprocess: exit 0 / 1 tool error / 2 usage."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import jsonrpc

pytestmark = pytest.mark.timeout(120)


def tooldeck(
    *args: str, stdin: str | None = None, cwd: Path | None = None, state: Path
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TOOLDECK_STATE_DIR": str(state)}
    return subprocess.run(
        [sys.executable, "-m", "tooldeck", *args],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
    )


@pytest.fixture
def proj(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.py").write_text("print('hi')\n")
    (root / "README.md").write_text("# Project\n")
    state = tmp_path / "state"
    state.mkdir()
    return root, state


def test_call_success_prints_the_output(proj: tuple[Path, Path]) -> None:
    root, state = proj
    r = tooldeck("call", "read_file", '{"file": "README.md"}', "--root", str(root), state=state)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("README.md:1-1 [total_lines=1]") and "# Project" in r.stdout and r.stderr == ""


def test_call_reads_json_from_stdin_and_runs_in_the_cwd(proj: tuple[Path, Path]) -> None:
    root, state = proj
    r = tooldeck("call", "read_dir", stdin='{"path": "src"}', cwd=root, state=state)  # ChatMD alias, cwd root
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "main.py"
    r = tooldeck("call", "get_contents", stdin='{"file": "src/main.py"}', cwd=root, state=state)
    assert r.returncode == 0 and "print('hi')" in r.stdout


def test_tool_error_exits_1_with_the_error_on_stderr(proj: tuple[Path, Path]) -> None:
    root, state = proj
    r = tooldeck("call", "read_file", '{"file": "missing.txt"}', "--root", str(root), state=state)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith("error [not_found]:")
    r = tooldeck("call", "read_file", '{"file": 3}', "--root", str(root), state=state)
    assert r.returncode == 1 and "invalid_arguments" in r.stderr and "`file`" in r.stderr
    r = tooldeck(
        "call",
        "file_actions",
        '{"action": "create", "path": "../escape.txt", "content": "x"}',
        "--root",
        str(root),
        state=state,
    )
    assert r.returncode == 1 and "outside_roots" in r.stderr
    assert not (root.parent / "escape.txt").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["call", "no_such_tool", "{}"],
        ["call", "read_file", "{not json"],
        ["call", "read_file", "[1, 2]"],
        ["call", "read_file", "{}", "--root", "/definitely/not/here"],
        ["call"],
        ["serve", "--http", "127.0.0.1:notaport"],
        ["serve", "/definitely/not/here"],
        ["serve", "--profile", "nope"],
        ["serve", "--bogus"],
        ["serve", "--session-idle", "30"],  # an HTTP option over stdio would be ignored: refused
        ["serve", "--max-sessions", "4"],
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_2(proj: tuple[Path, Path], args: list[str]) -> None:
    root, state = proj
    r = tooldeck(*args, cwd=root, state=state)
    assert r.returncode == 2, (args, r.returncode, r.stdout, r.stderr)
    assert r.stdout == "" and r.stderr.strip()


def test_tools_and_cost(proj: tuple[Path, Path]) -> None:
    root, state = proj
    r = tooldeck("tools", cwd=root, state=state)
    assert r.returncode == 0, r.stderr
    names = [line.split()[0] for line in r.stdout.splitlines() if line.strip()]
    assert {
        "read_file",
        "read_directory",
        "get_file_tree",
        "file_actions",
        "append_to_file",
        "find_and_replace",
    } <= set(names)
    r = tooldeck("tools", "--cost", cwd=root, state=state)
    assert r.returncode == 0, r.stderr
    rows = {line.split()[0]: line.split() for line in r.stdout.splitlines() if line.strip()}
    costs = {name: int(parts[1]) for name, parts in rows.items() if name not in ("total", "core")}
    assert all(c > 0 for c in costs.values())
    assert int(rows["total"][1]) == sum(costs.values())
    # what every request of a client carries (issue 34): the full catalog and the core profile, side by side
    assert int(rows["total"][1]) <= 8000 and int(rows["core"][1]) <= 2500, r.stdout


def test_serve_answers_what_it_read_then_exits_at_end_of_input(proj: tuple[Path, Path]) -> None:
    """stdin a regular file, a pipe closed early, or /dev/null: the server
    answers every request it read, then exits."""
    root, state = proj
    lines = [
        jsonrpc.INIT,
        jsonrpc.INITIALIZED,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "read_file", "arguments": {"file": "README.md"}},
        },
    ]
    script = root.parent / "requests.jsonl"
    script.write_text("".join(json.dumps(m) + "\n" for m in lines))
    with open(script) as fh:
        r = subprocess.run(
            [sys.executable, "-m", "tooldeck", "serve", str(root), "--state-dir", str(state)],
            stdin=fh,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert r.returncode == 0, r.stderr
    replies = {m["id"]: m for m in map(json.loads, r.stdout.splitlines()) if "id" in m}
    assert "# Project" in replies[2]["result"]["content"][0]["text"]
    # the same through a pipe closed right after the requests (printf ... | tooldeck serve):
    # what was read is answered before the server exits
    r = subprocess.run(
        [sys.executable, "-m", "tooldeck", "serve", str(root), "--state-dir", str(state)],
        input=script.read_text(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    replies = {m["id"]: m for m in map(json.loads, r.stdout.splitlines()) if "id" in m}
    assert r.returncode == 0 and "# Project" in replies[2]["result"]["content"][0]["text"]
    r = subprocess.run(
        [sys.executable, "-m", "tooldeck", "serve", str(root), "--state-dir", str(state)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
    )
    assert r.returncode == 0 and r.stdout == b""
