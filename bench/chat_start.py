"""Start-up of ``tooldeck chat`` beside ``tooldeck run``, same file, same work.

``tooldeck chat`` runs under a real pseudo-terminal (what a person sees); the
model is the scripted OpenAI-compatible server on 127.0.0.1. For each file:

* ``run → request``: ``tooldeck run FILE`` from spawn to the model request
  arriving (parse, declarations, tools, model: everything before the call);
* ``chat first paint``: spawn to the first frame on the terminal (the input
  box's placeholder is on screen), with the CPU time the process had used by
  then (user + system, all threads: the part a loaded machine does not inflate
  as much as wall time);
* ``chat ready``: spawn to the status line saying ``ready`` (the same work as
  ``run`` before its request: the file parsed, tools built, model resolved);
* ``chat → request``: typing a message the moment it is ready, to the
  model request arriving.

The floor: a minimal Textual app (one Static) under the same pty, spawn to
its first frame: what any Textual screen costs here before tooldeck does
anything. Files: a short conversation and a 1,000-message one. Reports medians over
``--runs`` (default 5) and the load average when it ran; the lead re-measures
on a quiet machine. Usage: ``python bench/chat_start.py [--runs 5]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from goals import report  # bench/ is on sys.path when a script of it runs

from tests.support.openai_server import Reply, ScriptedOpenAI
from tests.support.pty_session import PtySession

SHORT = '<config model="bench-model"/>\n<tool name="read_file"/>\n<tool name="read_dir"/>\n<system>Be brief.</system>\n'


def long_file(n: int) -> str:
    parts = [SHORT]
    for i in range(n // 2):
        parts.append(f"<user>\nquestion {i}\n</user>\n")
        parts.append(f"<assistant>\nRAW|answer {i}: see `part_{i}`.\n\n```python\nx = {i}\n```\n|RAW\n</assistant>\n")
    return "".join(parts)


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_request(server: ScriptedOpenAI, count: int, start: float, timeout: float = 120) -> float:
    deadline = time.monotonic() + timeout
    while len(server.requests) < count:
        if time.monotonic() > deadline:
            raise TimeoutError("no model request")
        time.sleep(0.002)
    return time.monotonic() - start


def run_side(file: Path, server: ScriptedOpenAI, env: dict[str, str]) -> float:
    server.push(Reply.answer("ok"))
    before = len(server.requests)
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "tooldeck", "run", str(file)], cwd=file.parent, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    took = wait_request(server, before + 1, start)
    proc.wait(60)
    return took


def chat_side(file: Path, server: ScriptedOpenAI, env: dict[str, str]) -> tuple[float, float, float, float]:
    server.push(Reply.answer("ok"))
    before = len(server.requests)
    s = PtySession([sys.executable, "-m", "tooldeck", "chat", str(file)], env=env, cwd=str(file.parent))
    try:
        while "Enter sends" not in s.text():
            if time.monotonic() - s.started > 60:
                raise TimeoutError(s.text()[-2000:])
            time.sleep(0.001)
        cpu = cpu_seconds(s.proc.pid)
        paint = s.when("Enter sends") or 0.0
        ready = s.wait_for("ready")
        s.type("go\r", delay=0)
        request = wait_request(server, before + 1, s.started)
        s.wait_for("ok")
        s.type("\x11")
        s.wait_exit()
    finally:
        s.close()
    return paint, cpu, ready, request


FLOOR = "from textual.app import App\nfrom textual.widgets import Static\n" \
    "class M(App):\n    def compose(self):\n        yield Static('Enter sends')\nM().run()\n"


def floor_side(base: Path, env: dict[str, str]) -> tuple[float, float]:
    script = base / "floor.py"
    script.write_text(FLOOR)
    s = PtySession([sys.executable, str(script)], env=env, cwd=str(base))
    try:
        while "Enter sends" not in s.text():
            if time.monotonic() - s.started > 60:
                raise TimeoutError(s.text()[-2000:])
            time.sleep(0.001)
        cpu = cpu_seconds(s.proc.pid)
        paint = s.when("Enter sends") or 0.0
        s.type("\x11")
        s.wait_exit()
    finally:
        s.close()
    return paint, cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ScriptedOpenAI() as server:
        base = Path(tmp)
        env = {**os.environ, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "bench",
               "TOOLDECK_STATE_DIR": str(base / "state"), "TOOLDECK_CONFIG": str(base / "none.toml")}  # fmt: skip
        print(f"machine: {platform.machine()}, {os.cpu_count()} cpus, python {platform.python_version()}; "
              f"load average at start {os.getloadavg()[0]:.1f}")  # fmt: skip
        print(f"{'file':<16} {'run → request':>14} {'chat paint':>11} {'(cpu)':>7} {'chat ready':>11} "
              f"{'chat → request':>15} {'paint / run':>12}")  # fmt: skip
        floors = [floor_side(base, env) for _ in range(args.runs)]
        fp, fc = statistics.median(f[0] for f in floors), statistics.median(f[1] for f in floors)
        print(f"{'textual floor':<16} {'':>14} {fp * 1000:>8.0f} ms {fc * 1000:>4.0f} ms")
        files = (("short", SHORT + "<user>hello</user>\n"), ("1,000 messages", long_file(1000) + "<user>hi</user>\n"))
        paints: dict[str, float] = {}
        for name, text in files:
            runs, chats = [], []
            for i in range(args.runs):
                f = base / f"{name[:5]}-{i}.chatmd"
                f.write_text(text)
                runs.append(run_side(f, server, env))
                f.write_text(text)
                chats.append(chat_side(f, server, env))
            r = statistics.median(runs)
            paint, cpu, ready, req = (statistics.median(c[k] for c in chats) for k in range(4))
            paints[name] = paint
            print(f"{name:<16} {r * 1000:>11.0f} ms {paint * 1000:>8.0f} ms {cpu * 1000:>4.0f} ms "
                  f"{ready * 1000:>8.0f} ms {req * 1000:>12.0f} ms {paint / r:>11.2f}x")  # fmt: skip
        print(f"load average at end {os.getloadavg()[0]:.1f}")
    for name, paint in paints.items():  # the README's goal: first paint <= 300 ms
        report("chat_start", f"{name} file: chat launch -> first paint, ms", paint * 1000, "<=", 300, 0)


if __name__ == "__main__":
    main()
