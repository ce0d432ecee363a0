"""The seed's own secret pattern redacts alike from ChatMD and TOML: ``tooldeck run``
against the scripted model server (what the model receives) and ``tooldeck call``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.shell.shell_harness import needs_bwrap
from tests.support.fixtures import server  # noqa: F401
from tests.support.openai_server import Reply, ScriptedOpenAI
from tests.support.trust import write_approved

pytestmark = needs_bwrap

PATTERN = "sk-[A-Za-z0-9]{20,}"  # docs/shell.md and the seed's example: a quantifier with a comma
KEY = "sk-" + "Ab3" * 9


def test_chatmd_secret_pattern_with_a_quantifier_is_redacted(
    root: Path, state_dir: Path, server: ScriptedOpenAI  # noqa: F811
) -> None:
    (root / "key.txt").write_text(f"token={KEY}\n")
    prompt = root / "leak.chatmd"
    prompt.write_text(
        '<config model="m"/>\n'
        '<shell_access id="ro" extends="builtin:workspace-readonly@1">\n'
        f'  <secrets><secret pattern="{PATTERN}"/></secrets>\n'
        "</shell_access>\n"
        '<tool name="show_key" type="shell" mode="fixed" runtime="ro">\n'
        '  <command program="cat"><arg value="key.txt"/></command><arguments mode="none"/>\n'
        "</tool>\n"
        "<user>show the key</user>\n"
    )
    server.push(Reply.call(("show_key", {})), Reply.answer("done"))
    env = {**os.environ, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "test",
           "TOOLDECK_STATE_DIR": str(state_dir), "TOOLDECK_CONFIG": os.devnull}  # fmt: skip
    r = subprocess.run([sys.executable, "-m", "tooldeck", "run", str(prompt)], cwd=root, env=env,
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr
    seen = json.dumps(server.requests[1]["body"])
    assert "token=" in seen and "[REDACTED]" in seen
    assert KEY not in seen and KEY[:12] not in seen
    assert KEY not in prompt.read_text() and KEY not in "".join(
        p.read_text() for p in (root / ".chatmd").rglob("*") if p.is_file()
    )


def test_toml_secret_pattern_redacts_the_same(root: Path, state_dir: Path) -> None:
    (root / "key.txt").write_text(f"token={KEY}\n")
    write_approved(root, state_dir, f"""
[shell.runtimes.ro]
extends = "builtin:workspace-readonly@1"
[shell.runtimes.ro.secrets]
patterns = ['{PATTERN}']
[shell.tools.show_key]
mode = "fixed"
runtime = "ro"
command = "cat key.txt"
arguments = "none"
""")
    done = subprocess.run(
        [sys.executable, "-m", "tooldeck", "call", "show_key", "{}", "--root", str(root),
         "--state-dir", str(state_dir)],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        env={**os.environ, "TOOLDECK_STATE_DIR": str(state_dir), "TOOLDECK_CONFIG": os.devnull},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "token=[REDACTED]" in done.stdout and KEY not in done.stdout
