"""Does anything make the chat's UI loop wait? A stall audit under a real pty.

Rule (issue 32): typing never waits on the model or a tool, no work on the
UI's event loop over 16 ms (one frame). The chat runs under a pseudo-terminal
in a child process that first wraps asyncio's callback runner: every callback
run on the UI thread's loop is timed, in CPU time of that thread
(``time.thread_time``: what the loop itself computed; waits for other
processes on a loaded machine do not count) and in wall time. The parent then
does what a person does:

1. open a 1,000-message conversation;
2. send a message; the model calls ``read_file`` on a 400 KB file, then
   streams a 6 KB markdown reply with code blocks, in small chunks, while the
   person keeps typing into the input box;
3. page up through the whole history and back to the end;
4. quit.

Prints every callback over the threshold with its name, and the distribution.
Usage: ``python bench/chat_stall.py [--threshold-ms 16]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def child(stats_file: str, argv: list[str]) -> None:
    """In the chat's process: time the UI loop's callbacks, then run ``tooldeck chat``."""
    import asyncio.events
    import atexit
    import threading

    main = threading.get_ident()
    samples: list[tuple[float, float, str, float]] = []  # (cpu, wall, what, when it began: time.monotonic)
    stacks: dict[str, int] = {}
    run = asyncio.events.Handle._run
    running: list[float] = [0.0]  # when the current UI callback started (0: none)

    def sampler() -> None:
        """Where the UI thread is while a callback runs long (every 5 ms past 10 ms)."""
        import traceback

        while True:
            time.sleep(0.005)
            began = running[0]
            if began and time.perf_counter() - began > 0.010:
                frame = sys._current_frames().get(main)
                if frame is not None:
                    tb = traceback.extract_stack(frame)
                    inner = [f"{Path(f.filename).parent.name}/{Path(f.filename).name}:{f.lineno} {f.name}"
                             for f in tb if "asyncio" not in f.filename][-5:]  # fmt: skip
                    key = " < ".join(reversed(inner))
                    stacks[key] = stacks.get(key, 0) + 1

    threading.Thread(target=sampler, daemon=True).start()
    import gc

    pauses: list[tuple[int, float, float, bool]] = []
    gc_start = [0.0, 0.0]

    def on_gc(phase: str, info: dict) -> None:  # (generation, cpu, wall, on the UI thread)
        if phase == "start":
            gc_start[:] = [time.thread_time(), time.perf_counter()]
        else:
            pauses.append((info["generation"], time.thread_time() - gc_start[0], time.perf_counter() - gc_start[1],
                           threading.get_ident() == main))  # fmt: skip

    gc.callbacks.append(on_gc)

    def timed(self):  # type: ignore[no-untyped-def]
        if threading.get_ident() != main:
            return run(self)
        c, w, began = time.thread_time(), time.perf_counter(), time.monotonic()
        running[0] = w
        try:
            return run(self)
        finally:
            running[0] = 0.0
            cpu, wall = time.thread_time() - c, time.perf_counter() - w
            if wall > 0.004:
                cb = getattr(self._callback, "__self__", None)
                coro = cb.get_coro() if hasattr(cb, "get_coro") else None
                what = getattr(coro, "__qualname__", None) or repr(self)
                frame = getattr(coro, "cr_frame", None)
                timer = frame.f_locals.get("self") if frame is not None else None
                if timer is not None and hasattr(timer, "_callback"):  # a Textual timer: name what it runs
                    what = f"timer {getattr(timer._callback, '__qualname__', timer._callback)}"
                samples.append((cpu, wall, str(what)[:160], began))
            else:
                samples.append((cpu, wall, "", began))

    asyncio.events.Handle._run = timed  # type: ignore[method-assign]

    prof = None
    if os.environ.get("CHAT_STALL_PROFILE"):
        import cProfile

        prof = cProfile.Profile()
        prof.enable()

    def save() -> None:
        Path(stats_file).write_text(json.dumps({"samples": samples, "stacks": stacks, "gc": pauses}))
        if prof is not None:
            prof.disable()
            prof.dump_stats(os.environ["CHAT_STALL_PROFILE"])

    atexit.register(save)
    sys.argv = ["tooldeck", *argv]
    from tooldeck.launch import main as tooldeck_main

    tooldeck_main()


def conversation(n: int) -> str:
    parts = ['<config model="bench-model"/>\n<tool name="read_file"/>\n']
    for i in range(n // 2):
        parts.append(f"<user>\nquestion {i}: how does part {i} work?\n</user>\n")
        body = f"Part {i} works like this.\n\n```python\ndef part_{i}(x):\n    return x * {i}\n```\n\n" + "Detail. " * 9
        parts.append(f"<assistant>\nRAW|{body}|RAW\n</assistant>\n")
    return "".join(parts)


REPLY = "".join(
    f"## Section {i}\n\nThe file defines `thing_{i}`; it is used like this:\n\n```python\nfrom big import thing_{i}\n"
    f"print(thing_{i}(42))\n```\n\n- point one about {i}\n- point two about {i}\n\n"
    for i in range(24)
)


def parent(threshold: float) -> None:
    from tests.support.openai_server import Reply, ScriptedOpenAI
    from tests.support.pty_session import PtySession

    with tempfile.TemporaryDirectory() as tmp, ScriptedOpenAI() as server:
        base = Path(tmp)
        (base / "big.txt").write_text("".join(f"line {i}: " + "data " * 14 + "\n" for i in range(5000)))
        f = base / "long.chatmd"
        f.write_text(conversation(1000))
        stats = base / "stats.json"
        env = {**os.environ, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "bench",
               "TOOLDECK_STATE_DIR": str(base / "state"), "TOOLDECK_CONFIG": str(base / "none.toml")}  # fmt: skip
        server.push(Reply.call(("read_file", {"file": "big.txt"})), Reply(text=REPLY, chunk_delay=0.004))
        load = os.getloadavg()[0]
        s = PtySession([sys.executable, __file__, "--child", str(stats), "chat", str(f)], env=env, cwd=str(base))
        phases: list[tuple[str, float, float]] = []
        try:
            t = time.monotonic()
            s.wait_for("ready")
            phases.append(("open 1,000 messages", t, time.monotonic()))
            time.sleep(1.0)  # the engine's warm-up
            t = time.monotonic()
            s.type("read big.txt and explain it\r", delay=0.02)
            s.wait_for("read_file", timeout=120)
            for ch in "typing while it streams":  # the person keeps typing
                s.type(ch, delay=0.05)
            s.wait_for("point two about 23", timeout=180)
            phases.append(("tool call + streamed reply", t, time.monotonic()))
            s.type("\x15")  # Ctrl-U: clear what was typed
            time.sleep(0.5)
            t = time.monotonic()
            for _ in range(60):
                s.type("\x1b[5~", delay=0.03)  # PageUp
            s.type("\x1b[1;5F", delay=0.05)  # Ctrl-End
            time.sleep(1.0)
            phases.append(("60 x PageUp through history", t, time.monotonic()))
            s.type("\x11")
            s.wait_exit(60)
        finally:
            s.close()
        got = json.loads(stats.read_text())
    report(got["samples"], threshold, load)
    for name, start, end in phases:
        part = [x for x in got["samples"] if start <= x[3] <= end]
        worst = max((x[0] for x in part), default=0.0) * 1000
        over = sum(1 for x in part if x[0] * 1000 > threshold)
        print(f"  phase {name:<30} {end - start:>6.1f} s  {len(part):>5} callbacks  max cpu {worst:>5.1f} ms  "
              f"> {threshold:g} ms: {over}")  # fmt: skip
    for gen in (0, 1, 2):
        ps = [p for p in got["gc"] if p[0] == gen]
        if ps:
            cpu = max(p[1] for p in ps) * 1000
            print(f"garbage collection, generation {gen}: {len(ps)} runs ({sum(p[3] for p in ps)} on the UI thread), "
                  f"max cpu {cpu:.1f} ms, total cpu {sum(p[1] for p in ps) * 1000:.0f} ms")  # fmt: skip
    print("where the UI thread was during long callbacks (5 ms samples):")
    for key, n in sorted(got["stacks"].items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {n:>4}  {key[:220]}")


def report(samples: list[list], threshold: float, load: float) -> None:
    cpu = sorted(x[0] * 1000 for x in samples)
    wall = sorted(x[1] * 1000 for x in samples)
    pct = (lambda xs, p: xs[min(len(xs) - 1, int(len(xs) * p))])  # noqa: E731
    print(f"load average {load:.1f} → {os.getloadavg()[0]:.1f}; {len(samples)} UI-loop callbacks")
    print(f"{'':<6} {'median':>8} {'p99':>8} {'p99.9':>8} {'max':>8} {'> ' + str(threshold) + ' ms':>10}")
    for name, xs in (("cpu", cpu), ("wall", wall)):
        over = sum(1 for x in xs if x > threshold)
        print(f"{name:<6} {statistics.median(xs):>6.2f}ms {pct(xs, 0.99):>6.2f}ms {pct(xs, 0.999):>6.2f}ms "
              f"{xs[-1]:>6.1f}ms {over:>10}")  # fmt: skip
    slow = sorted((x for x in samples if x[0] * 1000 > threshold), key=lambda x: -x[0])[:10]
    for c, w, what, _ in slow:
        print(f"  cpu {c * 1000:.1f} ms (wall {w * 1000:.1f} ms): {what}")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3:])
    else:
        ap = argparse.ArgumentParser()
        ap.add_argument("--threshold-ms", type=float, default=16.0)
        parent(ap.parse_args().threshold_ms)
