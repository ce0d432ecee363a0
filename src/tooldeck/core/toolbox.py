"""Toolbox: a registry of tools and the one place calls are dispatched.

* duplicate names raise at construction;
* ``call`` decodes, runs, enforces the output budget, and never raises for a
  tool failure: it returns a :class:`ToolResult` carrying either an Output or a
  :class:`ToolError` (unexpected exceptions become ``internal_error``);
* ``call_many`` runs calls in parallel with bounded concurrency and returns the
  results in call order;
* each call may have a timeout (hosts set a default: :data:`DEFAULT_TIMEOUT`);
  it ends the call for the caller even when a worker-thread tool never looks
  at its cancellation flag (the thread is abandoned, flagged cancelled);
* each call runs on its own child :class:`Invocation`, so a timeout or a
  cancellation of one call never cancels another (nor a shared ``SILENT``).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tooldeck.core.budget import (
    CURSOR_PREFIX,
    DEFAULT_BUDGET,
    Pager,
    TokenCounter,
    enforce_budget,
    estimate_tokens,
)
from tooldeck.core.budget import paginate as _paginate
from tooldeck.core.decode import parse_arguments
from tooldeck.core.errors import ErrorCode, ToolError
from tooldeck.core.invocation import SILENT, Invocation, ToolFinished, ToolStarted
from tooldeck.core.output import Output, TextPart, valid_output, valid_text
from tooldeck.core.tool import RawArguments, Tool

log = logging.getLogger("tooldeck.toolbox")
# a cursor is only ever sent as a JSON object: a raw input that does not start like one (a patch of
# hundreds of KB) is not scanned for the cursor prefix
_OBJECT_START = re.compile(r"\s*\{")
DEFAULT_TIMEOUT = 600.0  # seconds; what hosts use when the user sets nothing (TOOLDECK_TOOL_TIMEOUT)
_ids = itertools.count(1)


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    arguments: RawArguments = None
    call_id: str | None = None


@dataclass(frozen=True, slots=True)
class ToolResult:
    call_id: str
    name: str
    output: Output | None = None
    error: ToolError | None = None

    @property
    def is_error(self) -> bool:
        return self.error is not None

    @property
    def text(self) -> str:
        if self.error is not None:
            return f"error [{self.error.code}]: {self.error.message}"
        assert self.output is not None
        return self.output.as_text()


def _map_exception(tool: str, exc: BaseException) -> ToolError:
    if isinstance(exc, ToolError):
        return exc
    if isinstance(exc, PermissionError):
        return ToolError(ErrorCode.DENIED, f"permission denied: {exc.filename or exc}")
    if isinstance(exc, FileNotFoundError):
        return ToolError(ErrorCode.NOT_FOUND, f"no such file or directory: {exc.filename or exc}")
    if isinstance(exc, UnicodeEncodeError):  # model text with a lone surrogate reached a file or a path
        return ToolError(
            ErrorCode.INVALID_ARGUMENTS,
            f"the arguments contain text that is not valid Unicode ({exc.object[exc.start : exc.end]!r} "
            "is a lone surrogate); send valid UTF-8 text",
        )
    if isinstance(exc, OSError):
        return ToolError(ErrorCode.IO_ERROR, f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": "))
    log.exception("tool %s raised", tool, exc_info=exc)
    return ToolError(
        ErrorCode.INTERNAL,
        f"tool {tool} failed unexpectedly ({type(exc).__name__}: {exc}); retry with different "
        "arguments or use another tool",
    )


class Toolbox:
    def __init__(
        self,
        tools: Iterable[Tool] = (),
        *,
        max_concurrency: int = 8,
        timeout: float | None = None,
        budget_tokens: int = DEFAULT_BUDGET,
        count_tokens: TokenCounter | None = None,
    ) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.add(t)
        self.max_concurrency = max_concurrency
        self.timeout = timeout
        self.budget_tokens = budget_tokens
        self.count_tokens: TokenCounter = count_tokens or estimate_tokens
        self.pager = Pager()
        # called after every call with (result, raw arguments, seconds); an audit log, a dashboard
        self.observers: list[Callable[[ToolResult, RawArguments, float], None]] = []

    # registry ---------------------------------------------------------------
    def add(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"duplicate tool name: {tool.name}")
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    # dispatch ---------------------------------------------------------------
    async def call(
        self,
        name: str,
        arguments: RawArguments = None,
        *,
        invocation: Invocation | None = None,
        timeout: float | None = None,
        budget_tokens: int | None = None,
        call_id: str | None = None,
    ) -> ToolResult:
        if not self.observers:
            return await self._dispatch(name, arguments, invocation, timeout, budget_tokens, call_id)
        start = time.perf_counter()
        res = await self._dispatch(name, arguments, invocation, timeout, budget_tokens, call_id)
        elapsed = time.perf_counter() - start
        for fn in list(self.observers):
            try:
                fn(res, arguments, elapsed)
            except Exception:  # an observer never breaks a call
                log.exception("toolbox observer raised; ignored")
        return res

    async def _dispatch(
        self,
        name: str,
        arguments: RawArguments,
        invocation: Invocation | None,
        timeout: float | None,
        budget_tokens: int | None,
        call_id: str | None,
    ) -> ToolResult:
        cid = call_id or f"call_{next(_ids)}"
        # one invocation per call: a timeout cancels this call only, never the caller's
        # invocation (shared ones such as SILENT, or one handed to call_many)
        inv = (invocation if invocation is not None else SILENT).child()
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(sorted(self._tools)) or "(none)"
            err = ToolError(ErrorCode.UNKNOWN_TOOL, f"no tool named {name!r}; available tools: {known}")
            return ToolResult(cid, name, error=err)
        budget = budget_tokens or self.budget_tokens
        limit = timeout if timeout is not None else self.timeout

        page = self._continue_page(tool, arguments, budget)
        if page is not None:
            return ToolResult(cid, name, **page)

        if inv.is_traced:  # the payload costs a JSON dump: only build it for an observer
            inv.emit_trace(ToolStarted(cid, name, tool.kind, _payload_text(arguments)))
        try:
            coro = tool.run(arguments, inv)
            output = await (asyncio.wait_for(coro, limit) if limit else coro)
            output = valid_output(output)
            if _text_size(output) > INLINE_BUDGET_CHARS:  # counting a big result's tokens would stall the loop
                output = await asyncio.to_thread(enforce_budget, name, output, budget, self.count_tokens, self.pager)
            else:
                output = enforce_budget(name, output, budget, self.count_tokens, self.pager)
        except asyncio.CancelledError:
            inv.cancel()
            inv.emit_trace(ToolFinished(cid, "cancelled"))
            raise
        except TimeoutError:
            inv.cancel()  # a worker thread that polls its flag stops; one that does not is abandoned
            log.warning("%s timed out after %gs; its worker thread (if any) is abandoned", name, limit)
            err = ToolError(ErrorCode.TIMEOUT, f"{name} did not finish within {limit:g}s; narrow the request and retry")
            inv.emit_trace(ToolFinished(cid, "raised", err.to_dict()))
            return ToolResult(cid, name, error=err)
        except Exception as exc:  # a tool never kills its host
            err = _map_exception(name, exc)
            err.message = valid_text(err.message)
            inv.emit_trace(ToolFinished(cid, "raised", err.to_dict()))
            return ToolResult(cid, name, error=err)
        inv.emit_trace(ToolFinished(cid, "returned", output))
        return ToolResult(cid, name, output=output)

    def _continue_page(self, tool: Tool, arguments: RawArguments, budget: int) -> dict[str, Any] | None:
        """Serve ``{"cursor": "p:..."}`` from the pager, for any tool. A custom
        tool (raw text input) continues only on an object whose one key is
        ``cursor``, which no raw input such as a patch can be."""
        if isinstance(arguments, Mapping):
            data: Mapping[str, Any] = arguments
        elif isinstance(arguments, str) and _OBJECT_START.match(arguments) and CURSOR_PREFIX in arguments:
            try:
                data = parse_arguments(arguments)
            except ToolError:
                return None
        else:
            return None
        if tool.kind == "custom" and set(data) != {"cursor"}:
            return None
        cursor = data.get("cursor")
        if not (isinstance(cursor, str) and cursor.startswith(CURSOR_PREFIX)):
            return None
        pending = self.pager.take(cursor)
        if pending is None or pending.tool != tool.name:
            # never "repeat the call": for a tool that changes files that would apply the change twice
            again = (
                "run the original call again to start over"
                if tool.annotations.read_only
                else f"do not repeat the {tool.name} call (it changes files and already ran): read the files "
                "it touched instead"
            )
            err = ToolError(
                ErrorCode.NOT_FOUND,
                f"cursor {cursor!r} is unknown, expired or already used (nothing was run); {again}",
            )
            return {"error": err}
        return {"output": _paginate(tool.name, pending, budget, self.count_tokens, self.pager)}

    async def call_many(
        self,
        calls: Iterable[ToolCall],
        *,
        invocation: Invocation | None = None,
        parallel: bool = True,
        timeout: float | None = None,
    ) -> list[ToolResult]:
        """Run ``calls`` (in parallel unless ``parallel=False``); results keep call order."""
        items = list(calls)
        if not parallel:
            return [
                await self.call(c.name, c.arguments, invocation=invocation, timeout=timeout, call_id=c.call_id)
                for c in items
            ]
        gate = asyncio.Semaphore(max(1, self.max_concurrency))

        async def one(c: ToolCall) -> ToolResult:
            async with gate:
                return await self.call(c.name, c.arguments, invocation=invocation, timeout=timeout, call_id=c.call_id)

        return list(await asyncio.gather(*(one(c) for c in items)))

    def call_sync(self, name: str, arguments: RawArguments = None, **kwargs: Any) -> ToolResult:
        """Blocking convenience for scripts and the CLI."""
        return asyncio.run(self.call(name, arguments, **kwargs))


def _payload_text(arguments: RawArguments) -> str:
    if arguments is None:
        return ""
    if isinstance(arguments, bytes):
        return arguments.decode("utf-8", "replace")
    if isinstance(arguments, str):
        return arguments
    import json

    return json.dumps(dict(arguments), ensure_ascii=False, default=str)


# Outputs up to this many characters are held to the budget on the event loop
# (a few ms of BPE at most); bigger ones are counted in a worker thread.
INLINE_BUDGET_CHARS = 16_384


def _text_size(output: Output) -> int:
    return sum(len(p.text) for p in output.parts if isinstance(p, TextPart))
