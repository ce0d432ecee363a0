"""An agent run sees the images its tools return (``tooldeck call agent_run`` against the scripted server)."""

from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

from tests.chatmd.test_run_parity import png
from tests.support.openai_server import Reply, ScriptedOpenAI


def test_an_agent_run_sends_the_image_its_tool_returned(model_env: ScriptedOpenAI, root: Path, state_dir: Path) -> None:
    (root / "shot.png").write_bytes(png(4, 4))
    model_env.push(Reply.call(("import_image", {"path": "shot.png"})), Reply.answer("a grey screenshot"))
    out = subprocess.run(
        [sys.executable, "-m", "tooldeck", "call", "agent_run", '{"op": "start", "message": "look at shot.png"}',
         "--root", str(root), "--state-dir", str(state_dir)],
        capture_output=True, text=True, timeout=90,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "a grey screenshot" in out.stdout
    second = model_env.requests[1]["body"]["messages"]
    uri = "data:image/png;base64," + base64.b64encode(png(4, 4)).decode()
    sent = [p["image_url"]["url"] for m in second if m["role"] == "user" and isinstance(m["content"], list)
            for p in m["content"] if p["type"] == "image_url"]  # fmt: skip
    assert sent == [uri]
