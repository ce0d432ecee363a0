"""In-process units of the MCP host: the idle warm-up and the lazily built catalog."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from tooldeck.core import Toolbox, tool
from tooldeck.mcp.server import Activity, Catalog


def test_warm_up_waits_for_an_idle_moment_and_runs_once() -> None:
    """Order, not timing: never while a request is in flight, never sooner than
    ``idle`` after the last request finished (however late it runs on a loaded
    machine), off the event loop's thread, and once."""
    ran: list[tuple[str, float]] = []
    idle = 0.05

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        done = asyncio.Event()

        def warm_up() -> None:
            ran.append((threading.current_thread().name, time.monotonic()))
            loop.call_soon_threadsafe(done.set)

        warm = Activity(warm_up, idle=idle)
        warm.request_started()
        warm.request_finished()  # the warm-up task starts waiting
        warm.request_started()
        await asyncio.sleep(idle * 10)  # many idle checks pass while busy
        assert ran == []  # a request is in flight: never while busy
        warm.request_finished()
        finished = time.monotonic()
        await asyncio.wait_for(done.wait(), 60)
        assert len(ran) == 1 and ran[0][0] != threading.main_thread().name  # off the event loop's thread
        assert ran[0][1] - finished >= idle * 0.9  # not before an idle moment (loop clock rounding aside)
        warm.request_started()
        warm.request_finished()
        await asyncio.sleep(idle * 5)
        assert len(ran) == 1  # once

    asyncio.run(scenario())


def test_catalog_builds_once_in_a_worker_and_reports_failure() -> None:
    built: list[str] = []

    @tool
    def ping() -> str:
        "Answer pong."
        return "pong"

    def factory() -> Toolbox:
        built.append(threading.current_thread().name)
        return Toolbox([ping])

    async def scenario() -> None:
        catalog = Catalog(factory)
        catalog.start()
        boxes = await asyncio.gather(*(catalog.get() for _ in range(5)))
        assert len({id(b) for b in boxes}) == 1 and built and built[0] != threading.main_thread().name
        assert (await boxes[0].call("ping")).text == "pong"

        def broken() -> Toolbox:
            raise RuntimeError("a domain failed to build")

        bad = Catalog(broken)
        with pytest.raises(RuntimeError, match="failed to build"):
            await bad.get()
        with pytest.raises(RuntimeError):
            await bad.get()  # reported again, never an empty catalog

    asyncio.run(scenario())
    assert len(built) == 1
