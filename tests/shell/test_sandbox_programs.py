"""Ordinary development programs keep working under ``--cap-drop ALL`` and the seccomp filter.

The filter refuses ``clone3`` (libc falls back to ``clone``) and io_uring
(libuv falls back to plain calls); these runs show the fallbacks happen: git,
python with threads, subprocesses and multiprocessing, gcc, make, node with
asynchronous file reads, ripgrep's threads, and a shell pipeline.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.shell.sandbox_kit import open_shell, py
from tests.shell.shell_harness import Shell, needs_bwrap
from tooldeck.workspace.ripgrep import find_rg

pytestmark = needs_bwrap


@pytest.fixture
def box(root: Path, state_dir: Path) -> Shell:
    return open_shell(root, state_dir)


def _ok(out: dict) -> dict:
    assert out["exit_code"] == 0, out
    return out


def test_git_reads_a_repository(box: Shell, root: Path) -> None:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q", str(root)], check=True)
    (root / "f.txt").write_text("one\n")
    subprocess.run([*git, "-C", str(root), "add", "f.txt"], check=True)
    subprocess.run([*git, "-C", str(root), "commit", "-qm", "first"], check=True)
    (root / "f.txt").write_text("two\n")
    out = _ok(box.structured("raw", {"code": "git log --oneline && git status --short && git diff --stat"}))
    assert "first" in out["stdout"] and " M f.txt" in out["stdout"] and "1 file changed" in out["stdout"]


def test_python_threads_subprocesses_and_multiprocessing(box: Shell) -> None:
    code = (
        "import concurrent.futures as cf, multiprocessing as mp, subprocess\n"
        "with cf.ThreadPoolExecutor(8) as ex:\n    print(sum(ex.map(abs, range(-100, 0))))\n"
        "print(subprocess.run(['echo', 'child'], capture_output=True, text=True).stdout.strip())\n"
        "if __name__ == '__main__':\n    with mp.Pool(2) as pool:\n        print(sum(pool.map(abs, [-1, -2, -3])))"
    )
    out = _ok(box.structured("sh", py(code)))
    assert out["stdout"].split() == ["5050", "child", "6"]


@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("make") is None, reason="gcc/make not installed")
def test_gcc_and_make_build_and_run(box: Shell, root: Path) -> None:
    (root / "hello.c").write_text('#include <stdio.h>\nint main(void){puts("hello from c");return 0;}\n')
    (root / "Makefile").write_text("hello: hello.c\n\tgcc -O1 -o hello hello.c\n")
    out = _ok(box.structured("raw", {"code": "make -s && ./hello"}))
    assert out["stdout"].strip() == "hello from c"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_reads_files_asynchronously(box: Shell, root: Path) -> None:
    (root / "data.txt").write_text("from node\n")
    code = (
        "const fs = require('fs');"
        "fs.promises.readFile('data.txt', 'utf8').then(t => fs.promises.writeFile('copy.txt', t))"
        ".then(() => console.log(fs.readFileSync('copy.txt', 'utf8').trim()));"
    )
    out = _ok(box.structured("sh", {"program": "node", "arguments": ["-e", code]}))
    assert out["stdout"].strip() == "from node"


@pytest.mark.skipif(find_rg() is None, reason="ripgrep is not installed")
def test_ripgrep_searches_with_threads(box: Shell, root: Path) -> None:
    rg = find_rg()
    assert rg is not None
    shutil.copy(rg, root / "rg")  # inside a root, so the sandbox shows it
    for i in range(50):
        (root / f"f{i}.txt").write_text("needle\n" if i % 5 == 0 else "hay\n")
    out = _ok(box.structured("sh", {"program": "./rg", "arguments": ["-j", "4", "-l", "needle", "."]}))
    assert len(out["stdout"].split()) == 10


def test_a_shell_pipeline(box: Shell) -> None:
    out = _ok(box.structured("raw", {"code": "seq 1 1000 | sort -rn | head -3 | tr '\\n' ' '"}))
    assert out["stdout"].split() == ["1000", "999", "998"]
