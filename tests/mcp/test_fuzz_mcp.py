"""Random arguments at every advertised tool through a real `tooldeck serve`
(stdio, the SDK's client): no internal error, no secret from outside the
root, nothing outside written, and the server keeps answering."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_strategies import hostile_arguments, raw_text_arguments, shaped_arguments
from tests.mcp.mcp_e2e import stdio_session

SECRET = "MCP-FUZZ-SECRET"


class SessionThread:
    """One server session owned by one task on a background event loop; the
    (synchronous) hypothesis test hands it calls through a queue."""

    def __init__(self, root: Path, state: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.queue: asyncio.Queue[tuple[str, dict[str, Any], concurrent.futures.Future[Any]] | None]
        self.ready: concurrent.futures.Future[list[Any]] = concurrent.futures.Future()
        self.done = asyncio.run_coroutine_threadsafe(self._serve(root, state), self.loop)
        self.tools = self.ready.result(60)

    async def _serve(self, root: Path, state: Path) -> None:
        self.queue = asyncio.Queue()
        try:
            async with stdio_session(root, state) as session:
                self.ready.set_result((await session.list_tools()).tools)
                while (item := await self.queue.get()) is not None:
                    name, args, fut = item
                    try:
                        fut.set_result(await session.call_tool(name, args))
                    except Exception as exc:
                        fut.set_exception(exc)
        except BaseException as exc:
            if not self.ready.done():
                self.ready.set_exception(exc)
            raise

    def call(self, name: str, args: dict[str, Any]) -> Any:
        fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.loop.call_soon_threadsafe(self.queue.put_nowait, (name, args, fut))
        return fut.result(60)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.queue.put_nowait, None)
        try:
            self.done.result(30)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)


def encodable(args: Any) -> bool:
    try:
        json.dumps(args, ensure_ascii=False).encode("utf-8")  # what the client can put on the wire
    except (UnicodeEncodeError, ValueError):
        return False
    return True


def outside_state(base: Path, root: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(base):
        d = Path(dirpath)
        dirnames[:] = [n for n in dirnames if d / n != root]
        for name in filenames + dirnames:
            p = d / name
            out[str(p.relative_to(base))] = p.read_bytes() if p.is_file() and not p.is_symlink() else "node"
    return out


@pytest.mark.timeout(600)
def test_random_calls_over_mcp(tmp_path: Path) -> None:
    base = tmp_path / "arena"
    root, outside, state = base / "root", base / "outside", tmp_path / "state"
    for d in (root / "sub", outside, base / "root-evil", state):
        d.mkdir(parents=True)
    (root / "a.txt").write_text("alpha\nbeta\nalpha\n")
    (root / "sub" / "b.py").write_text("def f(x):\n    return x + 1\n")
    (root / "link_out").symlink_to(outside)
    (outside / "secret.txt").write_text(SECRET + "\n")
    (base / "root-evil" / "secret.txt").write_text(SECRET + "\n")
    before = outside_state(base, root)
    server = SessionThread(root, state)
    try:
        schemas = {t.name: t.input_schema for t in server.tools}
        names = sorted(schemas)

        def args_for(name: str) -> st.SearchStrategy[tuple[str, Any]]:
            schema = schemas[name]
            if set(schema.get("properties", {})) == {"input"}:  # a custom tool (apply_patch): raw text
                shaped = raw_text_arguments().map(lambda t: t if isinstance(t, dict) else {"input": t})
            else:
                shaped = shaped_arguments(schema)
            dicts = hostile_arguments(schema).filter(lambda a: isinstance(a, dict))
            return st.tuples(st.just(name), st.one_of(shaped, shaped, dicts).filter(encodable))

        @settings(
            max_examples=12 * len(names),
            deadline=None,
            derandomize=True,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        )
        @given(call=st.sampled_from(names).flatmap(args_for))
        def one_call(call: tuple[str, dict[str, Any]]) -> None:
            name, args = call
            res = server.call(name, args)
            text = "\n".join(getattr(c, "text", "") for c in res.content)
            assert "internal_error" not in text, f"{name}({args!r}): {text}"
            assert SECRET not in text, f"{name}({args!r}) showed an outside secret"

        one_call()
        alive = server.call("read_file", {"file": "sub/b.py"})
        assert not alive.is_error and "def f" in alive.content[0].text
    finally:
        server.close()
    assert outside_state(base, root) == before
