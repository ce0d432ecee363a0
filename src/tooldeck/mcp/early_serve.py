"""The stdio server's start-up: what loads in which order while the early
front (:mod:`tooldeck.mcp.early`) answers, then the hand-over to the SDK.

One start-up thread does, in this order (each step unlocks answers):

1. the runtime (roots, state, trust boundary) and its launch workspace
   restored (``Runtime.start_workspace``: stored folders become roots): the
   resource lists, and calls of read-only tools, whose domain is then built
   alone (:class:`~tooldeck.mcp.early_steps.Started`), after the rest of
   ``Runtime.start`` (the confinement said in the log, the settings);
2. the tools served, from the shipped declarations
   (:mod:`tooldeck.mcp.declared`): a cold ``tools/list``, without importing
   the tool domains; it waits for the resource walks asked so far, which are
   cheaper; skipped when the handshake cache holds the list and the tools'
   domains (``EarlyFront.wants_declared``);
3. the server extras (prompts, resources) and the person's single-tool
   switches: ``prompts/list`` with a prompts folder, the agent tools
   (:class:`~tooldeck.mcp.early_steps.Ready`); a call already waiting for its
   domain's tools is served first;
4. the whole catalog (a domain an early call built already is not built
   again), then the token worker, then the check of what the front answered
   from the cache or the declarations (:meth:`EarlyFront.check_answers`);
5. the SDK and the hand-over, once a line needs the SDK (anything the front
   does not answer: a call that changes files, a list with a cursor...) or the
   session has been idle for a second (a model thinking;
   :func:`~tooldeck.mcp.early_steps.sdk_idle`). A short session of reads
   ends without it: importing the SDK costs ~0.5 s of CPU, more than such a
   whole session, and earlier it would take the CPU from the catalog.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tooldeck.mcp.early import EarlyFront
from tooldeck.mcp.early_steps import Ready, Started, sdk_idle
from tooldeck.mcp.handshake_cache import HandshakeCache
from tooldeck.mcp.resources import ResourceProvider
from tooldeck.mcp.stdio import open_wire


async def sdk_wanted(front: EarlyFront, idle: float) -> None:
    """Return once a line the front leaves to the SDK was read, or the
    session has been idle for ``idle`` seconds."""
    loop = asyncio.get_running_loop()
    while not front.sdk_wanted.is_set():
        quiet = loop.time() - front.last_line
        if quiet >= idle and not front.busy:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(front.sdk_wanted.wait(), max(idle - quiet, 0.05))


@dataclass
class Plan:
    """How ``serve`` starts (handed in by the launch: mcp/ imports no host)."""

    cache: HandshakeCache | None
    prompts: bool  # a prompts folder is served
    runtime: Callable[[], Any]  # -> runtime | exit status (light: no tool model, no catalog)
    prepare: Callable[[Any], Any]  # runtime -> (runtime, extras, toolbox or None) | exit status
    start: Callable[[Any], Any]  # Runtime.start, once whichever thread asks first
    restore: Callable[[Any], Any]  # Runtime.start_workspace: what the files' lists need of the start
    build: Callable[[Any], Any]  # runtime -> Toolbox
    build_domain: Callable[[Any, str, str], Any]  # runtime, domain module, tool -> a Toolbox with that tool
    load_sdk: Callable[[], None]  # imports the SDK server
    worker: Callable[[], Any] = lambda: None  # starts the token worker
    declare: Callable[[Any], Any] = lambda rt: None  # runtime -> the tools served (declared.Declared) | None
    loaded: Callable[[], None] = lambda: None  # the start is over (the SDK loaded): the collector's thresholds back


async def serve(plan: Plan) -> int:
    """Serve stdio through the early front, then the SDK; the exit status."""
    loop = asyncio.get_running_loop()
    switch = sys.getswitchinterval()
    sys.setswitchinterval(0.001)  # the front gets the GIL within 1 ms of a request, not 5
    async with open_wire() as (readline, writer):
        front = EarlyFront(plan.cache, writer, plan.prompts)
        pump = loop.create_task(front.pump(readline))
        activity: Any = None

        async def prepare() -> tuple[Any, Any, Any] | int:
            nonlocal activity
            rt = await loop.run_in_executor(None, plan.runtime)
            if isinstance(rt, int):
                return rt
            from tooldeck.mcp.host import Activity  # lazy: after the front answers

            await loop.run_in_executor(None, plan.restore, rt)  # stored roots restored: the lists describe them
            activity = Activity(_warm_up)
            started = Started(lambda d, name: plan.build_domain(rt, d, name), activity, plan.worker)
            front.workspace(ResourceProvider(lambda: rt.workspace), started)  # before the tool model
            await front.files_settled()
            if front.wants_declared():
                front.declared(await loop.run_in_executor(None, _declare, plan, rt))
            else:  # warm: the cache says it all (a cold tools/list, which cannot come now, would wait for the catalog)
                front.declared(None)
            await loop.run_in_executor(None, plan.start, rt)  # the rest of the start
            await front.domains_settled()  # a call waiting for its domain goes before the extras
            return await loop.run_in_executor(None, plan.prepare, rt)  # type: ignore[no-any-return]

        preparing = loop.create_task(prepare())

        async def start() -> tuple[Any, Any, Any] | int:
            prepared = await preparing
            if isinstance(prepared, int):
                front.failed()
                return prepared
            from tooldeck.mcp.host import Catalog  # lazy: the core is imported by prepare

            rt, extras, box = prepared
            catalog = Catalog(box if box is not None else (lambda: plan.build(rt)))
            catalog.start()
            front.ready(Ready(extras, catalog))
            try:
                front.built(await catalog.get())
            except Exception:
                pass  # reported by the requests that need it (the SDK's answers)
            plan.worker()  # the token worker: its encoder load must not take the CPU from the catalog
            with contextlib.suppress(Exception):  # a catalog that failed: the SDK's answers report it
                await front.check_answers()
            await sdk_wanted(front, sdk_idle())
            await loop.run_in_executor(None, plan.load_sdk)
            plan.loaded()
            sys.setswitchinterval(switch)  # the loader thread is done: the front no longer races it
            return extras, catalog, activity

        work = loop.create_task(start())
        done = loop.create_task(front.finished.wait())
        await asyncio.wait({work, done}, return_when=asyncio.FIRST_COMPLETED)
        if not work.done():
            checked = await preparing  # a usage error (a missing root...) still exits 2
            if isinstance(checked, int):
                return checked
            if await front.settle():  # input ended, all answered: no SDK needed
                if front.dirty and front.cache is not None:
                    front.cache.save()
                return 0
        got = await work
        if isinstance(got, int):
            return got
        extras, catalog, activity = got
        sdk_readline = await front.handoff()
        # lazy: the SDK side (anyio, the server) only once the front hands over
        from tooldeck.mcp.transports import run_sdk_stdio

        await run_sdk_stdio(catalog, activity, extras, sdk_readline, writer, front)
        pump.cancel()
    return 0


def _declare(plan: Plan, rt: Any) -> Any:
    """The tools served from the declarations; None (the catalog answers)
    when they cannot say: never a failed start."""
    try:
        return plan.declare(rt)
    except Exception:
        import logging

        logging.getLogger("tooldeck.mcp").warning("the declared tool list failed; the catalog answers", exc_info=True)
        return None


def _warm_up() -> None:
    from tooldeck.tokens import warm_up  # lazy: the token service only when the idle warm-up runs

    warm_up()
