"""In-process units of the MCP host: the idle warm-up and the lazily built catalog."""

from __future__ import annotations

import asyncio
import threading

import pytest

from tooldeck.core import Toolbox, tool
from tooldeck.mcp.server import Activity, Catalog


def test_warm_up_waits_for_an_idle_moment_and_runs_once() -> None:
    ran: list[str] = []

    async def scenario() -> None:
        warm = Activity(lambda: ran.append(threading.current_thread().name), idle=0.05)
        warm.request_started()
        await asyncio.sleep(0.12)
        assert ran == []  # a request is in flight: never while busy
        warm.request_finished()
        warm.request_started()
        warm.request_finished()
        await asyncio.sleep(0.01)
        assert ran == []  # not idle long enough yet
        await asyncio.sleep(0.2)
        assert len(ran) == 1 and ran[0] != threading.main_thread().name  # off the event loop's thread
        warm.request_started()
        warm.request_finished()
        await asyncio.sleep(0.15)
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
